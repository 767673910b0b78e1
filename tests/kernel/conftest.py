"""Fixtures for the kernel's tests: the kernel spec installed into a temporary prefix (never the user's or the
system's Jupyter), found through JUPYTER_PATH, and running kernels. Every test here is skipped when the
`jupyter` extra is not installed, and only then."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_client import STARTUP, RunningKernel, kernel_env, need_jupyter


@pytest.fixture(scope="session")
def jupyter_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`python -m gradcalc.kernel install --prefix TMP`, and JUPYTER_PATH pointing at it for this session."""
    need_jupyter()
    prefix = tmp_path_factory.mktemp("jupyter-prefix")
    subprocess.run(
        [sys.executable, "-m", "gradcalc.kernel", "install", "--prefix", str(prefix)],
        env=kernel_env(), check=True, capture_output=True, timeout=STARTUP,
    )
    path = prefix / "share" / "jupyter"
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(path), saved) if p)
    try:
        yield path
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved


@pytest.fixture(scope="module")
def shared_kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningKernel]:
    """One kernel for a test module (starting one costs seconds on a loaded machine)."""
    kernel = RunningKernel(cwd=str(tmp_path_factory.mktemp("kernel-cwd")))
    try:
        yield kernel
    finally:
        kernel.close()


@pytest.fixture
def kernel(shared_kernel: RunningKernel) -> RunningKernel:
    """The module's kernel with an empty workspace (`:reset`)."""
    assert shared_kernel.run(":reset").status == "ok"
    return shared_kernel
