"""Derive the expected output of each seed script from PyTorch: `python tests/lang/make_expected.py`.

For every `seeds/NAME.gc` there is `seeds/NAME.py`, the same program written for PyTorch. This script runs
each `.py` with oracle.py under PyTorch (torch.set_default_dtype(torch.float64)), and writes what it prints
to `seeds/NAME.expected`, after a header saying how it was made. Run it again after changing a seed.
Needs PyTorch (the `oracle` extra); the tests themselves only read the checked-in files.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "seeds"

HEADER = """\
# Expected output of {name}.gc. Derived by tests/lang/make_expected.py, which ran {name}.py (the same
# program written for PyTorch) with tests/lang/oracle.py under torch {version},
# torch.set_default_dtype(torch.float64).
# "@N warning" / "@N error": PyTorch warned / raised at the statement mirroring line N of the script.
"""


def derive(py: Path) -> str:
    result = subprocess.run(
        [sys.executable, str(HERE / "oracle.py"), str(py)],
        capture_output=True,
        text=True,
        cwd=HERE,
        check=True,
    )
    import torch

    return HEADER.format(name=py.stem, version=torch.__version__) + result.stdout


def main() -> None:
    for py in sorted(SEEDS.glob("*.py")):
        target = py.with_suffix(".expected")
        target.write_text(derive(py), encoding="utf-8")
        print(f"wrote {target.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
