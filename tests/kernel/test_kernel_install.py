"""`python -m gradcalc.kernel install`: the kernel spec, where each option puts it, and that nothing of the
kernel is loaded by `import gradcalc` or the `gradcalc` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_client import STARTUP, kernel_env, need_jupyter

LOGOS = {"logo-32x32.png", "logo-64x64.png", "logo-svg.svg"}


def install(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradcalc.kernel", "install", *args], env=env or kernel_env(),
                          capture_output=True, text=True, timeout=STARTUP)


def test_the_spec_starts_this_python_with_the_kernel(jupyter_path: Path) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("gradcalc")
    assert Path(spec.resource_dir) == jupyter_path / "kernels" / "gradcalc"
    assert spec.argv == [sys.executable, "-m", "gradcalc.kernel", "-f", "{connection_file}"]
    assert (spec.display_name, spec.language, spec.interrupt_mode) == ("gradcalc", "gradcalc", "signal")
    assert LOGOS <= {p.name for p in Path(spec.resource_dir).iterdir()}
    assert json.loads((Path(spec.resource_dir) / "kernel.json").read_text())["metadata"] == {"debugger": False}


def test_user_is_the_default(tmp_path: Path) -> None:
    need_jupyter()
    env = {**kernel_env(), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    for args in ((), ("--user",)):
        done = install(*args, env=env)
        assert done.returncode == 0, done.stderr
        target = tmp_path / "data" / "kernels" / "gradcalc"
        assert f"installed the kernel spec 'gradcalc' in {target}" in done.stdout
        assert (target / "kernel.json").is_file()


def test_sys_prefix_installs_into_this_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_jupyter()
    from gradcalc.kernel import install as installer

    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert installer.main(["--sys-prefix"]) == 0
    assert (tmp_path / "share" / "jupyter" / "kernels" / "gradcalc" / "kernel.json").is_file()


def test_one_place_at_a_time() -> None:
    need_jupyter()
    done = install("--user", "--prefix", "somewhere")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_nothing_of_the_kernel_loads_at_start_up() -> None:
    probe = (
        "import sys, gradcalc, gradcalc.cli\n"
        "status = gradcalc.cli.main(['-e', 'x = 2 requires_grad; backward x ** 2; x.grad'])\n"
        "heavy = ('gradcalc.kernel', 'ipykernel', 'jupyter_client', 'zmq', 'IPython', 'nbclient', 'nbformat')\n"
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=kernel_env(), capture_output=True, text=True,
                          timeout=STARTUP, cwd=os.path.dirname(__file__))
    assert done.stdout.splitlines() == ["tensor(4.)", "0 []"], done.stderr
