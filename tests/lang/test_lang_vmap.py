"""The language's func.vmap batches (LANGUAGE.md section 9): the function runs once, so PyTorch's docstring
example (y's graph built once, grad(y, x, v) with a batched v) works, backward inside a mapped function is an
error, results have the batched computation's grad_fn, in-place operations write the batch, random draws follow
randomness=, and a failed call changes nothing. Printed output is compared with PyTorch's repr of the same
computation, or with mathematics."""

from __future__ import annotations

import pytest
from gclang_testing import run

from gradcalc.lang import Session

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def session_run(*sources: str) -> list:
    s = Session()
    return [run(src, session=s) for src in sources]


def test_pytorchs_docstring_example_runs_the_graph_once() -> None:
    (r,) = session_run("x = [1, 2, 3] requires_grad\ny = x ** 2\ndef g(v):\n    return grad(y, x, v)\n"
                       "func.vmap(g)(eye(3))")
    assert r.ok, r.err
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x**2
    assert r.out == repr(torch.vmap(lambda v: torch.autograd.grad(y, x, v))(torch.eye(3))) + "\n"


def test_results_have_the_batched_operations_grad_fn() -> None:
    (r,) = session_run("w = [1, 2] requires_grad\ndef lin(v):\n    return (v * w).sin()\n"
                       "z = func.vmap(lin)([[1, 2], [3, 4]])\nz\nz.grad_fn")
    assert r.ok, r.err
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    z = torch.vmap(lambda v: (v * w).sin())(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert r.out.splitlines()[:2] == repr(z).splitlines()
    assert "SinBackward0" in r.out.splitlines()[-1]


def test_per_sample_gradients_in_one_call() -> None:
    (r,) = session_run("def loss(w, x):\n    return (tanh(x @ w) ** 2).sum()\n"
                       "func.vmap(func.grad(loss), in_dims=(none, 0))([0.5, -0.5], [[1, 2], [3, 4], [5, 6]])")
    assert r.ok, r.err

    def loss(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return (torch.tanh(x @ w) ** 2).sum()

    expected = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(
        torch.tensor([0.5, -0.5]), torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert r.out == repr(expected) + "\n"


def test_in_place_on_the_mapped_tensor_writes_each_sample_and_shows_as_pytorch_shows_it() -> None:
    (r,) = session_run("def ip(v):\n    v.mul_(2)\n    return v + 1\nm = [[1, 2], [3, 4]]\nfunc.vmap(ip)(m)\nm")
    assert r.ok, r.err
    shown: list[str] = []
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])

    def ip(v: torch.Tensor) -> torch.Tensor:
        shown.append(repr(v.mul_(2)))  # an expression statement inside a function shows its value
        return v + 1

    result = torch.func.vmap(ip)(m)
    assert r.out == "\n".join([*shown, repr(result), repr(m)]) + "\n"


ERRORS = [
    ("def h(v):\n    (v * 2).sum().backward()\n    return v\nfunc.vmap(h)([[1, 2], [3, 4]])",
     "backward inside a function transform"),
    ("def r(v):\n    return v + rand(2)\nfunc.vmap(r)([[1, 2], [3, 4]])", 'pass randomness="different"'),
    ("def cf(v):\n    if v.sum() > 0:\n        return v\n    return -v\nfunc.vmap(cf)([[1, 2], [3, 4]])",
     "use where(condition, a, b) instead"),
    ("c = zeros(2)\ndef into(v):\n    c.add_(v)\n    return v\nfunc.vmap(into)([[1, 2], [3, 4]])",
     "output with shape [2] doesn't match the broadcast shape [2, 2]"),
    ("c = zeros(2)\ndef into(v):\n    c.mul_(v)\n    return v\nfunc.vmap(into)([[1, 2], [3, 4]])",
     "an in-place operation would write a value that differs between the samples"),
    ("def r(v):\n    return v + rand(2)\nfunc.vmap(r, randomness=\"sometimes\")([[1, 2], [3, 4]])",
     'randomness must be "error", "different" or "same"'),
]


@pytest.mark.parametrize(("source", "message"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_errors_in_the_languages_words_and_nothing_changes(source: str, message: str) -> None:
    s = Session()
    before = run("m0 = [[1, 2], [3, 4]]", session=s)
    assert before.ok
    r = run(source, session=s)
    assert not r.ok
    assert any(message in e for e in r.errors), r.err
    assert "Traceback" not in r.err and "functorch" not in r.err
    again = run("m0\nfunc.vmap(sin)(m0)", session=s)  # the session works on, with no vmap level left open
    assert again.ok, again.err


def test_randomness_same_and_different() -> None:
    (r,) = session_run("def r(v):\n    return v * 0 + rand(3)\nseed 0\n"
                       "a = func.vmap(r, randomness=\"same\")(zeros(4, 3))\n"
                       "b = func.vmap(r, randomness=\"different\")(zeros(4, 3))\n"
                       "(a[0] == a[3]).all()\n(b[0] == b[3]).all()")
    assert r.ok, r.err
    assert r.out == "tensor(True)\ntensor(False)\n"
