"""What a cold start of the batch runner does without: the plainest command lines are read without argparse
(exactly as argparse reads them), and once the caches are warm `gradcalc -e '1 + 1'` imports neither Lark
nor argparse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcalc.cli import build_parser, expr_texts_attached, quick_arguments

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("file", "expr", "interactive", "keep_going", "format", "max_elements")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["script.gc"],
        ["x=1"],
        [""],
        ["-e", "1 + 1"],
        ["-e", ""],
        ["-e", "a = 2", "-e", "b = a * 5", "-e", "b"],
        ["-e", "x = 2 requires_grad; backward x**3; x.grad"],
        ["-e", "1 -e 2"],
        ["-e", "-1"],
        ["-e", "-x"],
        ["-e", "-1/0", "-e", "--format"],
    ],
)
def test_quick_arguments_read_as_argparse_does(argv: list[str]) -> None:
    quick = quick_arguments(argv)
    assert quick is not None
    expected = build_parser().parse_args(expr_texts_attached(argv))
    assert {f: getattr(quick, f) for f in FIELDS} == {f: getattr(expected, f) for f in FIELDS}


@pytest.mark.parametrize(
    "argv",
    [
        ["-"],
        ["-i"],
        ["--version"],
        ["-h"],
        ["-e"],
        ["-e1 + 1"],
        ["-e", "1", "script.gc"],
        ["script.gc", "-e", "1"],
        ["--format", "json"],
        ["-e", "1", "--keep-going"],
        ["-e", "1", "-i", "x"],
        ["--", "-e"],
    ],
)
def test_other_command_lines_are_left_to_argparse(argv: list[str]) -> None:
    assert quick_arguments(argv) is None


def test_a_warm_batch_run_imports_neither_lark_nor_argparse(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-X", "importtime", "-m", "gradcalc", "-e", "1 + 1"]

    def imported() -> set[str]:
        run = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=120)
        assert run.stdout == "tensor(2.)\n"
        return {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "|" in line}

    first = imported()
    assert "lark" in first  # a cold cache: the tables were made from Lark's parser
    second = imported()
    assert not {"lark", "argparse", "hashlib"} & second
    assert "gradcalc.lang.syntax.parser" in second
