"""Messages of failed calls and operators, in the language's words (LANGUAGE.md section 5, the end): a wrong
call names the built-in, the argument and why, then the signature `:help NAME` shows; a shape mismatch is
PyTorch's own message, for every operation that broadcasts and for the matrix products."""

from __future__ import annotations

import pytest
import torch
from gclang_testing import run

from gradcalc.lang.values.builtins import FUNCTIONS, METHODS


def error(source: str) -> str:
    r = run(source)
    assert not r.ok and len(r.errors) == 1, r.err
    assert "Traceback" not in r.err
    return r.errors[0]


def signature(name: str, method: bool = False) -> str:
    """The signature `:help NAME` shows (its text before the description)."""
    b = METHODS[name] if method else FUNCTIONS[name]
    return b.doc.split("): ", 1)[0] + ")" if "): " in b.doc else b.doc


# -- the examples of issue 14 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, message",
    [
        ("norm(none)", f"norm: argument 'x' must be a tensor, not none. {signature('norm')}"),
        ("n = [1., 2.]\nn.div_()", "div_ needs argument 'other'. x.div_(other)"),
        ("x = [1, 2]\nx.float(dtype=float32)", "float does not take an argument 'dtype'. x.float()"),
        ("x = [1, 2]\nlen(x, dim=0)", "len does not take an argument 'dim'. len(x)"),
        ("ones(none, 2)", f"ones: 'size' must be whole numbers, not none. {signature('ones')}"),
        ("x = 2 requires_grad\ny = x * x\nfloat(y.grad_fn)",
         "float needs a number or a one-element tensor, not a graph node <MulBackward0>"),
        ("x = [1, 2]\nsum(x, foo=1)", f"sum does not take an argument 'foo'. {signature('sum')}"),
        ("sin()", "sin needs argument 'x'. sin(x)"),
        ("sin(1, 2)", "sin takes 1 argument (x), but 2 were given. sin(x)"),
        ("x = [1, 2]\nx.sum(0, true, 3)",
         f"sum takes at most 2 arguments (dim, keepdim), but 3 were given. {signature('sum', True)}"),
        ("x = [1, 2]\nsum(x, x=x)", f"sum: argument 'x' is given twice (by position and by name). {signature('sum')}"),
        ("cat([[1, 2], 'a'])", f"cat: argument 'tensors' must be a tensor or a list of tensors, but its element 1 "
                               f"is a string. {signature('cat')}"),
        ("x = [1, 2]\nx.add(none)",
         f"add: argument 'b' must be a tensor or a number, not none. {signature('add', True)}"),
        ("zeros(2, dtype=3)", f"zeros: argument 'dtype' must be a dtype (float32, float64, int64 or bool), not 3. "
                              f"{signature('zeros')}"),
        ("jacobian(3, [1, 2])", "expected a function, not a number (the first argument of jacobian: a def, a built-in "
                                "or a transformed function)"),
        ("x = [1, 2] requires_grad\nx.backward(x, [[1, 2], [3, 4]])",
         f"backward: argument 'retain_graph' must be true or false, not a list of numbers. "
         f"{signature('backward', True)}"),
        ("x = [1, 2]\nx.sum('abc')", f"sum: argument 'dim' must be a whole number, not a string. "
                                     f"{signature('sum', True)}"),
        ("'a' * 3", "can't multiply a string and a number (operator '*')"),
        ("x = [1, 2]\nx -= sin", "can't subtract a tensor of shape (2,) and the built-in function sin (operator '-=')"),
        ("x = [1, 2]\nx < none", "can't compare a tensor of shape (2,) with none using '<'"),
        ("x = [1, 2]\nx[sin]", "can't index a tensor of shape (2,) with the built-in function sin"),
        ("x = [1, 2] > 1\n-x", "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                      "trying to invert a mask, use logical_not(x) instead."),
        ("x = [1, 2]\nx.grad = 'g'", "can't assign a string to .grad"),
    ],
)
def test_issue_examples_in_the_language_s_words(source: str, message: str) -> None:
    assert error(source) == message


# -- PyTorch's messages for shapes ----------------------------------------------------------------------------

T = torch
BROADCASTING = {  # the language's form, and PyTorch's
    "+": ("a + b", lambda a, b: a + b), "-": ("a - b", lambda a, b: a - b), "*": ("a * b", lambda a, b: a * b),
    "/": ("a / b", lambda a, b: a / b), "//": ("a // b", lambda a, b: a // b), "%": ("a % b", lambda a, b: a % b),
    "**": ("a ** b", lambda a, b: a**b), "==": ("a == b", lambda a, b: a == b), "<": ("a < b", lambda a, b: a < b),
    ">=": ("a >= b", lambda a, b: a >= b), "add": ("add(a, b)", T.add),
    "sub": ("sub(a, b, alpha=2)", lambda a, b: T.sub(a, b, alpha=2)), "mul": ("a.mul(b)", lambda a, b: a.mul(b)),
    "div": ("div(a, b)", T.div), "pow": ("pow(a, b)", T.pow), "maximum": ("maximum(a, b)", T.maximum),
    "minimum": ("minimum(a, b)", T.minimum), "max": ("max(a, b)", T.max),
    "where": ("where(a > 0, a, b)", lambda a, b: T.where(a > 0, a, b)),
    "clamp": ("clamp(a, min=b)", lambda a, b: T.clamp(a, min=b)), "logical_and": ("logical_and(a, b)", T.logical_and),
    "eq": ("eq(a, b)", T.eq), "allclose": ("allclose(a, b)", T.allclose),
    "add_": ("a.clone().add_(b)", lambda a, b: a.clone().add_(b)),
    "*=": ("c = a.clone()\nc *= b", lambda a, b: a.clone().mul_(b)),
    "copy_": ("a.clone().copy_(b)", lambda a, b: a.clone().copy_(b)),
}


@pytest.mark.parametrize("name", sorted(BROADCASTING))
@pytest.mark.parametrize("shapes", [((3,), (2,)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 1)), ((2, 2), (3,))])
def test_every_broadcasting_operation_says_what_pytorch_says(name: str, shapes: tuple) -> None:
    sa, sb = shapes
    form, python = BROADCASTING[name]
    with pytest.raises(RuntimeError) as caught:
        python(torch.ones(sa), torch.ones(sb))
    source = f"a = ones({', '.join(map(str, sa))})\nb = ones({', '.join(map(str, sb))})\n{form}"
    message = error(source)
    if name == "max":  # then a pointer for those who meant the larger of two values (habits.py)
        message = message.split("; ")[0]
    assert message == str(caught.value)


MATMUL = [
    ((2, 3), (2, 3)), ((2, 3), (4,)), ((3,), (4, 2)), ((3,), (4,)), ((2, 3, 4), (5,)), ((5,), (2, 3, 4)),
    ((2, 3, 4), (5, 6)), ((3, 4), (2, 5, 6)), ((2, 2, 3), (2, 2, 3)), ((2, 3, 4), (3, 4, 5)),
    ((2, 2, 3, 4), (3, 4, 5)),
]


@pytest.mark.parametrize("sa, sb", MATMUL)
@pytest.mark.parametrize("form", ["a @ b", "matmul(a, b)"])
def test_matrix_products_say_what_pytorch_says(sa: tuple, sb: tuple, form: str) -> None:
    with pytest.raises(RuntimeError) as caught:
        torch.ones(sa) @ torch.ones(sb)
    source = f"a = ones({', '.join(map(str, sa))})\nb = ones({', '.join(map(str, sb))})\n{form}"
    assert error(source) == str(caught.value)


@pytest.mark.parametrize(
    "source, python",
    [
        ("mm(ones(2, 3), ones(4, 5))", lambda: torch.mm(torch.ones(2, 3), torch.ones(4, 5))),
        ("mv(ones(2, 3), ones(4))", lambda: torch.mv(torch.ones(2, 3), torch.ones(4))),
        ("dot(ones(3), ones(2))", lambda: torch.dot(torch.ones(3), torch.ones(2))),
        ("bmm(ones(2, 3, 4), ones(3, 4, 5))", lambda: torch.bmm(torch.ones(2, 3, 4), torch.ones(3, 4, 5))),
        ("bmm(ones(2, 3, 4), ones(2, 5, 5))", lambda: torch.bmm(torch.ones(2, 3, 4), torch.ones(2, 5, 5))),
        ("addmm(ones(2, 2), ones(2, 3), ones(4, 2))",
         lambda: torch.addmm(torch.ones(2, 2), torch.ones(2, 3), torch.ones(4, 2))),
        ("[1, 2, 3] + [1, 2]", lambda: torch.tensor([1.0, 2, 3]) + torch.tensor([1.0, 2])),
    ],
)
def test_named_products_say_what_pytorch_says(source: str, python) -> None:  # noqa: ANN001
    with pytest.raises(RuntimeError) as caught:
        python()
    assert error(source) == str(caught.value)


# -- every built-in names itself and its signature --------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_names_a_wrong_argument_and_its_signature(name: str) -> None:
    message = error(f"{name}(foo_bar=2)")
    if message.startswith(f"{name} "):
        assert message == f"{name} does not take an argument 'foo_bar'. {signature(name)}"
    else:  # a built-in that checks its own arguments (nn.py, transforms.py): the signature first
        assert message.startswith(signature(name)) and "'foo_bar'" in message, message


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_names_a_wrong_argument_and_its_signature(name: str) -> None:
    message = error(f"x = [1, 2]\nx.{name}(foo_bar=2)")
    assert message == f"{name} does not take an argument 'foo_bar'. {signature(name, True)}"


# -- warnings --------------------------------------------------------------------------------------------------

WARNINGS = [
    "x = 3 requires_grad\ny = x * x\ny.grad",  # a non-leaf's .grad
    "x = 3 requires_grad\ny = x * x\nbackward y create_graph",  # the reference cycle
    "x = ones(2, 3, 4)\nx.T",  # x.T of more than 2 dimensions
    "x = [1, 2]\ntensor(x)",  # tensor(t) copies
    "var(tensor([1.]))",  # no degrees of freedom
    "x = [1, 2] requires_grad\nwith detect_anomaly:\n    y = x * 2",
    "x = tensor([1, 2], dtype=float32) requires_grad\ndef f(t):\n    return t * t\ngradcheck(f, x)",
    "binary_cross_entropy_with_logits(ones(2), ones(2), size_average=true)",
]


@pytest.mark.parametrize("source", WARNINGS)
def test_warnings_speak_the_language(source: str) -> None:
    from test_lang_messages_fuzz import python_words

    from gradcalc.lang.values.failures import fallback

    fallback.seen.clear()
    r = run(source, keep_going=True)
    assert r.warnings, r.err
    for text in r.warnings + r.errors:
        assert python_words(text) is None, text
    assert not fallback.seen


def test_pytorchs_mask_hint_points_at_what_the_language_has() -> None:
    # PyTorch's message suggests `~`, which the language does not have; logical_not(x) it has
    import io

    from gradcalc.lang import Session

    err = io.StringIO()
    Session(out=io.StringIO(), err=err).run("b = [true, false]\nb - 1\n", "t.gc")
    assert "with a bool tensor is not supported" in err.getvalue() and "logical_not(x)" in err.getvalue()
    assert "`~`" not in err.getvalue()
