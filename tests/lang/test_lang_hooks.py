"""Hooks written in the language, side by side with the same programs written for PyTorch.

Each case is one program built twice from the same steps: as a gradcalc script and as a Python program on
torch. Hooks print what they receive (`print "h1", g` in the language, the same line from Python), so the
two outputs, compared line by line, check the hooks' order of firing against each other, against
retain_grad and against accumulation into `.grad`, the gradients they see (graph tensors under
create_graph) and the effect of what they return. Many programs are generated at random; a few fixed ones
cover what random programs rarely reach (in-place changes of a hooked tensor, removal mid-way).
"""

from __future__ import annotations

import io
import random
import warnings
from typing import Any

import pytest
from gclang_testing import run

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def _fmt(value: Any) -> str:
    """A value as the language prints it, from PyTorch's repr (LANGUAGE.md section 1)."""
    if isinstance(value, torch.Tensor):
        return repr(value).replace("dtype=torch.", "dtype=")
    if isinstance(value, tuple):
        items = [_fmt(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(value)


def torch_output(program: str) -> str:
    """Run a Python program on torch; what its `say(...)` calls printed."""
    stream = io.StringIO()

    def say(*values: Any) -> None:
        stream.write(" ".join(v if isinstance(v, str) else _fmt(v) for v in values) + "\n")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(program, "<torch program>", "exec"), {"torch": torch, "say": say})  # noqa: S102
    return stream.getvalue()


def gradcalc_output(script: str) -> str:
    r = run(script)
    assert r.ok, r.err + "\n" + script
    return r.out


class Program:
    """A program as two texts: the gradcalc script and the torch program, written step by step."""

    def __init__(self) -> None:
        self.gc: list[str] = []
        self.py: list[str] = []

    def both(self, text: str) -> None:
        """A line that reads the same in both (method calls, arithmetic)."""
        self.gc.append(text)
        self.py.append(text)

    def each(self, gc: str, py: str) -> None:
        self.gc.append(gc)
        self.py.append(py)

    def leaf(self, name: str, values: list[float]) -> None:
        self.each(f"{name} = {values} requires_grad", f"{name} = torch.tensor({values}, requires_grad=True)")

    def say(self, indent: str, label: str, *exprs: str) -> None:
        self.each(
            f'{indent}print "{label}", {", ".join(exprs)}', f'{indent}say("{label}", {", ".join(exprs)})'
        )

    def hook(self, name: str, params: str, label: str, shown: list[str], returns: str | None) -> None:
        """`def name(params):` printing `label` and `shown`, returning `returns` (none when None)."""
        self.both(f"def {name}({params}):")
        self.say("    ", label, *shown)
        if returns is not None:
            self.both(f"    return {returns}")
        self.each("", "")  # a blank line ends the block in both

    def backward(self, root: str, flag: str | None) -> None:
        gc_flag = f" {flag}" if flag else ""
        py_flag = f"{flag}=True" if flag else ""
        self.each(f"backward {root}{gc_flag}", f"{root}.backward({py_flag})")

    def check(self) -> str:
        gc = "\n".join(self.gc) + "\n"
        expected = torch_output("\n".join(self.py) + "\n")
        got = gradcalc_output(gc)
        assert got == expected, gc
        return got


# -- random programs -------------------------------------------------------------------------------------
UNARY = ("sin", "exp", "tanh", "sigmoid")
BINARY = ("{a} * {b}", "{a} + {b}", "{a} - {b}", "{a} / ({b} * {b} + 1)")


def random_program(seed: int) -> Program:
    rng = random.Random(seed)
    p = Program()
    leaves = ["a", "b", "c"][: rng.randint(1, 3)]
    for name in leaves:
        p.leaf(name, [round(rng.uniform(-1.5, 1.5), 2) for _ in range(2)])
    tensors = list(leaves)
    unary_made: list[str] = []  # non-leaves made by one-input operations: their node hooks see 1 gradient
    used: set[str] = set()
    for k in range(rng.randint(2, 5)):
        name = f"t{k}"
        if rng.random() < 0.5:
            a = rng.choice(tensors)
            p.both(f"{name} = {a}.{rng.choice(UNARY)}()")
            unary_made.append(name)
            used.add(a)
        else:
            a, b = rng.choice(tensors), rng.choice(tensors)
            p.both(f"{name} = " + rng.choice(BINARY).format(a=a, b=b))
            used.update((a, b))
        tensors.append(name)
    # the loss sums what nothing else used: every tensor leads to it, so every hook has a chance to fire
    sinks = [t for t in tensors if t not in used]
    p.both(f"loss = ({' + '.join(sinks)}).sum()")
    non_leaves = [t for t in tensors if t not in leaves]

    handles: list[str] = []
    retained: set[str] = set()
    for k in range(rng.randint(1, 6)):
        kind = rng.choice(("tensor", "tensor", "post", "node", "prehook", "retain"))
        label = f"h{k}"
        f = f"f{k}"
        if kind == "tensor":
            target = rng.choice(tensors)
            returns = rng.choice((None, "g * 2", "g + 1"))
            p.hook(f, "g", label, ["g"], returns)
            p.both(f"{label} = {target}.register_hook({f})")
        elif kind == "post":
            target = rng.choice(leaves)
            p.hook(f, "t", label, ["t.grad"], None)
            p.both(f"{label} = {target}.register_post_accumulate_grad_hook({f})")
        elif kind == "node":
            target = rng.choice(non_leaves)
            returns = "(gi[0] * 3,)" if target in unary_made and rng.random() < 0.5 else None
            p.hook(f, "gi, go", label, ["gi", "go"], returns)
            p.both(f"{label} = {target}.grad_fn.register_hook({f})")
        elif kind == "prehook":
            target = rng.choice(non_leaves)
            returns = rng.choice((None, "(go[0] * 0.5,)"))
            p.hook(f, "go", label, ["go"], returns)
            p.both(f"{label} = {target}.grad_fn.register_prehook({f})")
        else:
            target = rng.choice(non_leaves)
            p.both(f"{target}.retain_grad()")
            retained.add(target)
            continue
        handles.append(label)
    if handles and rng.random() < 0.3:
        p.both(f"{rng.choice(handles)}.remove()")

    mode = rng.choice(("once", "twice", "create_graph"))
    if mode == "once":
        p.backward("loss", None)
    elif mode == "twice":  # the second backward accumulates, and the hooks run again
        p.backward("loss", "retain_graph")
        p.backward("loss", None)
    else:
        p.backward("loss", "create_graph")
    for t in leaves + sorted(retained):
        p.say("", f"{t}.grad", f"{t}.grad")
    return p


@pytest.mark.parametrize("seed", range(160))
def test_random_programs_with_hooks_print_what_pytorch_prints(seed: int) -> None:
    random_program(seed).check()


# -- fixed programs --------------------------------------------------------------------------------------
def test_hooks_and_retain_grad_fire_in_pytorchs_order() -> None:
    p = Program()
    p.leaf("x", [1.0, 2.0])
    p.both("y = x * x")
    p.hook("first", "g", "first", ["g"], "g * 10")
    p.hook("second", "g", "second", ["g"], None)
    p.hook("post", "t", "post", ["t.grad"], None)
    p.hook("pre", "go", "pre", ["go"], None)
    p.hook("after", "gi, go", "after", ["gi", "go"], None)
    p.both("h1 = y.register_hook(first)")
    p.both("y.retain_grad()")  # retain_grad registered between two hooks still runs after both
    p.both("h2 = y.register_hook(second)")
    p.both("h3 = x.register_post_accumulate_grad_hook(post)")
    p.both("h4 = y.grad_fn.register_prehook(pre)")
    p.both("h5 = y.grad_fn.register_hook(after)")
    p.both("s = y.sum()")
    p.backward("s", "retain_graph")
    p.say("", "y.grad", "y.grad")
    p.say("", "x.grad", "x.grad")
    p.both("h1.remove()")
    p.both("h4.remove()")
    p.backward("s", None)
    p.say("", "y.grad", "y.grad")
    p.say("", "x.grad", "x.grad")
    out = p.check()
    assert out.splitlines()[:2] == ["first tensor([1., 1.])", "second tensor([10., 10.])"]


def test_hooks_under_create_graph_see_graph_tensors_and_can_be_differentiated() -> None:
    p = Program()
    p.leaf("x", [0.5, -1.0])
    p.both("y = (x ** 3).sum()")
    p.hook("seen", "g", "seen", ["g", "g.requires_grad"], "g * x")
    p.both("h = x.register_hook(seen)")
    p.backward("y", "create_graph")
    p.say("", "x.grad", "x.grad")
    p.both("h.remove()")
    p.both("z = x.grad.sum()")
    p.each("zero_grad x", "x.grad = None")
    p.backward("z", None)
    p.say("", "second", "x.grad")
    p.check()


def test_hooks_registered_before_an_in_place_change_see_the_old_values_gradient() -> None:
    p = Program()
    p.leaf("x", [1.0, 3.0])
    p.both("t = x * 2")
    p.hook("before", "g", "before", ["g"], None)
    p.hook("after", "g", "after", ["g"], "g * 100")
    p.both("h1 = t.register_hook(before)")
    p.each("t *= 5", "t.mul_(5)")
    p.both("h2 = t.register_hook(after)")
    p.both("loss = (t * t).sum()")
    p.backward("loss", None)
    p.say("", "x.grad", "x.grad")
    p.check()


def test_node_hook_and_prehook_replace_gradients() -> None:
    p = Program()
    p.leaf("a", [1.0, 2.0])
    p.leaf("b", [3.0, -1.0])
    p.both("y = a * b")
    p.hook("swap", "gi, go", "swap", ["gi", "go"], "(gi[1], gi[0])")
    p.hook("half", "go", "half", ["go"], "(go[0] * 0.5,)")
    p.both("h1 = y.grad_fn.register_hook(swap)")
    p.both("h2 = y.grad_fn.register_prehook(half)")
    p.both("s = y.sum()")
    p.backward("s", None)
    p.say("", "grads", "a.grad", "b.grad")
    p.check()


def test_hooks_fire_during_grad_calls_too() -> None:
    p = Program()
    p.leaf("x", [2.0])
    p.both("y = (x * x).sum()")
    p.hook("f", "g", "f", ["g"], "g * 3")
    p.both("h = x.register_hook(f)")
    p.each("r = grad(y, x)", "r = torch.autograd.grad(y, x)")
    p.say("", "r", "r")
    p.say("", "x.grad", "x.grad")  # grad() accumulates nothing
    p.check()


# -- what the language adds: messages, printing, a failing hook ----------------------------------------
def test_a_handle_prints_without_python_words() -> None:
    r = run(
        "x = 1 requires_grad\ny = x * 2\ndef f(g):\n    return g\n\nh = y.register_hook(f)\nh\n"
        "k = y.grad_fn.register_prehook(f)\nk\nh.remove()\nh\nh.removed\n"
    )
    assert r.out.splitlines() == [
        "<hook f on the gradient of a tensor of shape ()>",
        "<prehook f on MulBackward0>",
        "<hook f on the gradient of a tensor of shape (), removed>",
        "True",
    ]


def test_a_hook_that_fails_stops_backward_at_its_line_and_changes_nothing() -> None:
    script = (
        "x = [1, 2] requires_grad\n"
        "y = x * x\n"
        "retain_grad y\n"
        "def bad(g):\n"
        '    print "seen", g\n'
        "    return g * nothing_here\n"
        "\n"
        "h = x.register_hook(bad)\n"
        "backward y gradient [1, 1]\n"
        "x.grad\n"
        "y.grad\n"
        "y.grad_fn.saved\n"
        "h.remove()\n"
        "backward y gradient [1, 1]\n"
        "x.grad\n"
    )
    r = run(script, filename="t.gc", keep_going=True)
    assert r.errors == ["name 'nothing_here' is not defined"]
    assert "t.gc:6:16: error" in r.err  # located in the hook's body
    lines = r.out.splitlines()
    assert lines[0] == "seen tensor([2., 4.])"
    assert lines[1:3] == ["None", "None"]  # neither .grad changed
    assert "freed" not in r.out  # nothing freed: the second backward runs
    assert lines[-1] == "tensor([2., 4.])"


@pytest.mark.parametrize(
    "source, message",
    [
        ("c = [1, 2]\nc.register_hook(f)\n", "does not require grad"),
        ("y.register_post_accumulate_grad_hook(f)\n", "needs a leaf"),
        ("y.register_hook(3)\n", "needs a function"),
        ("y.register_hook()\n", "takes one argument"),
        ("y.grad_fn.register_hook(f)\n", "must take 2 arguments (grad_inputs, grad_outputs)"),
        ("def two(a, b):\n    return a\n\ny.register_hook(two)\n", "must take 1 argument"),
        ("h = y.register_hook(f)\nh.detach()\n", "a hook handle has no method 'detach'"),
    ],
)
def test_registration_errors_say_what_is_wrong(source: str, message: str) -> None:
    r = run("x = [1, 2] requires_grad\ny = x * x\ndef f(g):\n    return g\n\n" + source)
    assert len(r.errors) == 1 and message in r.errors[0], r.err


def test_pytorch_refuses_the_same_registrations() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.tensor([1.0, 2.0]).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * x).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize(
    "returns, message",
    [
        ('"text"', "returned a string"),
        ("[1, 2, 3]", "shape (3,)"),
        ("g.float()", "dtype from float64 to float32"),
    ],
)
def test_a_tensor_hook_returning_the_wrong_thing_is_an_error(returns: str, message: str) -> None:
    r = run(
        f"x = [1, 2] requires_grad\ny = x * x\ndef f(g):\n    return {returns}\n\ny.register_hook(f)\n"
        "backward y gradient [1, 1]\nx.grad\n",
        keep_going=True,
    )
    assert message in r.errors[0]
    assert r.out.splitlines()[-1] == "None"
    # PyTorch fails on each of these too
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    bad = {"g.float()": lambda g: g.float(), "[1, 2, 3]": lambda g: torch.ones(3)}.get(returns, lambda g: "text")
    y.register_hook(bad)
    with pytest.raises((RuntimeError, TypeError)):
        y.backward(torch.ones(2))


def test_node_hook_results_are_checked() -> None:
    base = "x = [1, 2] requires_grad\ny = x.exp()\n"
    r = run(base + "def f(gi, go):\n    return gi[0]\n\ny.grad_fn.register_hook(f)\nbackward y gradient [1, 1]\n")
    assert "returns a tuple of 1 gradient" in r.errors[0]
    r = run(base + "def f(go):\n    return (go[0], go[0])\n\ny.grad_fn.register_prehook(f)\n"
            "backward y gradient [1, 1]\n")
    assert "returned 2 gradients where ExpBackward0 has 1 grad_outputs" in r.errors[0]
    r = run(base + "def f(t):\n    return t\n\nx.register_post_accumulate_grad_hook(f)\n"
            "backward y gradient [1, 1]\nx.grad\n", keep_going=True)
    assert "returns nothing" in r.errors[0] and r.out.splitlines()[-1] == "None"
