"""Literals and habits (issue 14): the constants as number literals, lists of booleans as bool tensors, the
rounding functions, the matrix transposes, `backward ... inputs`, and one pointer per habit users bring.

Expected values come from PyTorch (float64 default) or from LANGUAGE.md's own text."""

from __future__ import annotations

import math

import pytest
from gclang_testing import out, run

from gradcalc.lang.habits import HABITS

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def shown(value: object) -> str:
    """A torch value as the language prints it."""
    return repr(value).replace("dtype=torch.", "dtype=") + "\n"


# -- constants -----------------------------------------------------------------------------------------------
def test_constants_print_as_number_literals() -> None:
    # LANGUAGE.md section 1, literally
    assert out("pi") == "tensor(3.1416)\n"
    assert out("-inf") == "tensor(-inf)\n"
    assert out("2 * pi") == "tensor(6.2832)\n"
    assert out("e\nnan\ninf") == shown(torch.tensor(math.e)) + shown(torch.tensor(math.nan)) + shown(
        torch.tensor(math.inf))


@pytest.mark.parametrize("source, expected", [
    ("pi * 2", torch.tensor(math.pi) * 2),
    ("pi ** 2", torch.tensor(math.pi) ** 2),
    ("-pi", -torch.tensor(math.pi)),
    ("pi > 3", torch.tensor(math.pi) > 3),
    ("[-pi, pi]", torch.tensor([-math.pi, math.pi])),
    ("[[pi, 1], [2, e]]", torch.tensor([[math.pi, 1.0], [2.0, math.e]])),
    ("sin(pi / 2)", torch.sin(torch.tensor(math.pi / 2))),
    ("full([2], pi)", torch.full([2], math.pi)),
])
def test_constants_in_expressions(source: str, expected: object) -> None:
    assert out(source) == shown(expected)


def test_a_constant_as_an_operand_is_a_python_scalar() -> None:
    x = torch.tensor([1.0, 2.0], dtype=torch.float32)
    assert out("x = tensor([1, 2], dtype=float32)\nx * pi\n(x * pi).dtype\nx ** e") == (
        shown(x * math.pi) + "float32\n" + shown(x ** math.e))
    y = torch.tensor(2.0, requires_grad=True)
    assert out("y = 2 requires_grad\n(y * pi).grad_fn\ny ** pi") == "<MulBackward0>\n" + shown(y ** math.pi)


def test_a_user_function_receives_a_constant_as_a_tensor() -> None:
    assert out("def f(a):\n    return a\nf(pi)\nf(-inf)\nprint pi") == (
        "tensor(3.1416)\ntensor(-inf)\ntensor(3.1416)\n")


def test_constants_can_be_rebound_and_reset_restores_them() -> None:
    assert out("pi = 3\npi\n2 * pi\ndel pi\npi\ne = [1, 2]\ne\n:reset\ne") == (
        "tensor(3.)\ntensor(6.)\ntensor(3.1416)\ntensor([1., 2.])\ntensor(2.7183)\n")


# -- lists of booleans ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("source, data", [
    ("[true, false]", [True, False]),
    ("[True, False, True]", [True, False, True]),
    ("[[true, false], [false, true]]", [[True, False], [False, True]]),
    ("[true, 2.5]", [True, 2.5]),
    ("[[true, false], [1, 2]]", [[True, False], [1.0, 2.0]]),
])
def test_lists_of_booleans_are_what_torch_tensor_makes(source: str, data: list) -> None:
    assert out(source) == shown(torch.tensor(data))


def test_a_bool_list_literal_is_a_bool_tensor_to_built_ins() -> None:
    assert out("[true, false].dtype\nsum([true, false, true])\nwhere([true, false], 1, 2)") == (
        "bool\n" + shown(torch.tensor([True, False, True]).sum())
        + shown(torch.where(torch.tensor([True, False]), 1.0, 2.0)))


def test_a_ragged_list_of_booleans_is_an_error() -> None:
    r = run("[[true], [true, false]]")
    assert not r.ok and "ragged" in r.errors[0]


# -- rounding ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, node", [("round", "RoundBackward0"), ("floor", "FloorBackward0"),
                                        ("ceil", "CeilBackward0"), ("trunc", "TruncBackward0"),
                                        ("frac", "FracBackward0")])
def test_rounding_functions_values_nodes_and_gradients(name: str, node: str) -> None:
    data = [-2.5, -1.5, -0.7, 0.5, 1.5, 2.5, 3.2]
    x = torch.tensor(data, requires_grad=True)
    y = getattr(torch, name)(x)
    y.sum().backward()
    assert y.grad_fn.name() == node
    src = f"x = {data} requires_grad\ny = {name}(x)\ny\nbackward y.sum()\nx.grad\nx.{name}()"
    assert out(src) == shown(y) + shown(x.grad) + shown(getattr(x, name)())


# -- transposes ----------------------------------------------------------------------------------------------
def test_matrix_transposes_are_reachable() -> None:
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert out("m = [[1, 2], [3, 4]] requires_grad\nm.mT\nm.H\nm.mH") == shown(m.mT) + shown(m.H) + shown(m.mH)


# -- backward ... inputs -------------------------------------------------------------------------------------
def test_backward_inputs_accumulates_only_into_those() -> None:
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    c = a * 2
    z = c * b
    z.backward(inputs=[a], retain_graph=True)
    first = (a.grad.clone(), b.grad)
    z.backward(inputs=[c, b])  # a non-leaf input accumulates into its .grad, as PyTorch's
    src = ("a = 2 requires_grad\nb = 3 requires_grad\nc = a * 2\nz = c * b\n"
           "backward z inputs [a] retain_graph\na.grad\nb.grad\nbackward z inputs=[c, b]\nc.grad\nb.grad\na.grad")
    assert out(src) == (shown(first[0]) + "None\n" + shown(c.grad) + shown(b.grad) + shown(a.grad))


def test_backward_inputs_in_the_method_form() -> None:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward(inputs=b)
    src = "a = [1, 2] requires_grad\nb = [3, 4] requires_grad\n(a * b).sum().backward(inputs=b)\na.grad\nb.grad"
    assert out(src) == "None\n" + shown(b.grad)


def test_inputs_is_a_name_outside_backward() -> None:
    assert out("inputs = 2\ninputs * 3\nx = inputs requires_grad\nbackward x * x inputs [x]\nx.grad") == (
        "tensor(6.)\ntensor(4.)\n")


@pytest.mark.parametrize("flag, message", [
    ("inputs []", "inputs is empty"),
    ("inputs 3", "inputs needs a tensor or a list of tensors, not a number"),
    ("inputs [a, \"s\"]", "not a string"),
])
def test_bad_backward_inputs_fail_before_anything_accumulates(flag: str, message: str) -> None:
    r = run(f"a = 2 requires_grad\ny = a * a\nbackward y {flag}\na.grad\nbackward y\na.grad", keep_going=True)
    assert not r.ok and message in r.errors[0]
    assert r.out == "None\n" + shown(torch.tensor(4.0))  # the failed one freed and accumulated nothing


# -- habits: one pointer each --------------------------------------------------------------------------------
@pytest.mark.parametrize("source, where, pointer", [
    ("2^3", "1:2", "write ** for a power"),
    ("x = [true, false] ^ [true, true]", "1:19", "for exclusive or of booleans, write a != b"),
    ("ln(2)", "1:1", "the natural logarithm is log(x)"),
    ("help", "1:1", "type :help"),
    ("help(sin)", "1:1", "type :help"),
    ("quit", "1:1", "type :quit"),
    ("exit", "1:1", "type :quit"),
    ("exit()", "1:1", "type :quit"),
    ("class Net(nn.Module):\n    pass", "1:1", "gradcalc has no classes: build a model with Sequential(...)"),
    ("class", "1:1", "gradcalc has no classes"),
    ('loss = 1\nprint(f"loss {loss}")', "2:7", "gradcalc has no f-strings: print the parts separated by commas"),
    ("x = rf'a'", "1:5", 'gradcalc has no rf-strings: print the parts separated by commas instead (print "loss"'),
    ("nn.Module", "1:4", "nn.Module is PyTorch's, but not part of gradcalc's language: gradcalc has no classes"),
    ("autograd.Function", "1:10", "a custom autograd Function is a function block"),
    ("autograd.forward_ad.make_dual", "1:21", "forward mode is func.jvp(f, (x,), (v,))"),
    ("math.sin(1)", "1:1", "drop the math. prefix"),
    ("np.sin(1)", "1:1", "drop the np. (numpy.) prefix"),
    ("numpy.sin(1)", "1:1", "drop the np. (numpy.) prefix"),
    ("f = lambda v: v * 2", "1:5", "gradcalc has no lambda: write a function with def"),
    ("lambda: 0", "1:1", "gradcalc has no lambda"),
    ("max(2, 3)", "1:4", "write maximum(a, b)"),
    ("x = 3\nmax(x, 2)", "2:4", "write maximum(a, b)"),
    ("min(1, 2)", "1:4", "write minimum(a, b)"),
])
def test_each_habit_gets_a_pointer(source: str, where: str, pointer: str) -> None:
    r = run(source, filename="h.gc")
    assert not r.ok
    first = r.err.splitlines()[0]
    assert first.startswith(f"h.gc:{where}: error: "), first
    assert pointer in first
    assert "did you mean" not in first  # `ln` used to suggest `len`


def test_every_habit_of_the_table_has_a_test() -> None:
    tested = {"2^3": ("char", "^"), "ln": ("name", "ln"), "help": ("name", "help"), "quit": ("name", "quit"),
              "exit": ("name", "exit"), "math": ("name", "math"), "np": ("name", "np"),
              "numpy": ("name", "numpy"), "lambda v": ("word", "lambda"), "max": ("call", "max"),
              "min": ("call", "min"), "lambda": ("name", "lambda"), "class Net": ("word", "class"),
              "class": ("name", "class"), "nn.Module": ("member", "nn.Module"),
              "autograd.Function": ("member", "autograd.Function"),
              "autograd.forward_ad.make_dual": ("member", "autograd.forward_ad")}
    prefixes = {key for key in HABITS if key[0] == "string"}  # every string prefix with f in it: f"", rf''...
    assert {p for _, p in prefixes} == {a + b for a in "rRfF" for b in "rRfF" if "f" in (a + b).lower()
                                        and a.lower() != b.lower()} | {"f", "F"}
    assert set(HABITS) - prefixes == set(tested.values())


@pytest.mark.parametrize("prefix", ["f", "F", "rf", "Fr", "RF"])
def test_every_f_string_prefix_gets_the_pointer(prefix: str) -> None:
    r = run(f'print({prefix}"a {{b}}")')
    assert f"gradcalc has no {prefix}-strings" in r.errors[0]


def test_a_name_before_a_string_is_no_f_string() -> None:
    """`f "x"` (a space between) and `g"x"` are other mistakes: no f-string pointer."""
    for source in ('f "x"', 'g"x"'):
        assert "f-strings" not in run(source).errors[0]


def test_torch_prefix_is_pytorch_s_namespace_now() -> None:
    """torch.sin(x) used to get "drop the torch. prefix": it is PyTorch's spelling, and runs."""
    assert out("torch.tensor([1, 2])\ntorch.sin(1)") == shown(torch.tensor([1.0, 2.0])) + shown(
        torch.sin(torch.tensor(1.0)))


def test_lambda_alone_is_a_name_with_a_pointer() -> None:
    r = run("f = lambda")
    assert "gradcalc has no lambda" in r.errors[0]


def test_max_of_two_tensors_is_elementwise_as_in_pytorch() -> None:
    a, b = torch.tensor([1.0, 5.0]), torch.tensor([3.0, 2.0])
    assert out("a = [1, 5]\nb = [3, 2]\nmax(a, b)\nmaximum(a, b)") == shown(torch.max(a, b)) * 2
