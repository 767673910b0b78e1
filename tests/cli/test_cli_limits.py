"""Limits from the user's side: tensors of too many dimensions, literals nested or sized beyond reason, and
running out of memory. Each is a message in the language's words (no NumPy or Python word), never a hang or
a traceback; running out of memory says what holds the memory and how to free it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import pytest

# Words of Python's or NumPy's insides that no message may show.
INSIDES = re.compile(r"ndarray|numpy|\bnp\.|NoneType|Overflow|MemoryError|ValueError|IndexError|TypeError|"
                     r"sequence|int too large|\bobject\b|Traceback|internal error|maximum number of dimension")


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def assert_clean(stderr: str) -> None:
    assert INSIDES.search(stderr) is None, stderr


# -- dimensions -----------------------------------------------------------------------------------------------
def test_a_list_nested_64_deep_is_a_64_dimensional_tensor(run_gradcalc: Callable) -> None:
    result = run_gradcalc("-e", f"x = {nested(64)}", "-e", "x.ndim", "-e", "x.sum()")
    assert (result.returncode, result.stdout) == (0, "64\ntensor(1.)\n")


@pytest.mark.parametrize("depth", [65, 66, 300, 5000, 100_000])
def test_a_list_nested_deeper_gets_the_languages_words(run_gradcalc: Callable, depth: int) -> None:
    # (100,000 levels: the check is linear in the depth, not quadratic; the run finishes)
    result = run_gradcalc(stdin=f"x = {nested(depth)}\nprint \"never\"\n")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "<stdin>:1:5: error: a list literal nested more than 64 deep: a tensor can have at most 64 dimensions" \
        in result.stderr
    assert_clean(result.stderr)


@pytest.mark.parametrize(
    "program",
    [
        f"tensor({nested(65)})",
        f"x = tensor({nested(64)})\nx.unsqueeze(0)",
        f"x = tensor({nested(64)})\nx[none]",
        "zeros(" + ", ".join(["1"] * 65) + ")",
        "zeros([" + ", ".join(["1"] * 65) + "])",
        "ones(1).reshape(" + ", ".join(["1"] * 65) + ")",
        f"y = 2\n{nested(70, 'y.item()')}",  # a list made while running (not a literal of numbers)
    ],
)
def test_more_than_64_dimensions_anywhere(run_gradcalc: Callable, program: str) -> None:
    result = run_gradcalc(stdin=program + "\n")
    assert result.returncode == 1
    assert "a tensor can have at most 64 dimensions" in result.stderr
    assert_clean(result.stderr)


def test_an_integer_literal_past_float64_is_inf(run_gradcalc: Callable) -> None:
    # As `1e400` is (and Python's float("1" + "0" * 400)): float64's largest is about 1.8e308.
    result = run_gradcalc("-e", "x = " + "9" * 400, "-e", "x", "-e", "[" + "9" * 309 + ", -" + "9" * 400 + ", 1]",
                          "-e", "1" + "0" * 300 + " > 1e299")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "tensor(inf)\ntensor([inf, -inf, 1.])\ntensor(True)\n"


def test_a_wide_literal_is_fine(run_gradcalc: Callable) -> None:
    result = run_gradcalc(stdin="x = [" + "1, " * 200_000 + "1]\nx.shape\nx.sum()\n")
    assert (result.returncode, result.stdout) == (0, "(200001,)\ntensor(200001.)\n")


# -- memory ---------------------------------------------------------------------------------------------------
LIMIT_MB = 900  # the address space the child may use: about 150 MB for Python, NumPy and gradcalc, the rest free
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS limits memory on Linux")


@pytest.fixture
def run_limited(gradcalc_command: list[str], clean_env: dict[str, str], tmp_path) -> Callable:
    """Run gradcalc with its address space limited to LIMIT_MB (one BLAS thread: each reserves its own)."""
    import resource
    import subprocess

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MB * 2**20, LIMIT_MB * 2**20))

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        env = {**clean_env, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        return subprocess.run([*gradcalc_command, *args], input=stdin, capture_output=True, text=True, env=env,
                              cwd=tmp_path, preexec_fn=limit, timeout=120)

    return run


@linux_only
def test_running_out_of_memory_through_saved_values_says_so(run_limited: Callable) -> None:
    # Each sin saves its input for backward: 32 MB a step; the loop keeps the whole graph alive through y.
    program = ("x = randn(4000, 1000) requires_grad\n"
               "y = x\n"
               "for i in range(1000):\n"
               "    y = sin(y)\n"
               'print "never"\n')
    result = run_limited(stdin=program)
    assert result.returncode == 1 and result.stdout == ""
    message = result.stderr
    assert "error: out of memory: the graphs recorded for backward hold " in message
    held = re.search(r"hold (\d+(?:\.\d+)?) (MB|GB)", message)
    assert held is not None, message
    held_mb = float(held[1]) * (1024 if held[2] == "GB" else 1)
    # what the graph holds is most of the limit (the rest: the interpreter, and the step that failed)
    assert 0.4 * LIMIT_MB <= held_mb <= LIMIT_MB, message
    for fix in ("with no_grad:", ".detach()", "smaller sizes"):
        assert fix in message
    assert "--max-elements" not in message  # it limits one result's size, which was never near it
    assert_clean(message)


@linux_only
def test_running_out_of_memory_without_a_graph(run_limited: Callable) -> None:
    # 10^8 elements are under --max-elements' default (2^27), and 800 MB are more than there is.
    result = run_limited("-e", "x = zeros(10000, 10000) + 1")
    assert result.returncode == 1
    assert "error: out of memory: this needs more memory than is free" in result.stderr
    assert "saved" not in result.stderr and "--max-elements" not in result.stderr
    assert_clean(result.stderr)


def test_max_elements_speaks_of_what_it_limits(run_gradcalc: Callable) -> None:
    result = run_gradcalc("--max-elements", "100", "-e", "zeros(10, 11)")
    assert result.returncode == 1
    assert "zeros(...) would have 110 elements, more than the limit of 100 (raise it with --max-elements)" \
        in result.stderr
