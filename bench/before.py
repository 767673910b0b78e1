"""The "before" column of the benchmarks: the same benchmark code run on gradcalc as it was at an earlier
commit, in a child process, so that a change is measured against the code it changed in one run.

    python bench/engine.py --before HEAD~3
    python bench/interpreter.py --before main

The earlier commit is checked out into a temporary git worktree (removed afterwards); the child runs the
*current* benchmark script with that checkout first on its path, so both columns time the same programs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A temporary worktree of `ref` (a commit, branch or `HEAD~N`) of this repository."""
    where = Path(tempfile.mkdtemp(prefix="gradcalc-before-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), ref],
                   check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
                       check=False, capture_output=True)
        shutil.rmtree(where.parent, ignore_errors=True)


def figures(script: Path, ref: str, args: list[str]) -> dict[str, Any] | None:
    """Run `script --root CHECKOUT --json ARGS` on a checkout of `ref`; its JSON figures, or None (with
    the reason on standard error) when the checkout or the run fails."""
    try:
        with checkout(ref) as tree:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            proc = subprocess.run([sys.executable, str(script), "--root", str(tree), "--json", *args],
                                  capture_output=True, text=True, check=False, env=env)
    except subprocess.CalledProcessError as exc:
        print(f"before: cannot check out {ref!r}: {exc.stderr.decode().strip()}", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(f"before: the run on {ref!r} failed:\n{proc.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])
