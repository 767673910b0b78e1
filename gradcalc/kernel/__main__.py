"""`python -m gradcalc.kernel install [...]` installs the kernel spec; any other arguments start the kernel
(`-f CONNECTION_FILE`, as the kernel spec's command line gives them)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Install the kernel spec, or run the kernel until its client shuts it down."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["install"]:
        from .install import main as install

        return install(args[1:])
    try:
        from ipykernel.kernelapp import IPKernelApp
    except ImportError:
        print("gradcalc: the kernel needs the jupyter extra: pip install 'gradcalc[jupyter]'", file=sys.stderr)
        return 1
    from .kernel import GradcalcKernel

    IPKernelApp.launch_instance(argv=args, kernel_class=GradcalcKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
