"""Every code example of the seed tutorials (/work/shared/seeds), run unchanged on gradcalc and on PyTorch.

Each snippet is PyTorch source (the tutorials' own, with the formatting their web pages lost restored). It
runs twice, with `torch` bound first to PyTorch, then to gradcalc; its `assert`s must hold on both, and what
it prints is compared: the printed objects' values, dtype, requires_grad, leaf status and grad_fn (always),
and the printed text itself (when gradcalc's printing module is there). Expected values therefore come from
PyTorch, never from gradcalc.
"""

from __future__ import annotations

import builtins
import textwrap
import warnings
from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def node_name(fn: Any) -> str | None:
    if fn is None:
        return None
    return fn.name() if isinstance(fn, gradcalc.autograd.Node) else type(fn).__name__


def describe(r: Any) -> Any:
    if isinstance(r, (torch.Tensor, gradcalc.Tensor)):
        data = r.detach().numpy() if isinstance(r, torch.Tensor) else np.asarray(r._data)
        return ("tensor", np.array(data, dtype=float).round(12).tolist(), str(r.dtype).removeprefix("torch."),
                r.requires_grad, r.is_leaf, node_name(r.grad_fn))
    if isinstance(r, (list, tuple)):
        return tuple(describe(x) for x in r)
    return r


class Run:
    """One snippet's run on one library: what it printed, what it left in its namespace, what it warned."""

    def __init__(self, source: str, lib: Any, keep: tuple[str, ...]) -> None:
        self.printed: list[Any] = []
        self.text: list[str] = []
        # `import torch` and `from torch.autograd import grad` inside a snippet get the library under test
        def importer(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
            if name != "torch" and not name.startswith("torch."):
                return builtins.__import__(name, globals, locals, fromlist, level)
            module = lib
            for part in name.split(".")[1:] if fromlist else ():
                module = getattr(module, part)
            return module

        namespace: dict[str, Any] = {
            "__builtins__": {**vars(builtins), "__import__": importer, "print": self.print},
            "__name__": "snippet",
        }
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = "import torch\n" + textwrap.dedent(source)  # the tutorials' first line, implied in most
            exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102
        assert namespace["torch"] is lib
        self.kept = {name: describe(namespace[name]) for name in keep}
        self.warned = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]

    def print(self, *args: Any) -> None:
        self.printed.append(describe(args))
        try:
            self.text.append(" ".join(str(a) for a in args))
        except ModuleNotFoundError:  # gradcalc's printing module is not there yet
            self.text.append("<unprintable>")


def run_both(source: str, keep: tuple[str, ...] = ()) -> tuple[Run, Run]:
    expected, actual = Run(source, torch, keep), Run(source, gradcalc, keep)
    assert actual.printed == expected.printed
    assert actual.kept == expected.kept
    if "<unprintable>" not in actual.text:
        assert actual.text == expected.text
    return expected, actual


# -- Russian tutorial: methods of the autograd package ---------------------------------------------------------
def test_ru_gradients() -> None:
    run_both("""
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        y.backward()
        print(x.grad)
    """)


def test_ru_no_grad() -> None:
    run_both("""
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        with torch.no_grad():
            y = x ** 2
        print(y.requires_grad)  # Output: False
    """)


def test_ru_detach() -> None:
    run_both("""
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        z = y.detach()
        print(z.requires_grad)  # Output: False
    """)


def test_ru_higher_order_by_backward_twice() -> None:
    run_both("""
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        z = torch.sin(y)
        y.backward(retain_graph=True)
        x.grad.zero_()
        z.backward()
        print(x.grad)
    """, keep=("y", "z"))


def test_ru_custom_relu() -> None:
    if not hasattr(gradcalc.Tensor, "clamp"):
        pytest.xfail("clamp (elementwise.py) is not written yet")
    run_both("""
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return input.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                input, = ctx.saved_tensors
                grad_input = grad_output.clone()
                grad_input[input < 0] = 0
                return grad_input

        x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
        relu = MyReLU.apply
        y = relu(x)
        y.backward(torch.ones_like(x))
        print(x.grad)  # Output: tensor([0., 1., 0.])
    """, keep=("y",))


# -- German tutorial: leaves, retain_grad, retain_graph, create_graph, grad ------------------------------------
def test_de_leaf_tensors() -> None:
    run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a

        c = torch.tensor((5.))
        d = c * c

        assert a.requires_grad is True and a.is_leaf is True
        assert b.requires_grad is True and b.is_leaf is False
        assert c.requires_grad is False and c.is_leaf is True
        assert d.requires_grad is False and d.is_leaf is True  # sic!
        del a, b, c, d
    """)


def test_de_requires_grad_is_inherited() -> None:
    run_both("""
        a = torch.tensor((5.), requires_grad=True)
        b = torch.tensor((5.), requires_grad=True)
        c = torch.tensor((5.), requires_grad=False)

        d = torch.sin(a * b * c)

        assert d.requires_grad == any((x.requires_grad for x in (a, b, c)))
    """, keep=("d",))


def test_de_gradient_retention_warns() -> None:
    expected, actual = run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a
        b.backward()

        assert a.grad is not None
        assert b.grad is None  # generates a warning
    """, keep=("a",))
    assert len(expected.warned) == len(actual.warned) == 1
    assert "retain_grad" in actual.warned[0]


def test_de_retain_grad() -> None:
    expected, actual = run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a
        b.retain_grad()  # <- the difference
        b.backward()

        assert a.grad is not None
        assert b.grad is not None
    """, keep=("a", "b"))
    assert expected.warned == actual.warned == []


def test_de_secrets_of_grad() -> None:
    run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a
        b.retain_grad()
        b.backward()

        assert isinstance(a.grad, torch.Tensor)
        assert a.grad.requires_grad is False and a.grad.retains_grad is False and a.grad.is_leaf is True
        assert b.grad.requires_grad is False and b.grad.retains_grad is False and b.grad.is_leaf is True
    """)


def test_de_backward_twice_is_an_error() -> None:
    expected, actual = run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a
        b.retain_grad()
        b.backward()
        try:
            b.backward()
            failed = None
        except RuntimeError as e:
            failed = str(e)
        print(failed is not None)
    """)
    assert actual.printed == [(True,)]


def test_de_retain_graph_three_times() -> None:
    expected, actual = run_both("""
        a = torch.tensor((3.), requires_grad=True)
        b = a * a
        b.retain_grad()

        b.backward(retain_graph=True)
        print(a.grad)  # prints tensor((6.))

        b.backward(retain_graph=True)
        print(a.grad)  # prints tensor((12.))

        b.backward(retain_graph=False)
        print(a.grad)  # prints tensor((18.))

        try:
            b.backward(retain_graph=False)  # <- here we would get an error
        except RuntimeError:
            print("error")
    """, keep=("b",))
    assert [p[0][1] for p in actual.printed[:3]] == [6.0, 12.0, 18.0]  # the tutorial's numbers
    assert actual.printed[3] == ("error",)


def test_de_create_graph() -> None:
    expected, actual = run_both("""
        a = torch.tensor((5.), requires_grad=True)
        b = a * a
        b.retain_grad()
        b.backward(create_graph=True)

        # Here an interesting thing happens: now a.grad will require grad!
        assert a.grad.requires_grad is True
        assert a.grad.is_leaf is False

        # On the other hand, the grad of b does not require grad, as previously.
        assert b.grad.requires_grad is False
        assert b.grad.is_leaf is True
        print(a.grad, b.grad)
    """, keep=("a", "b"))
    assert any("cycle" in w for w in actual.warned)  # PyTorch warns only once per process: not compared


def test_de_create_graph_implies_retain_graph() -> None:
    run_both("""
        a = torch.tensor((5.), requires_grad=True)
        b = a * a * a
        b.backward(create_graph=True)
        b.backward()  # retain_graph defaulted to create_graph: the graph is still there
        print(a.grad)
    """)


def test_de_grad_second_derivative() -> None:
    expected, actual = run_both("""
        import torch
        from torch.autograd import grad

        a = torch.tensor((3.), requires_grad=True)
        b = a * a * a
        db_da = grad(b, a, create_graph=True)[0]
        assert db_da.requires_grad is True

        d2b_da2 = grad(db_da, a, create_graph=True)[0]
        # Side note: the grad function returns a tuple and the first element of it is what we need.
        assert d2b_da2.item() == 18
        assert d2b_da2.requires_grad is True
        print(db_da, d2b_da2)
    """)
    assert actual.printed[0][1][1] == 18.0


# -- Chinese tutorial: PyTorch's "Autograd mechanics" ----------------------------------------------------------
def test_zh_requires_grad_freezes() -> None:
    run_both("""
        w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)   # a pretrained parameter, frozen
        v = torch.tensor([0.5, -1.], requires_grad=True)             # a parameter being fine-tuned
        w.requires_grad_(False)
        loss = ((w * v).sum(1) ** 2).sum()
        loss.backward()
        print(w.grad, v.grad, loss)
    """)


def test_zh_grad_modes() -> None:
    run_both("""
        import torch
        x = torch.tensor([1., 2.], requires_grad=True)
        with torch.no_grad():
            y = x * 2            # no-grad mode: as if no input required grad
        w = y * x                # ... and its result is usable later in grad mode
        w.sum().backward()
        with torch.inference_mode():
            z = x * 2            # inference mode: not recorded either
        print(y.requires_grad, z.requires_grad, z.is_inference(), x.grad)
        try:
            (z * x).sum()        # an inference tensor cannot be saved by a recorded operation
        except RuntimeError:
            print("inference tensor refused")
    """)


def test_zh_inplace_correctness_checks() -> None:
    run_both("""
        a = torch.tensor([1., 2., 3.], requires_grad=True)
        b = a.exp()              # saves its output
        print(b._version)
        b.mul_(2)                # the version counter goes up
        print(b._version)
        try:
            b.sum().backward()   # the saved output changed: an error, never a wrong gradient
        except RuntimeError:
            print("caught")
    """)


def test_zh_inplace_rewrites_the_graph() -> None:
    run_both("""
        a = torch.tensor([1., 2., 3.], requires_grad=True)
        b = a * 2
        b.add_(1)                # the creator of b is now the in-place operation
        b.mul_(a)
        b.sum().backward()
        print(b, a.grad)
    """)


def test_zh_hogwild_threads() -> None:
    expected, actual = run_both("""
        import threading

        results = []

        # Define a train function to be used in different threads
        def train_fn():
            x = torch.ones(5, 5, requires_grad=True)
            # forward
            y = (x + 3) * (x + 4) * 0.5
            # backward
            y.sum().backward()
            # potential optimizer update
            results.append(x.grad)

        # User write their own threading code to drive the train_fn
        threads = []
        for _ in range(10):
            p = threading.Thread(target=train_fn, args=())
            p.start()
            threads.append(p)

        for p in threads:
            p.join()
        print(len(results), results[0])
        assert all(bool((r == results[0]).all()) for r in results)
    """)
    assert actual.printed[0][0] == 10


def test_zh_graph_shared_between_threads() -> None:
    expected, actual = run_both("""
        import threading

        x = torch.tensor([1., 2.], requires_grad=True)
        shared = (x.exp() * x).sum()      # the first part of the graph, made in one thread
        errors = []

        def second_part():
            try:
                shared.backward()         # without retain_graph: only one thread can go through it
            except RuntimeError:
                errors.append("retain_graph")

        threads = [threading.Thread(target=second_part) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(len(errors))
    """)
    assert actual.printed == [(3,)]
