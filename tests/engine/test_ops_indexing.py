"""Indexing against PyTorch: `x[index]` for every kind of index and their combinations (values, grad_fn
names, gradients of first and second order, which results are views sharing the version counter), and
`x[index] = value` as an in-place operation (CopySlices / IndexPutBackward0 / fill_ / copy_, gradients
to the tensor and to the value, version bumps, the leaf error, the custom-ReLU idiom)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc
from tests.engine.ops_oracle import arrays_for, check, same_outcome, torch


def mask(L: Any, *rows: Any) -> Any:
    return L.tensor(rows[0] if len(rows) == 1 else list(rows))


# name: index, made per library (masks and index tensors are tensors of that library)
GET = {
    "int": lambda L: 1,
    "int_negative": lambda L: -1,
    "ints": lambda L: (2, -1),
    "all_ints": lambda L: (0, 1, 2),
    "slice": lambda L: slice(1, 3),
    "slice_step": lambda L: slice(None, None, 2),
    "slice_negative_start": lambda L: slice(-2, None),
    "slice_past_end": lambda L: slice(1, 100),
    "slice_empty": lambda L: slice(2, 1),
    "slice_everything": lambda L: slice(None),
    "slice_everything_in_tuple": lambda L: (slice(None),),
    "slices": lambda L: (slice(None, None, 2), slice(1, None), slice(None, 3)),
    "int_slice": lambda L: (slice(0, 3), 1),
    "none": lambda L: None,
    "none_between": lambda L: (0, None, slice(1, 3)),
    "ellipsis": lambda L: ...,
    "empty_tuple": lambda L: (),
    "ellipsis_int": lambda L: (..., 1),
    "ellipsis_none": lambda L: (0, ..., None),
    "list": lambda L: [0, 2],
    "list_repeats": lambda L: [0, 0, 2, 0],
    "list_negative": lambda L: [-1, 0],
    "list_empty": lambda L: [],
    "int_tensor": lambda L: L.tensor([2, 0]),
    "int_tensor_2d": lambda L: L.tensor([[0, 1], [2, 0]]),
    "int_tensor_0d": lambda L: L.tensor(1),
    "lists_together": lambda L: ([0, 1], [1, 2]),
    "lists_broadcast": lambda L: ([[0], [2]], [1, 3]),
    "lists_apart": lambda L: ([0, 2], slice(None), [1, 3]),
    "int_then_list": lambda L: (0, [1, 2]),
    "int_slice_list": lambda L: (0, slice(None), [1, 2]),  # PyTorch's order, not NumPy's
    "slice_list": lambda L: (slice(1, None), [0, 0]),
    "none_list": lambda L: (slice(None), None, [0, 1], 0),
    "list_ints_list": lambda L: ([0, 1], 0, [1, 2]),
    "mask_full": lambda L: "full",
    "mask_rows": lambda L: mask(L, [True, False, True]),
    "mask_2d_then_int": lambda L: ("rows2d", 0),
    "ellipsis_mask": lambda L: (..., mask(L, [True, False, True, False, True])),
    "mask_list_as_list": lambda L: [True, False, True],
    "bool_true": lambda L: True,
    "bool_false": lambda L: False,
    "bool_true_int": lambda L: (True, 0),
    "bool_tensor_0d": lambda L: L.tensor(True),
    "nested_list_as_tuple": lambda L: [[0, 1], [1, 2]],
}


def resolve(L: Any, x: Any, idx: Any) -> Any:
    """Masks computed from the tensor itself."""
    if isinstance(idx, str):
        return x.detach() > 0
    if isinstance(idx, tuple) and idx and idx[0] == "rows2d":
        return (x.detach()[:, :, 0] > 0, *idx[1:])
    return idx


@pytest.mark.parametrize("case", sorted(GET))
def test_getitem_against_torch(case: str) -> None:
    check(lambda L, x: x[resolve(L, x, GET[case](L))], arrays_for((3, 4, 5)))


@pytest.mark.filterwarnings("ignore:.*(non-tuple sequence|reads it as a tuple).*:UserWarning")
@pytest.mark.parametrize("case", sorted(GET))
def test_getitem_view_or_copy(case: str) -> None:
    """A result is a view (sharing memory and version counter) exactly when PyTorch's is."""
    shares = []
    for lib, version in ((torch, "_version"), (gradcalc, "version")):
        x = lib.arange(60.0).reshape(3, 4, 5) - 30
        r = x[resolve(lib, x, GET[case](lib))]
        before = r.tolist()
        with lib.no_grad():
            x.add_(1)
        shares.append((getattr(r, version), r.tolist() != before or r.numel() == 0))
    assert shares[1] == shares[0]


def test_nested_list_index_warns_like_torch() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcalc.zeros(3, 4)[[[0, 1], [1, 2]]]
    assert len(caught) == 1 and caught[0].category is UserWarning and caught[0].filename == __file__


def test_index_tensor_changed_after_indexing() -> None:
    """The gradient goes where the index pointed when the tensor was indexed."""
    x = gradcalc.zeros(4, requires_grad=True)
    i = gradcalc.tensor([0, 2])
    y = x[i]
    i[0] = 3
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0, 0.0]


def test_select_in_place_shows_in_both() -> None:
    for lib, version in ((torch, "_version"), (gradcalc, "version")):
        x = lib.zeros(3, 4)
        row = x[0]
        with lib.no_grad():
            row.add_(5)
        assert x.tolist()[0] == [5.0] * 4 and getattr(x, version) == getattr(row, version) == 1
        x[1, 2] = 7.0
        assert getattr(row, version) == 2  # a change of the base bumps the view's counter too


def test_iterating_rows() -> None:
    x = gradcalc.arange(6.0).reshape(3, 2).requires_grad_()
    total = sum(row[1] * i for i, row in enumerate(x))
    total.backward()
    assert x.grad.tolist() == [[0, 0], [0, 1], [0, 2]]


GET_ERRORS = {
    "int_range": lambda L: L.zeros(3, 4)[3],
    "int_range_2": lambda L: L.zeros(3, 4)[0, -5],
    "too_many": lambda L: L.zeros(3, 4)[0, 0, 0],
    "float": lambda L: L.zeros(3, 4)[1.5],
    "float_tensor": lambda L: L.zeros(3, 4)[L.tensor([1.0])],
    "list_range": lambda L: L.zeros(3, 4)[[0, 3]],
    "mask_shape": lambda L: L.zeros(3, 4)[L.tensor([True, False])],
    "two_ellipses": lambda L: L.zeros(3, 4)[..., 0, ...],
    "two_ellipses_past_end": lambda L: L.zeros(3, 4)[..., 0, ..., 0],
    "object": lambda L: L.zeros(3)[object()],
    "negative_step": lambda L: L.zeros(3, 4)[::-1],
    "zero_dim_int": lambda L: L.tensor(1.0)[0],
    "string": lambda L: L.zeros(3)["a"],
}


@pytest.mark.parametrize("case", sorted(GET_ERRORS))
def test_getitem_errors_match_torch(case: str) -> None:
    same_outcome(GET_ERRORS[case])


# -- x[index] = value ----------------------------------------------------------------------------------------
# name: (index, value shape or a number)
SET = {
    "int_number": (lambda L: 0, 5.0),
    "int_tensor_0d": (lambda L: 1, ()),
    "int_row": (lambda L: 1, (4,)),
    "int_row_leading_one": (lambda L: 1, (1, 4)),
    "int_broadcast": (lambda L: 1, (1,)),
    "ints": (lambda L: (0, 1), ()),
    "slice": (lambda L: slice(1, 3), (2, 4)),
    "slice_broadcast": (lambda L: slice(1, 3), (4,)),
    "slice_step_column": (lambda L: (slice(None, None, 2), 1), (2,)),
    "column": (lambda L: (slice(None), 2), (3,)),
    "none": (lambda L: None, (4,)),
    "everything_number": (lambda L: slice(None), 2.0),
    "everything_0d": (lambda L: ..., ()),
    "everything_row": (lambda L: (slice(None), slice(None)), (4,)),
    "everything_full": (lambda L: slice(0, 100), (3, 4)),
    "list": (lambda L: [0, 2], (4,)),
    "list_number": (lambda L: [2, 0], -1.0),
    "lists": (lambda L: ([0, 1], [1, 3]), (2,)),
    "int_then_list": (lambda L: (0, [1, 2]), (2,)),
    "mask": (lambda L: "full", 0.0),
    "mask_rows": (lambda L: L.tensor([True, False, True]), (4,)),
    "bool_true": (lambda L: True, (3, 4)),
}


def set_scenario(case: str):  # noqa: ANN201
    idx_of, value = SET[case]

    def scenario(L, x, *v):  # noqa: ANN001, ANN202
        y = x * 1.5
        idx = resolve(L, x, idx_of(L))
        y[idx] = v[0] if v else value
        return y

    return scenario


@pytest.mark.parametrize("case", sorted(SET))
def test_setitem_against_torch(case: str) -> None:
    value = SET[case][1]
    shapes = [(3, 4)] + ([value] if isinstance(value, tuple) else [])
    check(set_scenario(case), arrays_for(*shapes), grad_names=False)


@pytest.mark.parametrize("case", sorted(SET))
def test_setitem_node_and_version(case: str) -> None:
    """The node recorded (and what it links to), the version bump, for each form of index."""
    idx_of, value = SET[case]
    seen = []
    for lib, version in ((torch, "_version"), (gradcalc, "version")):
        x = lib.tensor(arrays_for((3, 4))[0], requires_grad=True)
        v = lib.ones(value, requires_grad=True) if isinstance(value, tuple) else value
        y = x * 1.0
        y[resolve(lib, x, idx_of(lib))] = v
        node = y.grad_fn
        links = [type(n).__name__ if lib is torch else n.name() if n is not None else None
                 for n, _ in node.next_functions]
        links = [None if n in (None, "NoneType") else n for n in links]
        name = type(node).__name__ if lib is torch else node.name()
        seen.append((name, links[0], getattr(y, version), y.requires_grad, y.is_leaf))
    assert seen[1] == seen[0]


def test_setitem_value_requires_grad_into_a_constant() -> None:
    for lib in (torch, gradcalc):
        v = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.zeros(3, 4)
        y[[0, 1], [1, 1]] = v
        assert y.requires_grad and not y.is_leaf
        (y * lib.arange(12.0).reshape(3, 4)).sum().backward()
        assert v.grad.tolist() == [1.0, 5.0]


def test_setitem_on_leaf() -> None:
    for lib, version in ((torch, "_version"), (gradcalc, "version")):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            w[0] = 5
        assert getattr(w, version) == 0 and w.tolist() == [1.0, 2.0, 3.0]
        with lib.no_grad():
            w[0] = 5
        assert w.tolist() == [5.0, 2.0, 3.0] and getattr(w, version) == 1
        assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_setitem_leaf_error_names_the_fix() -> None:
    w = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w[0] = 5


def test_setitem_then_backward_through_saved_value_fails() -> None:
    """A value saved for backward and then written into is caught, as with other in-place changes."""
    for lib in (torch, gradcalc):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        z = y * y  # saves y
        y[0] = 0.0
        with pytest.raises(RuntimeError):
            z.sum().backward()


def test_setitem_casts_to_the_tensor_dtype() -> None:
    same_outcome(lambda L: _set(L.zeros(3, dtype=L.long), 0, 2.7))
    same_outcome(lambda L: _set(L.zeros(3, dtype=L.float32), 0, L.tensor(1.5)))
    same_outcome(lambda L: _set(L.zeros(3, dtype=L.float32), [0, 1], 2.5))
    same_outcome(lambda L: _set(L.zeros(3, dtype=L.float32), [0, 1], L.tensor([1.5, 2.5])))  # an error
    same_outcome(lambda L: _set(L.zeros(2, 3), (0, [0, 1]), L.tensor([1, 2])))  # an error


def _set(t: Any, idx: Any, value: Any) -> Any:
    t[idx] = value
    return t


SET_ERRORS = {
    "shape": lambda L: _set(L.zeros(3, 4), 0, L.ones(3)),
    "list_value": lambda L: _set(L.zeros(3, 4), 0, [1, 2, 3, 4]),
    "index_range": lambda L: _set(L.zeros(3, 4), 3, 1.0),
    "mask_count": lambda L: _set(L.zeros(4), L.tensor([True, False, True, False]), L.ones(3)),
}


@pytest.mark.parametrize("case", sorted(SET_ERRORS))
def test_setitem_errors_match_torch(case: str) -> None:
    same_outcome(SET_ERRORS[case])


def _relu_function(lib: Any) -> Any:
    class MyReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):  # noqa: ANN001, ANN205, A002
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):  # noqa: ANN001, ANN205
            (input,) = ctx.saved_tensors  # noqa: A001
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    return MyReLU


def test_custom_relu_idiom() -> None:
    data = arrays_for((4, 5))[0]
    grads = []
    for lib in (torch, gradcalc):
        x = lib.tensor(data, requires_grad=True)
        y = _relu_function(lib).apply(x)
        (y * lib.tensor(data)).sum().backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    assert (grads[1][data < 0] == 0).all() and (grads[1][data > 0] != 0).all()


# -- random index expressions --------------------------------------------------------------------------------
@st.composite
def index_expressions(draw: st.DrawFn) -> tuple[tuple[int, ...], list]:
    """A shape and an index for it: per dimension an int, a slice (with a step), a list or nothing; lists
    share one length (so they broadcast) and never repeat a place; maybe a `...` and some `None`s."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    length = draw(st.integers(1, 3))
    items: list = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "list", "all", "mask"]))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n, n))
            stop = draw(st.none() | st.integers(-n, n + 1))
            items.append(slice(start, stop, draw(st.none() | st.integers(1, 3))))
        elif kind == "list" and length <= n:
            items.append(("list", draw(st.lists(st.integers(-n, n - 1), min_size=length, max_size=length,
                                                 unique_by=lambda i, n=n: i % n))))
        elif kind == "mask" and not any(isinstance(i, tuple) for i in items):
            items.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        else:
            items.append(slice(None))
    if any(isinstance(i, tuple) and i[0] == "mask" for i in items):  # a mask stands alone among advanced
        items = [i if not (isinstance(i, tuple) and i[0] == "list") else slice(None) for i in items]
    if draw(st.booleans()):  # `...` for some dimensions in the middle
        a = draw(st.integers(0, len(items) - 1))
        b = draw(st.integers(a, len(items)))
        items[a:b] = [Ellipsis]
    else:  # or the last dimensions left out
        items = items[: draw(st.integers(0, len(items)))]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    return shape, items


def build(L: Any, items: list) -> tuple:
    return tuple(L.tensor(i[1]) if isinstance(i, tuple) else i for i in items)


@settings(max_examples=60, deadline=None)
@given(index_expressions())
def test_random_getitem(case: tuple) -> None:
    shape, items = case
    check(lambda L, x: x[build(L, items)], arrays_for(shape))


@settings(max_examples=40, deadline=None)
@given(index_expressions(), st.booleans())
def test_random_setitem(case: tuple, broadcast: bool) -> None:
    shape, items = case
    target = tuple(torch.zeros(shape)[build(torch, items)].shape)
    value_shape = target[1:] if broadcast and target else target

    def scenario(L, x, v):  # noqa: ANN001, ANN202
        y = x * 2
        y[build(L, items)] = v
        return y

    check(scenario, arrays_for(shape, value_shape), grad_names=False)


# -- views of a 0-d tensor: an in-place change of the base or through the view ----------------------------
@pytest.mark.parametrize("make_view", [
    lambda y: y.expand(3), lambda y: y.view(1), lambda y: y.unsqueeze(0).unsqueeze(1), lambda y: y.reshape(1, 1),
], ids=["expand", "view", "unsqueeze", "reshape"])
@pytest.mark.parametrize("through_view", [False, True])
def test_views_of_a_0d_tensor_follow_an_in_place_change(make_view: Any, through_view: bool) -> None:
    """A 0-d tensor has views of any shape; after it (or one of them) changes in place, every one reads its
    gradient from the new graph, as PyTorch's do (AsStridedBackward0, CopySlices)."""
    outcomes = []
    for L in (torch, gradcalc):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        y = (x * x).sum()
        v = make_view(y)
        if through_view:
            v.mul_(3.0) if v.numel() == 1 else y.mul_(3.0)
        else:
            y.cos_()
        weights = L.arange(1.0, v.numel() + 1, dtype=L.float64).reshape(v.shape)
        (v * weights).sum().backward(retain_graph=True)
        y.backward()
        outcomes.append((type(v.grad_fn).__name__, type(y.grad_fn).__name__, v.detach().numpy(), y.item(),
                         x.grad.numpy()))
    (tn, tb, tv, ty, tg), (gn, gb, gv, gy, gg) = outcomes
    assert (gn, gb) == (tn, tb)
    np.testing.assert_allclose(gv, tv, rtol=1e-14)
    np.testing.assert_allclose(gy, ty, rtol=1e-14)
    np.testing.assert_allclose(gg, tg, rtol=1e-14)
