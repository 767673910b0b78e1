"""The kernel under test for the export's notebooks: tests/kernel's client (on the path here) and the kernel spec
installed into a temporary prefix, found through JUPYTER_PATH (as tests/kernel/conftest.py does)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernel"))

from kernel_client import STARTUP, kernel_env, need_jupyter  # noqa: E402


@pytest.fixture(scope="session")
def jupyter_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`python -m gradcalc.kernel install --prefix TMP`, and JUPYTER_PATH pointing at it for this session."""
    need_jupyter()
    prefix = tmp_path_factory.mktemp("jupyter-prefix")
    subprocess.run([sys.executable, "-m", "gradcalc.kernel", "install", "--prefix", str(prefix)],
                   env=kernel_env(), check=True, capture_output=True, timeout=STARTUP)
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
