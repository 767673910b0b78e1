"""The installed `gradcalc` command as a subprocess: script files, `-e`, standard input, exit statuses,
standard output against standard error, error locations and the `--format` outputs.

Expected values come from PyTorch (under `torch.set_default_dtype(torch.float64)`) or from mathematics.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 60  # seconds
Run = Callable[..., Any]  # conftest's run_gradcalc: (*args, stdin=..., env=...) -> Result


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    torch.set_default_dtype(torch.float64)
    return torch


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- the three ways in ---------------------------------------------------------------------------------------
def test_script_file(run_gradcalc: Run, tmp_path: Path, torch) -> None:
    script = write(tmp_path / "f.gc", "x = 3 requires_grad\ny = x ** 2 + sin(x)\nbackward y\nx.grad\ny\n")
    result = run_gradcalc(str(script))
    x = torch.tensor(3.0, requires_grad=True)
    y = x**2 + torch.sin(x)
    y.backward()
    assert result.returncode == 0
    assert result.stderr == ""
    assert result.stdout.splitlines() == [repr(x.grad), repr(y)]


def test_expression_option(run_gradcalc: Run) -> None:
    result = run_gradcalc("-e", "x = 2 requires_grad; backward x**3; x.grad")
    assert (result.returncode, result.stdout, result.stderr) == (0, "tensor(12.)\n", "")  # 3 * 2**2


def test_repeated_expression_options_are_successive_lines(run_gradcalc: Run) -> None:
    result = run_gradcalc("-e", "a = 2", "-e", "b = a * 5", "-e", "b", "-e", "nope")
    assert result.returncode == 1
    assert result.stdout == "tensor(10.)\n"
    assert result.stderr.startswith("<expr>:4:1: error:")  # the fourth -e is line 4


@pytest.mark.parametrize(
    "args",
    [
        ("-e", "-1/0"),
        ("--format", "torch", "-e", "-1/0"),
        ("-e", "-1/0", "--keep-going"),
        ("-e", " -1/0"),
        ("-e", "\t-1/0"),
        ("-e", "  x = -1\n  x / 0"),
    ],
)
def test_expression_text_may_start_with_a_minus_or_a_blank(run_gradcalc: Run, torch, args: tuple[str, ...]) -> None:
    result = run_gradcalc(*args)  # LANGUAGE.md section 6: `gradcalc -e '-1/0'` prints tensor(-inf)
    assert (result.returncode, result.stdout, result.stderr) == (0, repr(torch.tensor(-1.0) / 0) + "\n", "")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # LANGUAGE.md section 6: several -e are one program, one line each, the common indentation removed
        (("-e", "def f(x):", "-e", "    return x * 2", "-e", "f(3)"), "tensor(6.)\n"),
        (("-e", "  def f(x):", "-e", "      return x * 2", "-e", "  f(3)"), "tensor(6.)\n"),
        (("-e", "for i in range(3):", "-e", "\tif i == 2:", "-e", "\t\ti * 10"), "20\n"),  # range gives whole numbers
        (("-e", "s = 0", "-e", "for i in [1, 2]:", "-e", "    s = s + i", "-e", "", "-e", "s"), "tensor(3.)\n"),
        (("-e", " 1+1"), "tensor(2.)\n"),
        (("-e", "def g(x):\n    return -x", "-e", "g(4)"), "tensor(-4.)\n"),
    ],
)
def test_several_expression_options_form_blocks(run_gradcalc: Run, args: tuple[str, ...], expected: str) -> None:
    result = run_gradcalc(*args)
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")


def test_expression_lines_keep_indentation_beyond_the_common_part(run_gradcalc: Run) -> None:
    result = run_gradcalc("-e", "1", "-e", "  2")  # an indented line with nothing to belong to
    assert result.returncode == 1
    assert result.stdout == ""  # a syntax error runs nothing
    assert result.stderr.startswith("<expr>:2:")


def test_standard_input_pipe(run_gradcalc: Run) -> None:
    program = "x = 0.5 requires_grad\ny = sin(x)\nbackward y\nx.grad\n"
    result = run_gradcalc("--format", "plain", stdin=program)
    assert result.returncode == 0
    assert result.stdout == f"{math.cos(0.5)!r}\n"  # d sin(x)/dx = cos(x)
    dash = run_gradcalc("-", "--format", "plain", stdin=program)
    assert (dash.returncode, dash.stdout) == (0, result.stdout)


def test_python_dash_m(gradcalc_command: list[str], clean_env: dict[str, str]) -> None:
    python = str(Path(gradcalc_command[0]).with_name("python"))
    proc = subprocess.run([python, "-m", "gradcalc", "-e", "6 * 7"], capture_output=True, text=True,
                          env=clean_env, timeout=TIMEOUT)
    assert (proc.returncode, proc.stdout) == (0, "tensor(42.)\n")


# -- exit statuses and where messages go ---------------------------------------------------------------------
def test_syntax_error_runs_nothing(run_gradcalc: Run) -> None:
    result = run_gradcalc(stdin="1 + 1\n2 * (3\n4\n")
    assert result.returncode == 1
    assert result.stdout == ""  # the whole program is parsed before anything runs
    first = result.stderr.splitlines()[0]
    assert first.startswith("<stdin>:") and ": error: " in first


def test_runtime_error_stops_after_what_came_before(run_gradcalc: Run, tmp_path: Path) -> None:
    script = write(tmp_path / "bad.gc", "1 + 1\nmissing_name + 1\n2 + 2\n")
    result = run_gradcalc(str(script))
    assert result.returncode == 1
    assert result.stdout == "tensor(2.)\n"
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{script}:2:1: error: ")
    assert "missing_name" in lines[0]
    assert lines[1].strip() == "missing_name + 1"  # the source line
    assert lines[2].strip() == "^" or lines[2].lstrip().startswith("^")  # and a caret under column 1
    assert lines[2].index("^") == lines[1].index("m")


def test_keep_going_runs_on_and_still_fails(run_gradcalc: Run) -> None:
    result = run_gradcalc("--keep-going", stdin="1 + 1\nmissing_name\n2 + 2\n")
    assert result.returncode == 1
    assert result.stdout == "tensor(2.)\ntensor(4.)\n"
    assert result.stderr.count(": error: ") == 1


def test_error_column_points_at_the_culprit(run_gradcalc: Run) -> None:
    result = run_gradcalc("-e", "y = 1 + undefined_thing")
    assert result.returncode == 1
    assert result.stderr.startswith("<expr>:1:9: error: ")  # `undefined_thing` starts at column 9


def test_values_on_stdout_warnings_on_stderr(run_gradcalc: Run, torch) -> None:
    import warnings

    result = run_gradcalc("-e", "x = 3 requires_grad; y = x * 2; y.grad; x")
    x = torch.tensor(3.0, requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert caught, "PyTorch warns when .grad of a non-leaf is read"
    assert result.returncode == 0
    assert result.stdout == f"None\n{x!r}\n"
    assert ": warning: " in result.stderr and "retain_grad" in result.stderr
    assert "None" not in result.stderr.splitlines()  # the value itself went to stdout only


def test_output_order_is_kept_when_both_streams_share_a_pipe(
    gradcalc_command: list[str], clean_env: dict[str, str]
) -> None:
    proc = subprocess.run(
        [*gradcalc_command, "--keep-going", "-e", "1; nope; 2; nope_again; 3"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env, timeout=TIMEOUT,
    )
    events = [line for line in proc.stdout.splitlines() if line.startswith("tensor(") or ": error: " in line]
    assert len(events) == 5
    assert events[0::2] == ["tensor(1.)", "tensor(2.)", "tensor(3.)"]
    assert events[1].startswith("<expr>:1:4: error: ") and events[3].startswith("<expr>:1:13: error: ")


def test_unknown_flag_is_a_one_line_usage_error(run_gradcalc: Run) -> None:
    result = run_gradcalc("--frobnicate")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert "--frobnicate" in result.stderr


@pytest.mark.parametrize(
    "args",
    [("--format", "xml", "-e", "1"), ("--max-elements", "0", "-e", "1"), ("-e",), ("a.gc", "-e", "1")],
)
def test_bad_arguments_are_usage_errors(run_gradcalc: Run, args: tuple[str, ...]) -> None:
    result = run_gradcalc(*args)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stdout == ""


def test_missing_file(run_gradcalc: Run) -> None:
    result = run_gradcalc("no_such_script.gc")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert "can't read the script from '" in result.stderr and "no_such_script.gc': no such file or directory" in \
        result.stderr


def test_directory_instead_of_a_file(run_gradcalc: Run, tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    result = run_gradcalc("adir")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "directory" in result.stderr


def test_file_that_is_not_utf8(run_gradcalc: Run, tmp_path: Path) -> None:
    script = write(tmp_path / "latin1.gc", "x = 1\n# caf\xe9\n".encode("latin-1"))
    result = run_gradcalc(str(script))
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert f"{script}:2:6:" in result.stderr and "UTF-8" in result.stderr  # the é is byte 6 of line 2


def test_utf8_with_bom_and_crlf_lines(run_gradcalc: Run, tmp_path: Path) -> None:
    script = write(tmp_path / "win.gc", "\ufeffa = 2\r\na * 3\r\n".encode())
    result = run_gradcalc(str(script))
    assert (result.returncode, result.stdout, result.stderr) == (0, "tensor(6.)\n", "")


@pytest.mark.parametrize("how", ["file", "stdin", "expr"])
def test_empty_input_says_so(run_gradcalc: Run, tmp_path: Path, how: str) -> None:
    if how == "file":
        result = run_gradcalc(str(write(tmp_path / "empty.gc", "")))
    elif how == "stdin":
        result = run_gradcalc(stdin="")
    else:
        result = run_gradcalc("-e", "  ")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "empty" in result.stderr and len(result.stderr.splitlines()) == 1


def test_version(run_gradcalc: Run) -> None:
    result = run_gradcalc("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"gradcalc {metadata.version('gradcalc')}"


def test_help_has_examples(run_gradcalc: Run) -> None:
    result = run_gradcalc("--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout and "gradcalc -e" in result.stdout
    for option in ("--keep-going", "--format", "--max-elements", "-i", "--version"):
        assert option in result.stdout


def test_max_elements_limits_tensor_size(run_gradcalc: Run) -> None:
    assert run_gradcalc("--max-elements", "100", "-e", "zeros(10, 10).sum()").stdout == "tensor(0.)\n"
    result = run_gradcalc("--max-elements", "100", "-e", "zeros(10, 11)")
    assert result.returncode == 1
    assert result.stdout == ""
    assert ": error: " in result.stderr


def test_forced_repl_on_a_pipe_reads_lines(run_gradcalc: Run) -> None:
    # -i on a pipe: no prompt_toolkit; prompts on stderr, values on stdout, a blank line ends a block.
    program = "x = 3 requires_grad\nwith no_grad:\n    z = x * 2\n\nz.requires_grad\nz\n"
    result = run_gradcalc("-i", stdin=program)
    assert result.returncode == 0
    assert result.stdout == "False\ntensor(6.)\n"
    assert ">>> " in result.stderr and "... " in result.stderr
    assert "\x1b[" not in result.stdout + result.stderr


def test_forced_repl_after_a_script_keeps_its_workspace(run_gradcalc: Run, tmp_path: Path) -> None:
    script = write(tmp_path / "setup.gc", "k = 7\n")
    result = run_gradcalc("-i", str(script), stdin="k * 6\n")
    assert (result.returncode, result.stdout) == (0, "tensor(42.)\n")


def test_closed_output_pipe_ends_the_run_quietly(
    gradcalc_command: list[str], clean_env: dict[str, str]
) -> None:
    # `gradcalc ... | head -1`: once the reader is gone, the run ends at once (10**7 values would take
    # minutes), with no message, and not with status 0: it did not print everything.
    proc = subprocess.Popen(
        [*gradcalc_command, "-e", "for i in range(10000000): i"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = proc.stdout.readline()
        proc.stdout.close()
        proc.wait(timeout=TIMEOUT)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.stderr.close()
    assert first == b"0\n"  # `i` from range is a Python int: it prints as Python prints it
    assert err == ""
    assert proc.returncode != 0


# -- --format ------------------------------------------------------------------------------------------------
def test_format_plain(run_gradcalc: Run) -> None:
    program = (
        "6.0\n0.5\n[0, 1, 0]\n[[1, 2], [3, 4]] * 0.5\ntrue\nnone\n"
        "x = 3 requires_grad\nbackward x * sin(x)\nx.grad\n"
    )
    result = run_gradcalc("--format", "plain", stdin=program)
    assert result.returncode == 0
    expected_grad = math.sin(3.0) + 3.0 * math.cos(3.0)  # d(x sin x)/dx
    assert result.stdout.splitlines()[:7] == ["6", "0.5", "0 1 0", "0.5 1", "1.5 2", "true", "none"]
    assert float(result.stdout.splitlines()[7]) == pytest.approx(expected_grad, rel=1e-15)


def test_format_json(run_gradcalc: Run, torch) -> None:
    result = run_gradcalc("--format", "json", "-e", "x = [1, 2] requires_grad; x * 2; x.shape; true")
    assert result.returncode == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert records[0] == {
        "value": y.tolist(),
        "shape": list(y.shape),
        "dtype": "float64",
        "requires_grad": y.requires_grad,
        "is_leaf": y.is_leaf,
        "grad_fn": type(y.grad_fn).__name__,
    }
    assert records[1] == {"value": [2]}
    assert records[2] == {"value": True}


def test_format_torch_is_the_default(run_gradcalc: Run, torch) -> None:
    program = "w = [[1, 2], [3, 4]] requires_grad\nw * w\n"
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert run_gradcalc(stdin=program).stdout == repr(w * w) + "\n"
    assert run_gradcalc("--format", "torch", stdin=program).stdout == repr(w * w) + "\n"
