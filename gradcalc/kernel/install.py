"""The kernel spec `gradcalc`, and installing it where Jupyter finds kernels.

    python -m gradcalc.kernel install [--user | --sys-prefix | --prefix DIR]

The spec starts the kernel with the Python that installed it (`sys.executable -m gradcalc.kernel -f
{connection_file}`), so a Jupyter from any environment runs gradcalc from this one. Without an option it
goes into the user's Jupyter directory (`--user`), which every Jupyter of that user reads; `--sys-prefix`
puts it in this environment (a virtual environment's Jupyter finds it there and it leaves with the
environment), `--prefix DIR` under DIR/share/jupyter/kernels (for packaging, or a test's temporary
directory that `JUPYTER_PATH=DIR/share/jupyter` then points at).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gradcalc import __version__

NAME = "gradcalc"
DISPLAY_NAME = "gradcalc"
# The kernel's language_info (its kernel_info reply), which a notebook's metadata repeats (gradcalc/export)
LANGUAGE_INFO = {
    "name": "gradcalc",
    "version": __version__,
    "mimetype": "text/x-gradcalc",
    "file_extension": ".gc",
    "pygments_lexer": "gradcalc",  # the REPL's lexer, registered with Pygments (pyproject.toml)
    "codemirror_mode": "python",  # the closest editor mode: comments, strings, blocks and keywords read alike
}
RESOURCES = Path(__file__).with_name("resources")
LOGOS = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


def kernel_json(python: str | None = None) -> dict[str, object]:
    """The contents of kernel.json: how a Jupyter client starts and interrupts the kernel."""
    return {
        "argv": [python or sys.executable, "-m", "gradcalc.kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "gradcalc",
        "interrupt_mode": "signal",  # ipykernel turns SIGINT into KeyboardInterrupt in the running cell
        "metadata": {"debugger": False},  # the language has no Python debugger to offer
    }


def write_spec(directory: str | Path, python: str | None = None) -> Path:
    """Write the kernel spec (kernel.json and the logos) into `directory`, made if missing; returns it."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    (target / "kernel.json").write_text(json.dumps(kernel_json(python), indent=1, sort_keys=True) + "\n")
    for logo in LOGOS:
        shutil.copyfile(RESOURCES / logo, target / logo)
    return target


def install(*, user: bool = False, prefix: str | None = None) -> str:
    """Install the spec for the user, or under `prefix`; returns the directory it went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as staging:
        spec = write_spec(Path(staging) / NAME)
        spec.chmod(0o755)  # a temporary directory is private; the installed copy keeps this mode
        return KernelSpecManager().install_kernel_spec(str(spec), NAME, user=user, prefix=prefix)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m gradcalc.kernel install ...`: install the spec and say where it went."""
    parser = argparse.ArgumentParser(
        prog="python -m gradcalc.kernel install",
        description="Install the gradcalc kernel spec, so that Jupyter clients can start the gradcalc kernel.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user (the default)")
    where.add_argument("--sys-prefix", action="store_true", help=f"in this Python environment ({sys.prefix})")
    where.add_argument("--prefix", metavar="DIR", help="under DIR/share/jupyter/kernels")
    args = parser.parse_args(argv)
    try:
        import jupyter_client  # noqa: F401 - only to say what is missing
    except ImportError:
        print("gradcalc: the kernel needs the jupyter extra: pip install 'gradcalc[jupyter]'", file=sys.stderr)
        return 1
    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        path = install(user=prefix is None, prefix=prefix)
    except OSError as exc:
        print(f"gradcalc: can't install the kernel spec: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"installed the kernel spec '{NAME}' in {path}")
    return 0
