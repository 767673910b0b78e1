"""The default dtype against PyTorch's: float32 after `import`, what follows it (the float factories, Python
floats, integral inputs promoted to floating, the layers' parameters, the legacy constructors), what keeps its
own dtype (int and bool data, arrays, tensors), `set_default_dtype`'s errors, printing; and the language's
sessions, which compute in float64 without changing the default of Python code in the same process."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.precision import EPS32

# each case: how to make a tensor from a library (`gradcalc` or `torch`), and NumPy
CASES: dict[str, Callable[[Any], Any]] = {
    "zeros": lambda L: L.zeros(2, 3),
    "zeros_tuple": lambda L: L.zeros((2,)),
    "ones": lambda L: L.ones(2),
    "empty": lambda L: L.empty(3),
    "full_float": lambda L: L.full((2,), 1.5),
    "full_int": lambda L: L.full((2,), 1),
    "full_bool": lambda L: L.full((2,), True),
    "eye": lambda L: L.eye(2),
    "arange_int": lambda L: L.arange(3),
    "arange_float": lambda L: L.arange(3.0),
    "arange_step": lambda L: L.arange(0, 1, 0.25),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "logspace": lambda L: L.logspace(0, 2, 5),
    "empty_like": lambda L: L.empty_like(L.ones(2, dtype=L.float64)),
    "from_numpy": lambda L: L.from_numpy(np.arange(3.0, dtype=np.float32)),
    "tensor_float": lambda L: L.tensor(1.5),
    "tensor_floats": lambda L: L.tensor([1, 2.5]),
    "tensor_ints": lambda L: L.tensor([1, 2]),
    "tensor_bool": lambda L: L.tensor(True),
    "tensor_float64_array": lambda L: L.tensor(np.array([1.5])),
    "tensor_float32_array": lambda L: L.tensor(np.array([1.5], dtype=np.float32)),
    "tensor_numpy_scalar": lambda L: L.tensor(np.float64(1.5)),
    "tensor_of_float64_tensors": lambda L: L.tensor([L.tensor(1.0, dtype=L.float64), L.tensor(2.0, dtype=L.float64)]),
    "tensor_explicit": lambda L: L.tensor([1, 2], dtype=L.float64),
    "as_tensor": lambda L: L.as_tensor(1.5),
    "zeros_like_float64": lambda L: L.zeros_like(L.tensor([1.0], dtype=L.float64)),
    "rand": lambda L: L.rand(2),
    "randn": lambda L: L.randn(2, 2),
    "randint": lambda L: L.randint(3, (2,)),
    "normal": lambda L: L.normal(0.0, 1.0, (2,)),
    "normal_tensors": lambda L: L.normal(L.zeros(2, dtype=L.float64), 1.0),
    "randperm": lambda L: L.randperm(3),
    "sin_of_ints": lambda L: L.sin(L.tensor([1, 2])),
    "exp_of_bools": lambda L: L.tensor([True, False]).exp(),
    "legacy_sizes": lambda L: L.Tensor(40),
    "legacy_sizes_2d": lambda L: L.Tensor(4, 1),
    "legacy_data_ints": lambda L: L.Tensor([1, 2]),
    "legacy_empty": lambda L: L.Tensor(),
    "legacy_float": lambda L: L.FloatTensor(2, 3),
    "legacy_double": lambda L: L.DoubleTensor([1, 2]),
    "legacy_long": lambda L: L.LongTensor([1.7, 2]),
    "legacy_long_sizes": lambda L: L.LongTensor(3),
    "linear_weight": lambda L: L.nn.Linear(2, 3).weight,
    "linear_bias": lambda L: L.nn.Linear(2, 3).bias,
    "parameter_empty": lambda L: L.nn.Parameter(),
}
# legacy constructors of sizes leave their memory uninitialised in PyTorch: only shape and dtype compare
UNINITIALISED = {"empty", "empty_like", "legacy_sizes", "legacy_sizes_2d", "legacy_float", "legacy_long_sizes",
                 "parameter_empty"}
COMPUTED = {"sin_of_ints", "exp_of_bools", "logspace"}
RANDOM = {"rand", "randn", "randint", "normal", "normal_tensors", "randperm", "linear_weight", "linear_bias"}


def _compare(name: str) -> None:
    ours, theirs = CASES[name](gradcalc), CASES[name](torch)
    assert str(ours.dtype) == str(theirs.dtype), name
    assert tuple(ours.shape) == tuple(theirs.shape), name
    assert ours.requires_grad == theirs.requires_grad and ours.is_leaf == theirs.is_leaf, name
    if name in COMPUTED:  # one float32 rounding of a library function each
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=2 * EPS32, err_msg=name)
    elif name not in UNINITIALISED | RANDOM:
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy(), err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_default(pytorch_default_dtype: None, name: str) -> None:
    assert str(gradcalc.get_default_dtype()) == str(torch.get_default_dtype()) == "torch.float32"
    _compare(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_default(name: str) -> None:
    """The tests' default (conftest.py): both at float64 after `set_default_dtype(float64)`."""
    assert str(gradcalc.get_default_dtype()) == str(torch.get_default_dtype()) == "torch.float64"
    _compare(name)


def test_set_default_dtype_then_factories(pytorch_default_dtype: None) -> None:
    for lib in (gradcalc, torch):
        assert lib.zeros(1).dtype == lib.float32
        lib.set_default_dtype(lib.float64)
        assert lib.zeros(1).dtype == lib.float64 and lib.tensor([1.0, 2.0]).dtype == lib.float64
        lib.set_default_dtype(lib.float32)
        assert lib.tensor([1.0, 2.0]).dtype == lib.float32


def test_a_fresh_import_starts_at_float32() -> None:
    """No fixture: what `import gradcalc` gives, beside `import torch`, in a new process."""
    code = ("import gradcalc, torch; print(gradcalc.get_default_dtype(), torch.get_default_dtype(), "
            "gradcalc.tensor([1., 2.]).dtype, torch.tensor([1., 2.]).dtype)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["torch.float32"] * 4


@pytest.mark.parametrize("value", ["int64", "bool", "string", "none"])
def test_set_default_dtype_errors(value: str) -> None:
    def given(L: Any) -> Any:
        return {"int64": L.int64, "bool": L.bool, "string": "float64", "none": None}[value]

    with pytest.raises(TypeError) as theirs:
        torch.set_default_dtype(given(torch))
    with pytest.raises(TypeError) as ours:
        gradcalc.set_default_dtype(given(gradcalc))
    assert str(ours.value) == str(theirs.value)
    assert gradcalc.get_default_dtype() == gradcalc.float64  # unchanged by the failure


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_repr_under_each_default(pytorch_default_dtype: None, default: str) -> None:
    made = [
        lambda L: L.tensor([1.0, 2.0]),
        lambda L: L.tensor([1.0, 2.5], dtype=L.float64),
        lambda L: L.tensor([1.0, 2.5], dtype=L.float32),
        lambda L: L.tensor([1, 2]),
        lambda L: L.tensor([], dtype=L.float64),
        lambda L: L.tensor([], dtype=L.float32),
        lambda L: L.tensor([], dtype=L.int64),
        lambda L: L.zeros(2, requires_grad=True) * 2,
    ]
    for lib in (gradcalc, torch):
        lib.set_default_dtype(getattr(lib, default))
    for make in made:
        assert repr(make(gradcalc)) == repr(make(torch))


def test_legacy_constructor_errors() -> None:
    cases = [
        (lambda L: L.Tensor(-1), RuntimeError),
        (lambda L: L.Tensor(2.5), TypeError),
        (lambda L: L.Tensor("a"), TypeError),
        (lambda L: L.Tensor(2.5, 3), TypeError),
        (lambda L: L.LongTensor(-2, 3), RuntimeError),
    ]
    for make, kind in cases:
        with pytest.raises(kind) as theirs:
            make(torch)
        with pytest.raises(kind) as ours:
            make(gradcalc)
        first = str(theirs.value).split(" - ")[0].split(":")[0]
        assert str(ours.value).startswith(first), (str(ours.value), str(theirs.value))


def test_legacy_types_check_dtypes() -> None:
    for lib in (gradcalc, torch):
        assert isinstance(lib.zeros(2, dtype=lib.float32), lib.FloatTensor)
        assert not isinstance(lib.zeros(2, dtype=lib.float64), lib.FloatTensor)
        assert isinstance(lib.tensor([1]), lib.LongTensor)
        assert isinstance(lib.DoubleTensor(2), lib.Tensor)
    t = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    assert gradcalc.Tensor(t) is t  # PyTorch makes an alias sharing data, version and requires_grad


def test_language_keeps_float64_beside_python_float32(pytorch_default_dtype: None) -> None:
    from gradcalc.lang.session import Session

    out, err = _Capture(), _Capture()
    session = Session(out=out, err=err)
    assert session.run("x = rand(2)\nx.dtype\ntensor([1.5, 2])\nzeros(2, dtype=float32)\ny = [1, 2] * 0.5")
    assert out.text.splitlines() == ["float64", "tensor([1.5000, 2.0000])", "tensor([0., 0.], dtype=float32)"]
    assert session.workspace["y"].dtype == gradcalc.float64
    assert gradcalc.get_default_dtype() == gradcalc.float32  # Python's default: untouched
    assert gradcalc.zeros(1).dtype == gradcalc.float32
    assert repr(session.workspace["x"]).endswith("dtype=torch.float64)")  # Python prints under its own


def test_the_session_default_is_this_threads_only(pytorch_default_dtype: None) -> None:
    from gradcalc.autograd.defaults import FLOAT64, default_dtype, default_float

    seen: list[Any] = []
    with default_dtype(FLOAT64):
        worker = threading.Thread(target=lambda: seen.append(default_float()))
        worker.start()
        worker.join()
        assert default_float() == FLOAT64
    assert seen == [np.dtype("float32")]


class _Capture:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


def test_from_numpy_shares_memory_and_accelerators_are_absent() -> None:
    for L in (gradcalc, torch):
        a = np.arange(3.0)
        t = L.from_numpy(a)
        a[0] = 7.0
        assert t.tolist() == [7.0, 1.0, 2.0] and str(t.dtype) == "torch.float64"
        device = "cuda" if L.cuda.is_available() else "cpu"  # the tutorials' first line, on a CPU machine
        assert device == "cpu" and not L.backends.mps.is_available()
