"""The transforms in the language (LANGUAGE.md section 9) against PyTorch: the built-ins `vjp jvp hvp vhp
jacobian hessian` against `torch.autograd.functional`, the `func.` namespace against `torch.func`, on the
same functions (float64, rtol 1e-9): values, structure, requires_grad, and grad_fn names where PyTorch's
results have one. Then bad input: each a clear error naming the argument, no Python words, nothing left
behind (no dual level open, the workspace as it was)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gclang_testing import out, run

import gradcalc as gc
from gradcalc.autograd import forward_ad
from gradcalc.lang import Session

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
AF, TF = torch.autograd.functional, torch.func

RTOL, ATOL = 1e-9, 1e-12
RNG = np.random.default_rng(11)
DATA = {"x": RNG.uniform(0.5, 1.5, 3), "y": RNG.uniform(0.5, 1.5, 3), "v": RNG.standard_normal(3),
        "w": RNG.standard_normal(3), "m": RNG.uniform(0.5, 1.5, (4, 3)), "x0": RNG.uniform(0.5, 1.5, ())}

# the same functions, in the language and in PyTorch
DEFS = """\
def f(x):
    return sin(x) * x + x ** 2
def s(x):
    return (x ** 3).sum() + (exp(x) * sin(x)).sum()
def f2(x, y):
    return x * y + sin(x) * y ** 2
def s2(x, y):
    return (x * y).sum() ** 2 + (sin(x) * exp(y)).sum()
def pair(x):
    return sin(x), x ** 2 * cos(x)
def with_aux(x):
    return (x ** 3).sum(), x * 2
"""


def t_f(x: Any) -> Any:
    return torch.sin(x) * x + x**2


def t_s(x: Any) -> Any:
    return (x**3).sum() + (torch.exp(x) * torch.sin(x)).sum()


def t_f2(x: Any, y: Any) -> Any:
    return x * y + torch.sin(x) * y**2


def t_s2(x: Any, y: Any) -> Any:
    return (x * y).sum() ** 2 + (torch.sin(x) * torch.exp(y)).sum()


def t_pair(x: Any) -> Any:
    return torch.sin(x), x**2 * torch.cos(x)


def t_with_aux(x: Any) -> Any:
    return (x**3).sum(), x * 2


def _literal(a: np.ndarray) -> str:
    return repr(a.tolist())


def language_result(expr: str) -> Any:
    """`r = EXPR` run after the definitions and the data (x, y, v, w, m, x0; xg a copy of x that requires
    grad), in a fresh session: the value of r."""
    data = "".join(f"{k} = {_literal(a)}\n" for k, a in DATA.items())
    s = Session()
    r = run(f"{DEFS}{data}xg = {_literal(DATA['x'])} requires_grad\nr = {expr}\n", session=s)
    assert r.ok, r.err
    return s.workspace["r"]


def torch_data() -> dict[str, Any]:
    d = {k: torch.tensor(a) for k, a in DATA.items()}
    d["xg"] = torch.tensor(DATA["x"], requires_grad=True)
    return d


def same(ours: Any, theirs: Any, path: str = "r", names: bool = True) -> None:
    """Same nesting, shapes, values, requires_grad and grad_fn names."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{path}: {ours!r}"
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            same(a, b, f"{path}[{k}]", names)
        return
    assert isinstance(ours, gc.Tensor), f"{path}: {ours!r}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg=path)
    assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad {ours.requires_grad}"
    if names:
        ours_name = ours.grad_fn.name() if ours.grad_fn is not None else None
        theirs_name = theirs.grad_fn.name() if theirs.grad_fn is not None else None
        assert ours_name == theirs_name, f"{path}: grad_fn {ours_name} vs {theirs_name}"


Case = tuple[str, Callable[[dict[str, Any]], Any]]

FUNCTIONAL: list[Case] = [
    ("vjp(f, x, v)", lambda d: AF.vjp(t_f, d["x"], d["v"])),
    ("vjp(s, x)", lambda d: AF.vjp(t_s, d["x"])),
    ("vjp(f2, (x, y), v)", lambda d: AF.vjp(t_f2, (d["x"], d["y"]), d["v"])),
    ("vjp(pair, x, (v, w))", lambda d: AF.vjp(t_pair, d["x"], (d["v"], d["w"]))),
    ("vjp(f, xg, v, create_graph=true)", lambda d: AF.vjp(t_f, d["xg"], d["v"], create_graph=True)),
    ("vjp(f, x, v, strict=true)", lambda d: AF.vjp(t_f, d["x"], d["v"], strict=True)),
    ("vjp(sin, x, v)", lambda d: AF.vjp(torch.sin, d["x"], d["v"])),
    ("jvp(f, x, v)", lambda d: AF.jvp(t_f, d["x"], d["v"])),
    ("jvp(f2, (x, y), (v, w))", lambda d: AF.jvp(t_f2, (d["x"], d["y"]), (d["v"], d["w"]))),
    ("jvp(f, xg, v, create_graph=true)", lambda d: AF.jvp(t_f, d["xg"], d["v"], create_graph=True)),
    ("jvp(s, x0)", lambda d: AF.jvp(t_s, d["x0"])),
    ("hvp(s, x, v)", lambda d: AF.hvp(t_s, d["x"], d["v"])),
    ("hvp(s2, (x, y), (v, w))", lambda d: AF.hvp(t_s2, (d["x"], d["y"]), (d["v"], d["w"]))),
    ("hvp(s, xg, v, create_graph=true)", lambda d: AF.hvp(t_s, d["xg"], d["v"], create_graph=True)),
    ("vhp(s, x, v)", lambda d: AF.vhp(t_s, d["x"], d["v"])),
    ("vhp(s2, (x, y), (v, w))", lambda d: AF.vhp(t_s2, (d["x"], d["y"]), (d["v"], d["w"]))),
    ("vhp(s, xg, v, create_graph=true)", lambda d: AF.vhp(t_s, d["xg"], d["v"], create_graph=True)),
    ("jacobian(f, x)", lambda d: AF.jacobian(t_f, d["x"])),
    ("jacobian(f2, (x, y))", lambda d: AF.jacobian(t_f2, (d["x"], d["y"]))),
    ("jacobian(pair, x)", lambda d: AF.jacobian(t_pair, d["x"])),
    ("jacobian(f, x, vectorize=true, strategy=\"forward-mode\")",
     lambda d: AF.jacobian(t_f, d["x"], vectorize=True, strategy="forward-mode")),
    ("jacobian(f, xg, create_graph=true)", lambda d: AF.jacobian(t_f, d["xg"], create_graph=True)),
    ("jacobian(exp, x)", lambda d: AF.jacobian(torch.exp, d["x"])),
    ("hessian(s, x)", lambda d: AF.hessian(t_s, d["x"])),
    ("hessian(s2, (x, y))", lambda d: AF.hessian(t_s2, (d["x"], d["y"]))),
    ("hessian(s, xg, create_graph=true)", lambda d: AF.hessian(t_s, d["xg"], create_graph=True)),
]

FUNC: list[Case] = [
    ("func.grad(s)(x)", lambda d: TF.grad(t_s)(d["x"])),
    ("func.grad(s2, argnums=1)(x, y)", lambda d: TF.grad(t_s2, argnums=1)(d["x"], d["y"])),
    ("func.grad(s2, argnums=(0, 1))(x, y)", lambda d: TF.grad(t_s2, argnums=(0, 1))(d["x"], d["y"])),
    ("func.grad(with_aux, has_aux=true)(x)", lambda d: TF.grad(t_with_aux, has_aux=True)(d["x"])),
    ("func.grad_and_value(s)(x)", lambda d: TF.grad_and_value(t_s)(d["x"])),
    ("func.grad(sin)(x0)", lambda d: TF.grad(torch.sin)(d["x0"])),
    ("func.grad(func.grad(sin))(x0)", lambda d: TF.grad(TF.grad(torch.sin))(d["x0"])),
    ("func.vjp(f, x)[0]", lambda d: TF.vjp(t_f, d["x"])[0]),
    ("func.vjp(f, x)[1](v)", lambda d: TF.vjp(t_f, d["x"])[1](d["v"])),
    ("func.vjp(f2, x, y)[1](v)", lambda d: TF.vjp(t_f2, d["x"], d["y"])[1](d["v"])),
    ("func.jvp(f, (x,), (v,))", lambda d: TF.jvp(t_f, (d["x"],), (d["v"],))),
    ("func.jvp(f2, (x, y), (v, w))", lambda d: TF.jvp(t_f2, (d["x"], d["y"]), (d["v"], d["w"]))),
    ("func.jvp(with_aux, (x,), (v,), has_aux=true)",
     lambda d: TF.jvp(t_with_aux, (d["x"],), (d["v"],), has_aux=True)),
    ("func.jacrev(f)(x)", lambda d: TF.jacrev(t_f)(d["x"])),
    ("func.jacfwd(f)(x)", lambda d: TF.jacfwd(t_f)(d["x"])),
    ("func.jacrev(f2, argnums=(0, 1))(x, y)", lambda d: TF.jacrev(t_f2, argnums=(0, 1))(d["x"], d["y"])),
    ("func.jacfwd(f2, argnums=1)(x, y)", lambda d: TF.jacfwd(t_f2, argnums=1)(d["x"], d["y"])),
    ("func.jacrev(pair)(x)", lambda d: TF.jacrev(t_pair)(d["x"])),
    ("func.jacfwd(pair)(x)", lambda d: TF.jacfwd(t_pair)(d["x"])),
    ("func.hessian(s)(x)", lambda d: TF.hessian(t_s)(d["x"])),
    ("func.hessian(s2, argnums=1)(x, y)", lambda d: TF.hessian(t_s2, argnums=1)(d["x"], d["y"])),
    ("func.jacfwd(func.jacrev(s))(x)", lambda d: TF.jacfwd(TF.jacrev(t_s))(d["x"])),
    ("func.jacrev(func.jacrev(s))(x)", lambda d: TF.jacrev(TF.jacrev(t_s))(d["x"])),
    ("func.vmap(f)(m)", lambda d: TF.vmap(t_f)(d["m"])),
    ("func.vmap(func.grad(s))(m)", lambda d: TF.vmap(TF.grad(t_s))(d["m"])),
    ("func.vmap(f2, in_dims=(0, none))(m, x)", lambda d: TF.vmap(t_f2, in_dims=(0, None))(d["m"], d["x"])),
    ("func.vmap(f, in_dims=1, out_dims=1)(m)", lambda d: TF.vmap(t_f, in_dims=1, out_dims=1)(d["m"])),
    ("func.vmap(func.jacrev(f))(m)", lambda d: TF.vmap(TF.jacrev(t_f))(d["m"])),
    ("func.linearize(f, x)[0]", lambda d: TF.linearize(t_f, d["x"])[0]),
    ("func.linearize(f, x)[1](v)", lambda d: TF.linearize(t_f, d["x"])[1](d["v"])),
    # results depend on a tensor from outside that requires grad: connected to its graph, as PyTorch's
    ("func.grad(s)(xg)", lambda d: TF.grad(t_s)(d["xg"])),
]
# vmap runs the function once on batched tensors: a result connected to an outside tensor's graph ends in the
# batched computation's last node, as PyTorch's (issue 22), so grad_fn names are compared too
FUNC_BATCHED: list[Case] = [("func.vmap(f)(xg)", lambda d: TF.vmap(t_f)(d["xg"])),
                            ("func.vmap(f2, in_dims=(0, none))(m, xg)",
                             lambda d: TF.vmap(t_f2, in_dims=(0, None))(d["m"], d["xg"]))]


@pytest.mark.parametrize("expr, expected", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_autograd_functional_built_ins_match_torch(expr: str, expected: Callable[[dict[str, Any]], Any]) -> None:
    same(language_result(expr), expected(torch_data()))


@pytest.mark.parametrize("expr, expected", FUNC, ids=[c[0] for c in FUNC])
def test_func_transforms_match_torch(expr: str, expected: Callable[[dict[str, Any]], Any]) -> None:
    same(language_result(expr), expected(torch_data()))


@pytest.mark.parametrize("expr, expected", FUNC_BATCHED, ids=[c[0] for c in FUNC_BATCHED])
def test_vmap_connected_to_an_outside_graph_matches_torch_with_the_node(
        expr: str, expected: Callable[[dict[str, Any]], Any]) -> None:
    same(language_result(expr), expected(torch_data()))


def test_the_products_return_the_output_and_the_product() -> None:
    # LANGUAGE.md section 9: vjp and jvp return (f(x), product)
    for expr in ("vjp(f, x, v)", "jvp(f, x, v)", "hvp(s, x, v)", "vhp(s, x, v)"):
        result = language_result(expr)
        assert isinstance(result, tuple) and len(result) == 2


def test_transformed_functions_are_values() -> None:
    text = out("def s(x):\n    return (x ** 2).sum()\nfunc\nfunc.grad\ng = func.grad(s)\ng\nfunc.vjp(s, [1, 2])[1]\n"
               "h = func.jacfwd(func.jacrev(s))\nh\ng([1, 2])\nh([1, 2])")
    x = torch.tensor([1.0, 2.0])
    assert text == ("<module 'torch.func'>\n<built-in function func.grad>\n<function func.grad(s)>\n<function vjp_fn>\n"
                    f"<function func.jacfwd(func.jacrev(s))>\n{TF.grad(lambda t: (t**2).sum())(x)!r}\n"
                    + repr(TF.hessian(lambda t: (t**2).sum())(x)) + "\n")


def test_func_can_be_rebound_and_reset_restores_it() -> None:
    s = Session()
    assert run("func = 3\nfunc\n:reset\nfunc", session=s).out == "tensor(3.)\n<module 'torch.func'>\n"


def test_help_pages() -> None:
    assert out(":help vjp").startswith("vjp(func, inputs, v=none, create_graph=false, strict=false): ")
    assert out(":help jvp").startswith("jvp(func, inputs, v=none, create_graph=false, strict=false): ")
    assert out(":help hessian").startswith("hessian(func, inputs, create_graph=false, strict=false, vectorize=false")
    assert out(":help func.grad").startswith("func.grad(func, argnums=0, has_aux=false): ")
    assert out(":help func.vmap").startswith("func.vmap(func, in_dims=0, out_dims=0, randomness='error'")
    page = out(":help func")
    for name in ("func.grad", "func.grad_and_value", "func.vjp", "func.jvp", "func.jacrev", "func.jacfwd",
                 "func.hessian", "func.vmap", "func.linearize", "vjp(f, x, v)", "hvp(f, x, v)"):
        assert name in page, name


# -- bad input -----------------------------------------------------------------------------------------------
PYTHON_WORDS = re.compile(r"NoneType|object|positional argument|<lambda>|ndarray|_data|__\w+__|\bfloat\b|\bint\b|"
                          r"\bstr\b|UserFunction|Builtin|Transformed|Tensor\b|\bNone\b|\bTrue\b|\bFalse\b")

BAD: list[tuple[str, str]] = [
    # tangents that do not match their primals
    ("func.jvp(f, (x,), ([1, 2],))", "func.jvp: tangent 0 has shape (2,) but primal 0 has shape (3,)"),
    ("func.jvp(f2, (x, y), (v,))", "func.jvp: tangents must have one tensor per primal"),
    ("func.jvp(f, x, v)", "func.jvp: primals must be a tuple of tensors"),
    ("jvp(f, x, [1, 2])", "jvp: v[0] has shape (2,) but the input it goes with has shape (3,)"),
    ("vjp(f, x, [1, 2])", "vjp: v[0] has shape (2,) but the output it goes with has shape (3,)"),
    ("hvp(s, (x, y), v)", "hvp: v has 1 tensors but the inputs has 2"),
    ("func.vjp(f, x)[1]([1, 2])", "vjp_fn: cotangent 0 has shape (2,) but the output it goes with has shape (3,)"),
    # argnums out of range
    ("func.grad(s, argnums=1)(x)", "func.grad(s): argnums=1 is out of range"),
    ("func.jacrev(f2, argnums=(0, 2))(x, y)", "func.jacrev(f2): argnums=2 is out of range"),
    ("func.jacfwd(f, argnums=-2)(x)", "func.jacfwd(f): argnums=-2 is out of range"),
    ("func.grad(s, argnums=\"x\")", "func.grad: argnums must be a whole number or a tuple of them"),
    # the function returns what the transform can't use
    ("func.grad(nothing)(x)", "func.grad: nothing must return a tensor, but it returned none"),
    ("func.grad(number)(x)", "func.grad: number must return a tensor, but it returned a number"),
    ("func.grad(f)(x)", "func.grad(f): the function must return a 0-d (scalar) tensor"),
    ("vjp(nothing, x)", "vjp: nothing must return a tensor or a tuple of tensors, but it returned none"),
    ("jacobian(words, x)", "jacobian: words must return a tensor or a tuple of tensors, but it returned a string"),
    ("hessian(f, x)", "hessian: the function must return a single element"),
    ("func.jacrev(nothing)(x)", "func.jacrev: nothing must return a tensor, or tuples or lists of tensors"),
    ("func.vmap(words)(m)", "func.vmap: words must return a tensor"),
    # vmap runs the function once, on all the samples together (PyTorch's errors, in our words)
    ("func.vmap(number)(m)", "a value of a tensor mapped by vmap was read as a number (.item(), or a conversion "
     "to a number)"),
    ("func.grad(f, has_aux=true)(x)", "func.grad: with has_aux=true, f must return a pair (output, aux)"),
    # vmap over mismatched batch sizes
    ("func.vmap(f2)(m, [1, 2])", "func.vmap(f2): the mapped dimensions have different sizes: input 0 has 4, "
                                 "input 1 has 2"),
    ("func.vmap(f2, in_dims=(0, none, 0))(m, x)", "func.vmap(f2): in_dims has 3 entries but the function was "
                                                   "called with 2"),
    ("func.vmap(f, in_dims=2)(m)", "func.vmap(f): in_dims maps input 0 over dimension 2, but it has only 2"),
    # the arguments themselves
    ("func.grad(3)", "expected a function, not a number (the first argument of func.grad"),
    ("vjp(x, x)", "expected a function, not a tensor of shape (3,) (the first argument of vjp"),
    ("vjp(f, \"a\")", "vjp: argument 'inputs' must be a tensor or a tuple of tensors, not a string"),
    ("jacobian(f, (x, none))",
     "jacobian: argument 'inputs' must be a tensor or a tuple of tensors, but its item 1 is none"),
    ("vjp(f, x, create_graph=1)", "vjp: argument 'create_graph' must be true or false, not a number"),
    ("vjp(f)", "vjp needs argument 'inputs'. vjp(func, inputs, v=none, create_graph=false, strict=false)"),
    ("func.grad(s, foo=1)", "func.grad does not take an argument 'foo'. func.grad(func, argnums=0, has_aux=false)"),
    ("func.vjp(f)", "func.vjp: give the point to differentiate at"),
    ("func.nonexistent", "gradcalc has no func.nonexistent; func has: grad, grad_and_value, hessian"),
    ("func.gard(s)", "func has no 'gard'; did you mean func.grad?"),
    ("vjp(f, x, strict=true, v=(x, x))", "vjp: v has 2 tensors but the outputs has 1"),
]
BAD_DEFS = DEFS + ("def nothing(x):\n    y = x\ndef number(x):\n    return x.sum().item()\n"
                   "def words(x):\n    return \"a\"\n")


@pytest.mark.parametrize("expr, message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_clear_error_in_our_words(expr: str, message: str) -> None:
    data = "".join(f"{k} = {_literal(a)}\n" for k, a in DATA.items())
    s = Session()
    assert run(BAD_DEFS + data, session=s).ok
    before = {k: id(v) for k, v in s.workspace.items()}
    r = run(f"r = {expr}\n", session=s)
    assert not r.ok and len(r.errors) == 1, r.err
    assert r.errors[0].startswith(message), r.errors[0]
    assert not PYTHON_WORDS.search(r.errors[0]), r.errors[0]
    assert {k: id(v) for k, v in s.workspace.items()} == before  # the failed statement bound nothing
    assert forward_ad._active == ()  # no dual level left open
    assert gc.is_grad_enabled()


def test_an_error_inside_a_forward_transform_leaves_no_dual_level_open() -> None:
    s = Session()
    src = ("def bad(x):\n    return x @ [1, 2]\nx = [1, 2, 3]\nfunc.jvp(bad, (x,), (x,))\n")
    r = run(src, session=s)
    assert not r.ok and "inconsistent tensor size" in r.errors[0]  # PyTorch's message for dot
    assert forward_ad._active == ()
    for expr in ("func.jacfwd(bad)(x)", "func.linearize(bad, x)", "jacobian(bad, x, vectorize=true, "
                 "strategy=\"forward-mode\")"):
        assert not run(expr, session=s).ok
        assert forward_ad._active == ()
    x = torch.tensor([1.0, 2.0, 3.0])
    assert run("func.jvp(sin, (x,), (x,))", session=s).out == repr(TF.jvp(torch.sin, (x,), (x,))) + "\n"


def test_an_error_inside_a_reverse_transform_leaves_the_engine_as_it_was() -> None:
    s = Session()
    r = run("def bad(x):\n    return (x @ [1, 2]).sum()\nx = [1, 2, 3] requires_grad\nfunc.grad(bad)(x)\n"
            "with no_grad:\n    func.grad(bad)(x)\n", session=s, keep_going=True)
    assert len(r.errors) == 2
    assert gc.is_grad_enabled()
    expected = TF.grad(lambda t: (t**2).sum())(torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert run("def q(t):\n    return (t ** 2).sum()\nfunc.grad(q)(x)", session=s).out == repr(expected) + "\n"
