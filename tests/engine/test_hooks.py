"""Hooks (tensor, node, post-accumulate) and failing backward calls, side by side with PyTorch.

Each scenario is written once against the PyTorch API and run on both libraries; what the hooks saw, what
they returned, and the gradients that result must be equal. A failing backward/grad must change nothing:
the graph still works afterwards, and leaves' `.grad` (object, values, version) are as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

LIBS = (gradcalc, torch)


def val(t: Any) -> Any:
    """A tensor (or a tuple of them) as plain Python numbers, for comparison across libraries."""
    if t is None:
        return None
    if isinstance(t, (tuple, list)):
        return tuple(val(x) for x in t)
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().round(10).tolist()
    return np.asarray(t._data).round(10).tolist()


def same(scenario: Any) -> list:
    """Run `scenario(lib, log)` on both libraries; the logs must be equal."""
    logs = []
    for lib in LIBS:
        log: list = []
        scenario(lib, log)
        logs.append(log)
    assert logs[0] == logs[1]
    return logs[0]


# -- tensor hooks -----------------------------------------------------------------------------------------
def test_tensor_hook_on_nonleaf_replaces_gradient_and_sees_retain_grad_order() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        y.register_hook(lambda g: log.append(("h1", val(g))) or g * 10)
        y.register_hook(lambda g: log.append(("h2", val(g))))
        y.sum().backward()
        log.append(("y.grad", val(y.grad)))
        log.append(("x.grad", val(x.grad)))

    assert same(scenario)[0] == ("h1", [1.0, 1.0])


def test_tensor_hook_on_leaf_and_post_accumulate_grad_hook() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", val(t.grad))))
        (x * 3).backward()
        (x * 3).backward()
        log.append(val(lib.autograd.grad(x * 3, [x])))  # grad(): the hook runs, nothing accumulates
        log.append(val(x.grad))

    same(scenario)


def test_removed_hooks_do_not_run_and_handles_are_context_managers() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        h = x.register_hook(lambda g: log.append("a"))
        with x.register_hook(lambda g: log.append("b")):
            (x * 3).backward()
        h.remove()
        h.remove()
        (x * 3).backward()
        log.append(val(x.grad))

    assert same(scenario) == ["a", "b", 6.0]


def test_hooks_registered_before_an_in_place_change_see_the_old_value() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        y = x * 1
        y.register_hook(lambda g: log.append(("before", val(g))))
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", val(g))))
        (y * y).backward()
        log.append(val(x.grad))

    same(scenario)


def test_captured_gradient_is_hooked_only_where_the_node_does_not_run() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        h = x * 3
        h.register_hook(lambda g: g * 10)
        log.append(val(lib.autograd.grad(h * h * x, [h, x])))
        log.append(val(lib.autograd.grad(h * h, [h], retain_graph=True)))

    same(scenario)


def test_register_hook_on_a_tensor_without_grad_is_an_error() -> None:
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.tensor(1.0).register_hook(lambda g: g)
        with pytest.raises(RuntimeError, match="non-leaf"):
            (lib.tensor(1.0, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hooks_under_create_graph_see_graph_tensors() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        y = x**3
        y.register_hook(lambda g: g * x)  # the replacement depends on x: second order sees it
        (g,) = lib.autograd.grad(y, [x], create_graph=True)
        log.append((val(g), g.requires_grad))
        log.append(val(lib.autograd.grad(g, [x])))

    same(scenario)


# -- node hooks ---------------------------------------------------------------------------------------------
def test_node_hooks_and_prehooks_see_and_replace_gradients() -> None:
    def scenario(lib: Any, log: list) -> None:
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        node = y.grad_fn
        node.register_prehook(lambda go: log.append(("pre", val(go))) or (go[0] * 2,))
        node.register_hook(lambda gi, go: log.append(("post", val(gi), val(go))) or (gi[0], None))
        acc = node.next_functions[0][0]
        acc.register_prehook(lambda go: log.append(("acc pre", val(go))))
        acc.register_hook(lambda gi, go: log.append(("acc post", val(gi), val(go))))
        y.sum().backward()
        log.append((val(a.grad), val(b.grad)))

    same(scenario)


def test_node_metadata_is_a_dict_kept_with_the_node() -> None:
    x = gradcalc.tensor(1.0, requires_grad=True)
    y = x * 2
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}


# -- a failing call changes nothing -----------------------------------------------------------------------
def _state(*leaves: Any) -> list:
    return [(id(t.grad), val(t.grad), t.grad._version if t.grad is not None else None) for t in leaves]


def test_grad_with_an_unused_input_fails_before_freeing_the_graph() -> None:
    def scenario(lib: Any, log: list) -> None:
        x = lib.tensor(2.0, requires_grad=True)
        u = lib.tensor(1.0, requires_grad=True)
        y = x.exp() * x
        with pytest.raises(RuntimeError, match="allow_unused"):
            lib.autograd.grad(y, [u])
        log.append(val(lib.autograd.grad(y, [x])))

    same(scenario)


def test_backward_through_a_freed_node_fails_before_accumulating() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    w = gradcalc.tensor(3.0, requires_grad=True)
    w.grad = gradcalc.tensor(1.0)
    y = x.exp()
    y.backward()
    before = _state(x, w)
    z = y * 2 + w * w  # w's branch could run before the freed ExpBackward0 is reached
    with pytest.raises(RuntimeError, match="retain_graph"):
        z.backward()
    assert _state(x, w) == before
    (w * w).backward()
    assert val(w.grad) == 7.0


def test_version_mismatch_fails_before_anything_runs() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    p = x * x
    s = p.exp()
    t = s * s + x * x
    s.mul_(1)
    with pytest.raises(RuntimeError, match="changed in place"):
        t.backward()
    assert x.grad is None
    (p * 3).backward()  # p's node was not freed by the failed call
    assert val(x.grad) == 12.0


def _raising_function(lib: Any, fail: list) -> Any:
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            if fail:
                raise ValueError("no")
            return g * 2

    return Twice


@pytest.mark.parametrize("how", ["function", "hook", "node hook", "listener"])
def test_failure_mid_walk_is_undone(how: str) -> None:
    lib = gradcalc
    fail = [True]
    x = lib.tensor(2.0, requires_grad=True)
    w = lib.tensor(3.0, requires_grad=True)
    x.grad = lib.tensor(5.0)
    w.grad = lib.tensor(1.0)
    if how == "function":
        a = _raising_function(lib, fail).apply(x * 3)
    else:
        a = x * 3
        if how == "hook":
            a.register_hook(lambda g: (_ for _ in ()).throw(ValueError("no")) if fail else None)
        elif how == "node hook":
            a.grad_fn.register_hook(lambda gi, go: (_ for _ in ()).throw(ValueError("no")) if fail else None)
    r = a.exp()
    r.retain_grad()
    y = r * w  # runs before a's node: w accumulates (in place) and r's grad is retained first
    before = _state(x, w) + [r.grad]
    grad_mode = lib.is_grad_enabled()

    def listener(event: Any) -> None:
        if fail and type(event).__name__ == "NodeRun" and event.node is a.grad_fn:
            raise ValueError("no")

    from gradcalc.autograd.graph import observe_backward

    with pytest.raises(ValueError):
        if how == "listener":
            with observe_backward(listener):
                y.backward()
        else:
            y.backward()
    assert _state(x, w) + [r.grad] == before
    assert lib.is_grad_enabled() == grad_mode
    fail.clear()
    y.backward()  # the graph was not freed
    slope = 6.0 if how == "function" else 3.0  # a = 2 * (3x) or 3x
    assert np.isclose(val(x.grad), 5.0 + 3.0 * np.exp(2.0 * slope) * slope)
    assert np.isclose(val(w.grad), 1.0 + np.exp(2.0 * slope))


@pytest.mark.filterwarnings("ignore")  # anomaly mode's warning, NumPy's 0/0
def test_anomaly_failure_is_undone() -> None:
    x = gradcalc.tensor(0.0, requires_grad=True)
    w = gradcalc.tensor(3.0, requires_grad=True)
    w.grad = gradcalc.tensor(1.0)
    y = x.sqrt() * 0.0 + w * w  # w accumulates before sqrt's NaN is found
    before = _state(w)
    with gradcalc.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="NaN"):
            y.backward()
    assert _state(w) == before and x.grad is None
    y.backward()  # outside anomaly mode: NaN is no error, and the graph was kept
    assert val(w.grad) == 7.0


def test_a_hook_returning_the_wrong_thing_is_an_error_that_changes_nothing() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    handle = y.register_hook(lambda g: gradcalc.tensor([1.0]))
    with pytest.raises(RuntimeError, match="shape"):
        y.sum().backward()
    handle.remove()
    node_handle = y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="returned 2 gradients where it was given 1"):
        y.sum().backward()
    node_handle.remove()
    assert x.grad is None
    y.sum().backward()
    assert val(x.grad) == [2.0, 4.0]


def test_a_post_accumulate_grad_hook_that_returns_something_is_pytorchs_error() -> None:
    for lib in LIBS:
        x = lib.tensor(2.0, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t * 7)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (x * x).backward()
    x = gradcalc.tensor(2.0, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: t * 7)
    with pytest.raises(RuntimeError):
        (x * x).backward()
    assert x.grad is None  # a failed backward changes nothing (PyTorch would have accumulated)


def test_the_first_retained_gradient_and_hook_of_a_process_are_seen() -> None:
    """The plain walk reads nodes' `_extras` only once some node was given one (hooks.extras_made): a fresh
    process's first retain_grad and first hook take effect in the very next backward."""
    import subprocess
    import sys

    code = (
        "import gradcalc as T\n"
        "from gradcalc.autograd import hooks\n"
        "assert not hooks.extras_made\n"
        "x = T.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = x * 3.0\n"
        "y.retain_grad()\n"
        "(y * y).sum().backward()\n"
        "print(y.grad.tolist())\n"
        "seen = []\n"
        "z = x * 5.0\n"
        "z.register_hook(lambda g: seen.append(g.tolist()))\n"
        "T.autograd.grad(z.sum(), x)\n"
        "print(seen)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[6.0, 12.0]", "[[1.0, 1.0]]"]  # d(sum y²)/dy = 2y; d(sum z)/dz = 1
