"""`set_printoptions` against PyTorch's `torch.set_printoptions`: the same calls give the same reprs.

The engine's `tensor_repr` and `gradcalc.set_printoptions` are compared with `repr(torch.tensor(...))` under
the same options, over hypothesis-generated tensors (test_printing.py's cases: every dtype, 0 to 4
dimensions, empty and summarized ones, every magnitude regime) and generated options (precision, threshold,
edgeitems, linewidth, sci_mode, profile); then the language's `set_printoptions(...)` from the command line.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_printing import _cases, _torch_tensor

import gradcalc
from gradcalc.autograd.printing import get_printoptions, printoptions, set_printoptions, tensor_repr

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _defaults():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    torch.set_default_dtype(previous)


_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.sampled_from([0, 1, 2, 3, 4, 6, 8, 10, 12, 17]),
        "threshold": st.sampled_from([0, 5, 10.5, 50, 1000, math.inf]),
        "edgeitems": st.sampled_from([0, 1, 2, 3, 5]),
        "linewidth": st.sampled_from([10, 40, 80, 120, 200]),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


def _both(**options: object) -> None:
    """The same options on both, from the defaults (hypothesis runs many examples in one test)."""
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    torch.set_printoptions(**options)
    set_printoptions(**options)


def _same_repr(arr: np.ndarray, grad: str) -> None:
    t = _torch_tensor(arr, grad)
    grad_fn = None if t.grad_fn is None else type(t.grad_fn).__name__
    assert tensor_repr(arr, requires_grad=t.requires_grad, grad_fn=grad_fn) == repr(t)


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_cases(), _OPTIONS)
def test_repr_matches_torch_under_the_same_options(case: tuple[np.ndarray, str], options: dict) -> None:
    _both(**options)
    _same_repr(*case)


@pytest.mark.parametrize("precision", [0, 1, 2, 6, 8, 10, 15, 17])
@pytest.mark.parametrize("sci_mode", [None, True, False])
@pytest.mark.parametrize(
    "values",
    [[1.123456789012345], [1 / 3, 2 / 3, 1.0], [1e-5, 1e5], [123456789.0, -0.5], [1.0, 2.0, -3.0], [0.1, -1e-9],
     [[math.pi, math.e], [-math.sqrt(2), 1e-3]], [math.inf, math.nan, 1.5], [0.0, -0.0]],
)
def test_precision_and_sci_mode_like_torch(precision: int, sci_mode: bool | None, values: list) -> None:
    _both(precision=precision, sci_mode=sci_mode)
    for dtype in (np.float64, np.float32):
        _same_repr(np.array(values, dtype=dtype), "none")
        _same_repr(np.array(values, dtype=dtype), "leaf")


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 3), (1001,), (40, 40), (3, 4, 100)])
@pytest.mark.parametrize("options", [{"profile": "short"}, {"profile": "full"}, {"threshold": 10, "edgeitems": 1},
                                     {"linewidth": 30, "precision": 6}, {"edgeitems": 0, "threshold": 5}])
def test_shapes_and_profiles_like_torch(shape: tuple[int, ...], options: dict) -> None:
    _both(**options)
    arr = np.random.default_rng(0).standard_normal(shape)
    _same_repr(arr, "none")
    _same_repr(arr, "mul")


def test_the_python_api_keeps_state_as_torch_does() -> None:
    # Each call sets sci_mode (None when not given); a profile sets four options, which the others adjust.
    calls = [{"precision": 8}, {"sci_mode": True}, {"precision": 2}, {"profile": "short", "precision": 6},
             {"profile": "full", "sci_mode": False}, {"threshold": 7, "edgeitems": 1}, {"profile": "default"}]
    for options in calls:
        _both(**options)
        assert get_printoptions() == torch._tensor_str.get_printoptions()
        x = [1 / 3, 2e-5, 1e5, 7.0] * 3
        assert repr(gradcalc.tensor(x)) == repr(torch.tensor(x))
    assert gradcalc.get_printoptions() == torch._tensor_str.get_printoptions()


def test_printoptions_context_manager_restores() -> None:
    with printoptions(precision=7, sci_mode=True), torch._tensor_str.printoptions(precision=7, sci_mode=True):
        assert repr(gradcalc.tensor([1 / 3])) == repr(torch.tensor([1 / 3]))
    assert repr(gradcalc.tensor([1 / 3])) == repr(torch.tensor([1 / 3])) == "tensor([0.3333])"


@pytest.mark.parametrize(
    "options",
    [{"precision": -1}, {"precision": 2.5}, {"edgeitems": -1}, {"profile": "long"}, {"sci_mode": 3},
     {"threshold": "many"}, {"precision": 8, "profile": "nope"}],
)
def test_what_could_not_print_is_refused_and_changes_nothing(options: dict) -> None:
    set_printoptions(precision=6)
    before = get_printoptions()
    with pytest.raises((TypeError, ValueError)):
        set_printoptions(**options)
    assert get_printoptions() == before


# -- the language --------------------------------------------------------------------------------------------
def gradcalc_e(*lines: str) -> subprocess.CompletedProcess:
    args = [a for line in lines for a in ("-e", line)]
    return subprocess.run([sys.executable, "-m", "gradcalc", *args], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=60)


def torch_repr(values: object, **options: object) -> str:
    with torch._tensor_str.printoptions(**options):
        return repr(torch.tensor(values))


def test_the_language_prints_more_digits_as_torch_does() -> None:
    x = [1.123456789, 2 / 3, 3.0]
    result = gradcalc_e("x = tensor([1.123456789, 2 / 3, 3])", "x", "set_printoptions(precision=8)", "x",
                        "set_printoptions(precision=3, sci_mode=true)", "x", "pi",
                        'set_printoptions(profile="short")', "x * 100")
    assert result.returncode == 0, result.stderr
    expected = [torch_repr(x), torch_repr(x, precision=8), torch_repr(x, precision=3, sci_mode=True),
                torch_repr(math.pi, precision=3, sci_mode=True), torch_repr([v * 100 for v in x], profile="short")]
    assert result.stdout == "".join(e + "\n" for e in expected)


def test_threshold_and_edgeitems_in_the_language() -> None:
    result = gradcalc_e("set_printoptions(threshold=inf)", "arange(1200.).reshape(2, 600)",
                        "set_printoptions(threshold=10, edgeitems=1, linewidth=40)", "arange(30.) / 7")
    assert result.returncode == 0, result.stderr
    whole = torch_repr(np.arange(1200.0).reshape(2, 600).tolist(), threshold=math.inf)
    summarized = torch_repr((np.arange(30.0) / 7).tolist(), threshold=10, edgeitems=1, linewidth=40)
    assert result.stdout == whole + "\n" + summarized + "\n"


def test_reset_restores_the_default_print_options() -> None:
    result = gradcalc_e("set_printoptions(precision=10, sci_mode=true)", "pi", ":reset", "pi", "tensor([1e-5, 1.])")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [torch_repr(math.pi, precision=10, sci_mode=True), "tensor(3.1416)",
                                          torch_repr([1e-5, 1.0])]


def test_a_failed_set_printoptions_changes_nothing() -> None:
    result = subprocess.run([sys.executable, "-m", "gradcalc", "--keep-going", "-e", "set_printoptions(precision=6)",
                             "-e", 'set_printoptions(precision=2, profile="long")', "-e", "pi"], capture_output=True,
                            text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=60)
    assert result.returncode == 1
    assert result.stdout == torch_repr(math.pi, precision=6) + "\n"
    assert "profile must be 'default', 'short' or 'full'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("call", ["set_printoptions(precision=-1)", "set_printoptions(precision=2.5)",
                                  "set_printoptions(sci_mode=3)", 'set_printoptions(threshold="x")',
                                  "set_printoptions(4, 5, 6, 7, 8, 9, 10)", "set_printoptions(edgeitems=none, foo=1)"])
def test_wrong_calls_are_worded_in_the_language(call: str) -> None:
    result = gradcalc_e(call)
    assert result.returncode == 1
    assert "error: set_printoptions" in result.stderr
    for word in ("Traceback", "TypeError", "ValueError", "int(", "NoneType", "'str'", "'float'"):
        assert word not in result.stderr, result.stderr
