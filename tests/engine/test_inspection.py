"""`gradcalc.autograd.inspection`, the read-only API a front end reads the engine through, against PyTorch:
each graph is built in both libraries and what inspection reports of gradcalc's is compared with what
PyTorch's public attributes say of its own (`next_functions`, `_saved_*`, `_version`, `is_leaf`...)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import inspection as ins
from gradcalc.autograd.reasons import REASONS

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def both(build: Any) -> tuple[Any, Any]:
    """`build(lib)` run on gradcalc and on torch."""
    return build(gradcalc), build(torch)


def torch_edges(fn: Any) -> list[tuple[str, int] | None]:
    return [None if n is None else (type(n).__name__, nr) for n, nr in fn.next_functions]


def our_edges(node: Any) -> list[tuple[str, int] | None]:
    return [None if e is None else (e.node.name(), e.output_nr) for e in ins.inputs(node)]


GRAPHS = {
    "mul": lambda T, x, y: x * y,
    "mul_number": lambda T, x, y: x * 2.0,
    "pow": lambda T, x, y: x**3,
    "sub_const": lambda T, x, y: x - T.tensor([1.0, 2.0, 3.0]),
    "unbind": lambda T, x, y: T.unbind(x, 0)[1],
    "matmul": lambda T, x, y: x.reshape(3, 1) @ y.reshape(1, 3),
    "exp_sum": lambda T, x, y: T.exp(x).sum(),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_inputs_outputs_and_saved_values_are_pytorchs(name: str) -> None:
    def build(T: Any) -> tuple[Any, Any, Any]:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = T.tensor([4.0, 5.0, 6.0], requires_grad=True)
        return GRAPHS[name](T, x, y), x, y

    (ours, _, _), (theirs, _, _) = both(build)
    node, fn = ours.grad_fn, theirs.grad_fn
    assert node.name() == type(fn).__name__
    assert our_edges(node) == torch_edges(fn)
    for v in ins.saved(node):
        theirs_v = getattr(fn, f"_saved_{v.name}")
        if v.is_tensor and v.value is not None:
            np.testing.assert_allclose(np.asarray(v.value.detach().numpy()), theirs_v.detach().numpy())
            assert v.saved_version == v.version and v.saved_version in (0, None) and not v.freed
        elif not v.is_tensor:
            assert v.value == theirs_v or (v.value is None and theirs_v is None)
    assert set(ins.saved_names(node)) <= {a.removeprefix("_saved_") for a in dir(fn) if a.startswith("_saved_")}


def test_saved_versions_and_freeing_are_pytorchs() -> None:
    def build(T: Any) -> tuple[Any, Any]:
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0])
        y = x * w
        with T.no_grad():
            w.add_(1.0)
        return y, w

    (y, w), (ty, tw) = both(build)
    (other,) = [v for v in ins.saved(y.grad_fn) if v.name == "other"]
    assert other.value is w  # the very tensor saved
    assert (other.saved_version, other.version) == (0, tw._version) == (0, 1)
    assert other.index == 1
    with pytest.raises(RuntimeError):
        ty.sum().backward()
    z = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    p = (z * z).sum()
    node = p.grad_fn.next_functions[0][0]
    assert not ins.is_freed(node)
    p.backward()
    assert ins.is_freed(node) and all(v.freed and v.value is None for v in ins.saved(node))
    tz = torch.tensor([1.0, 2.0], requires_grad=True)
    tp = (tz * tz).sum()
    tp.backward()
    with pytest.raises(RuntimeError):  # PyTorch's node freed them too
        tp.grad_fn.next_functions[0][0]._saved_self  # noqa: B018


def test_tensor_state_is_pytorchs() -> None:
    def build(T: Any) -> list[Any]:
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 2
        y.retain_grad()
        v = y[0]
        c = T.tensor([1.0])
        with T.no_grad():
            c.mul_(3.0)
        return [x, y, v, c]

    ours, theirs = both(build)
    for t, tt in zip(ours, theirs, strict=True):
        s = ins.state(t)
        assert (s.requires_grad, s.is_leaf, s.retains_grad, s.version, s.is_view, s.output_nr) == (
            tt.requires_grad, tt.is_leaf, tt.retains_grad, tt._version, tt._is_view(), tt.output_nr)
        assert (s.base is not None) == (tt._base is not None)
        assert (s.grad_fn is None) == (tt.grad_fn is None)
    assert ins.state(ours[2]).base is ours[1]


def test_grad_of_reads_without_the_warning(recwarn: Any) -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    y = x * 3
    assert ins.grad_of(y) is None and ins.grad_of(x) is None
    assert not recwarn.list
    y.backward()
    assert ins.grad_of(x).item() == 3.0


def test_edges_of_tensors() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    a, b = gradcalc.unbind(x * 2, 0)
    assert ins.edge_of(b) == ins.Edge(b.grad_fn, 1)
    assert ins.edge_of(gradcalc.tensor(1.0)) is None
    fresh = gradcalc.tensor(1.0, requires_grad=True)
    assert ins.edge_of(fresh, create=False) is None  # no AccumulateGrad made by reading
    edge = ins.edge_of(fresh)
    assert edge is not None and edge.node.name() == "AccumulateGrad" and ins.leaf(edge.node) is fresh
    assert ins.origin(edge.node) is None and ins.leaf(a.grad_fn) is None


def test_version_key_is_shared_by_views_and_aliases() -> None:
    x = gradcalc.tensor([1.0, 2.0, 3.0])
    assert ins.version_key(x) is None
    v = x[1:]
    d = x.detach()
    assert ins.version_key(x) is not None
    assert ins.version_key(x) is ins.version_key(v) is ins.version_key(d)
    assert ins.version_key(gradcalc.tensor([1.0]).clone()) is not ins.version_key(x)


def test_snapshot_keeps_values_as_they_were() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    s = ins.snapshot(y)
    assert s.grad_fn is y.grad_fn and s.requires_grad and s.output_nr == y.output_nr
    with gradcalc.no_grad():
        y.mul_(10.0)
    assert s.tolist() == [2.0, 4.0] and ins.snapshot(None) is None


def test_hooks_and_nodes_below() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    y = x * 3
    z = y.exp()

    def tensor_hook(g: Any) -> None:
        return None

    def node_hook(gi: Any, go: Any) -> None:
        return None

    y.register_hook(tensor_hook)
    z.grad_fn.register_hook(node_hook)
    y.retain_grad()
    h = ins.hooks(y.grad_fn)
    assert h.tensor == {0: (tensor_hook,)} and h.retained == (0,) and h.hooks == ()
    assert ins.hooks(z.grad_fn).hooks == (node_hook,)
    assert ins.hooks(x.grad_fn or y.grad_fn.next_functions[0][0]).tensor == {}
    below = [n.name() for n in ins.nodes_below([z.grad_fn])]
    assert below == ["ExpBackward0", "MulBackward0", "AccumulateGrad"]
    assert ins.reaches([z.grad_fn], y.grad_fn) and not ins.reaches([y.grad_fn], z.grad_fn)


def test_formula_reads_the_class_attribute() -> None:
    class ThrowawayBackward(gradcalc.autograd.Node):
        formula = "grad * 2"

        def apply(self, g: Any) -> tuple:
            return (g * 2,)

    assert ins.formula(ThrowawayBackward()) == "grad * 2"
    x = gradcalc.tensor(1.0, requires_grad=True)
    node = (x * x).grad_fn
    assert ins.formula(node) is None or isinstance(ins.formula(node), str)


class _Spec:
    """What a node class's op spec holds of its formula (issue 19's `NodeSpec.formula`)."""

    def __init__(self, formula: Any) -> None:
        self.formula = formula


def test_formula_per_input_is_written_on_one_line_in_pytorchs_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """derivatives.yaml writes one formula per input (`self: grad * other`, `other: grad * self`); a spec that
    keeps them by input name is shown as derivatives.yaml lists them, in the spec's order."""
    x = gradcalc.tensor(2.0, requires_grad=True)
    mul = (x * x).grad_fn
    cls = type(mul)
    monkeypatch.setattr(cls, "formula", {"self": "grad * other", "other": "grad * self"}, raising=False)
    assert ins.formulas(mul) == (("self", "grad * other"), ("other", "grad * self"))
    assert ins.formula(mul) == "self: grad * other; other: grad * self"
    monkeypatch.setattr(cls, "formula", None, raising=False)
    monkeypatch.setattr(cls, "spec", _Spec({"other": "grad * self"}), raising=False)
    assert ins.formula(mul) == "other: grad * self"  # the spec's, when the class has none of its own
    monkeypatch.setattr(cls, "spec", _Spec("grad * 2 * self"), raising=False)
    assert ins.formulas(mul) == ((None, "grad * 2 * self"),) and ins.formula(mul) == "grad * 2 * self"
    for nothing in ("", {}, 3, {"self": None}):  # nothing written, or nothing that is a formula
        monkeypatch.setattr(cls, "spec", _Spec(nothing), raising=False)
        assert ins.formula(mul) is None and ins.formulas(mul) == ()
    acc = ins.edge_of(x).node
    assert ins.formula(acc) is None  # a leaf's AccumulateGrad: nothing to differentiate


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_accumulates_is_pytorchs_accumulate_grad(name: str) -> None:
    """Walked side by side with PyTorch's graph: `accumulates` is true exactly at PyTorch's AccumulateGrad
    nodes, and `leaf` is the leaf PyTorch's `variable` is."""

    def build(T: Any) -> tuple[Any, Any, Any]:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = T.tensor([4.0, 5.0, 6.0], requires_grad=True)
        return GRAPHS[name](T, x, y), x, y

    (ours, x, y), (theirs, tx, ty) = both(build)
    stack = [(ours.grad_fn, theirs.grad_fn)]
    seen = 0
    while stack:
        node, fn = stack.pop()
        seen += 1
        is_acc = type(fn).__name__ == "AccumulateGrad"
        assert ins.accumulates(node) == is_acc, node.name()
        if is_acc:
            assert ins.leaf(node) is (x if fn.variable is tx else y if fn.variable is ty else None)
        else:
            assert ins.leaf(node) is None
        edges = ins.inputs(node)
        assert len(edges) == len(fn.next_functions)
        stack.extend((e.node, f) for e, (f, _) in zip(edges, fn.next_functions, strict=True) if e is not None)
    assert seen >= 2


def test_observe_gives_typed_records_in_pytorchs_order() -> None:
    """The records of a small backward, in the order PyTorch's engine runs the nodes (its hooks fire in
    that order: one hook per node records PyTorch's)."""

    def run(T: Any, listen: Any) -> list[str]:
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        s = (y.exp() + y).sum()
        order: list[str] = []
        for n in (s.grad_fn, s.grad_fn.next_functions[0][0]):
            n.register_prehook(lambda g, n=n: order.append(type(n).__name__ if T is torch else n.name()))
        with listen():
            s.backward()
        return order

    events: list[Any] = []
    theirs = run(torch, lambda: _nothing())
    ours = run(gradcalc, lambda: ins.observe(events.append))
    assert ours == theirs
    ran = [e for e in events if isinstance(e, ins.NodeRan)]
    assert [e.node.name() for e in ran][:2] == theirs
    assert all(e.kind == "node_ran" for e in ran)
    written = [e for e in events if isinstance(e, ins.GradWritten)]
    assert [e.retained for e in written] == [True, False]
    assert written[1].after.tolist() == pytest.approx((2 * np.array([1.0, 2.0]) * (np.exp([1.0, 4.0]) + 1)).tolist())
    prehooks = [h for e in ran for h in e.hooks]
    assert {h.kind for h in prehooks} == {"prehook"} and all(isinstance(h, ins.HookFired) for h in prehooks)
    mul = [e for e in ran if e.node.name() == "MulBackward0"]
    assert mul[0].freed == ("other", "self") and mul[0].executed


def _nothing() -> Any:
    from contextlib import nullcontext

    return nullcontext()


# -- errors -------------------------------------------------------------------------------------------------
def _errors() -> dict[str, Any]:
    """One way to cause each error reason, each in a function of the library."""

    def freed(T: Any) -> None:
        x = T.tensor(2.0, requires_grad=True)
        y = x * x
        y.backward()
        y.backward()

    def version(T: Any) -> None:
        x = T.tensor(2.0, requires_grad=True)
        w = T.tensor(3.0)
        y = x * w
        with T.no_grad():
            w.add_(1.0)
        y.backward()

    def leaf_inplace(T: Any) -> None:
        T.tensor(2.0, requires_grad=True).add_(1.0)

    def inference_inplace(T: Any) -> None:
        with T.inference_mode():
            t = T.tensor([1.0])
        t.add_(1.0)

    def inference_saved(T: Any) -> None:
        with T.inference_mode():
            t = T.tensor([1.0])
        T.tensor([2.0], requires_grad=True) * t

    def no_grad_output(T: Any) -> None:
        T.tensor(1.0).backward()

    def nonscalar(T: Any) -> None:
        (T.tensor([1.0, 2.0], requires_grad=True) * 2).backward()

    def input_no_grad(T: Any) -> None:
        x = T.tensor(1.0, requires_grad=True)
        T.autograd.grad(x * 2, [T.tensor(1.0)])

    def unused(T: Any) -> None:
        x = T.tensor(1.0, requires_grad=True)
        T.autograd.grad(x * 2, [x, T.tensor(1.0, requires_grad=True)])

    def nan(T: Any) -> None:
        x = T.tensor(-1.0, requires_grad=True)
        with T.autograd.detect_anomaly():
            T.sqrt(x).backward()

    return {"freed": freed, "version": version, "leaf_inplace": leaf_inplace,
            "inference_inplace": inference_inplace, "inference_saved": inference_saved,
            "no_grad_output": no_grad_output, "nonscalar": nonscalar, "input_no_grad": input_no_grad,
            "unused": unused, "nan": nan}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("reason", sorted(REASONS))
def test_each_error_reason_is_a_typed_record(reason: str) -> None:
    cause = _errors()[reason]
    with pytest.raises(RuntimeError):  # PyTorch fails there too
        cause(torch)
    with pytest.raises(RuntimeError) as info:
        cause(gradcalc)
    record = ins.reason_of(info.value)
    assert isinstance(record, ins.ErrorReason) and record.reason == reason
    assert type(record) is ins.REASON_RECORDS[reason]
    fields = [f.rstrip("?") for f in REASONS[reason]]
    assert list(type(record)._fields) == fields
    # raised while handling it (a front end's error): found along the context, unless asked not to
    try:
        try:
            raise info.value
        except RuntimeError:
            raise ValueError("a front end's error") from None
    except ValueError as outer:
        assert ins.reason_of(outer) == record
        assert ins.reason_of(outer, chained=False) is None


def test_every_failure_raised_says_a_known_reason_with_its_fields() -> None:
    """Every `failure(message, reason, **info)` in the engine's source uses a reason of REASONS with
    exactly that reason's fields (a `?` field may be left out)."""
    root = Path(gradcalc.__file__).parent / "autograd"
    seen = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "failure":
                reason = node.args[1].value  # type: ignore[attr-defined]
                assert reason in REASONS, f"{path.name}:{node.lineno}: unknown reason {reason!r}"
                given = {k.arg for k in node.keywords}
                need = {f for f in REASONS[reason] if not f.endswith("?")}
                allowed = {f.rstrip("?") for f in REASONS[reason]}
                assert need <= given <= allowed, f"{path.name}:{node.lineno}: {sorted(given)}"
                seen.add(reason)
    assert seen == set(REASONS)


# -- history ------------------------------------------------------------------------------------------------
def test_history_of_calls_changes_and_sets() -> None:
    origin = object()
    with gradcalc.autograd.graph.origin(origin):
        x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
        w = gradcalc.tensor([3.0, 4.0])
        (x * w).sum().backward()
        with gradcalc.no_grad():
            w.add_(1.0)
            w.add_(1.0)
        x.grad = None
        (x * 2).sum().backward(retain_graph=True)
    history = ins.call_history()
    last = history.calls[-1]
    assert isinstance(last, ins.BackwardCall) and last.origin is origin and last.accumulate and last.retain_graph
    assert last.wrote_into(x) and not last.wrote_into(w)
    assert ins.in_place_changes(w) == [ins.InPlaceChange(origin, 1, 2)]
    cleared = ins.last_grad_set(x)
    assert cleared == ins.GradSet(origin, history.calls[-2].serial, True)
    cleared2, writes = ins.grad_writes(x)
    assert cleared2 == cleared and [c.serial for c in writes] == [last.serial]


def test_records_are_read_only() -> None:
    e = ins.Edge(None, 0)
    with pytest.raises(AttributeError):
        e.output_nr = 1  # type: ignore[misc]
    assert e == ins.Edge(None, 0) and hash(e) == hash(ins.Edge(None, 0)) and "output_nr=0" in repr(e)
    with pytest.raises(TypeError):
        ins.Edge(None)
