"""Shape operations against PyTorch: values, grad_fn names (also of the gradients, i.e. PyTorch's double
backward graph), first and second order gradients, version-counter sharing of views, errors, warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc
from tests.engine.ops_oracle import arrays_for, check, same_outcome, torch

# name: (scenario on a library `L` and input tensors, input shapes)
CASES = {
    "reshape": (lambda L, x: x.reshape(4, 3), [(3, 4)]),
    "reshape_tuple_infer": (lambda L, x: x.reshape((-1,)), [(3, 4)]),
    "reshape_same": (lambda L, x: x.reshape(3, 4), [(3, 4)]),
    "reshape_copies": (lambda L, x: x.t().reshape(12), [(3, 4)]),
    "reshape_fn": (lambda L, x: L.reshape(x, (2, 6)), [(3, 4)]),
    "view": (lambda L, x: x.view(2, -1, 3), [(3, 4)]),
    "view_as": (lambda L, x: x.view_as(L.zeros(12)), [(3, 4)]),
    "reshape_as": (lambda L, x: x.t().reshape_as(L.zeros(2, 6)), [(3, 4)]),
    "flatten": (lambda L, x: x.flatten(), [(2, 3, 4)]),
    "flatten_mid": (lambda L, x: L.flatten(x, 1, 2), [(2, 3, 4, 2)]),
    "flatten_copies": (lambda L, x: x.transpose(0, 2).flatten(), [(2, 3, 4)]),
    "flatten_0d": (lambda L, x: x.flatten(), [()]),
    "flatten_1d_is_self": (lambda L, x: (x * 2).flatten(), [(5,)]),
    "squeeze_all": (lambda L, x: x.squeeze(), [(3, 1, 4, 1)]),
    "squeeze_dim": (lambda L, x: L.squeeze(x, 1), [(3, 1, 4, 1)]),
    "squeeze_kw": (lambda L, x: x.squeeze(dim=-1), [(3, 1, 4, 1)]),
    "squeeze_not_one": (lambda L, x: x.squeeze(0), [(3, 1, 4, 1)]),
    "squeeze_dims": (lambda L, x: x.squeeze((1, 3)), [(3, 1, 4, 1)]),
    "squeeze_0d": (lambda L, x: x.squeeze(), [()]),
    "unsqueeze": (lambda L, x: x.unsqueeze(1), [(3, 4)]),
    "unsqueeze_end": (lambda L, x: L.unsqueeze(x, -1), [(3, 4)]),
    "unsqueeze_0d": (lambda L, x: x.unsqueeze(0), [()]),
    "expand": (lambda L, x: x.expand(2, 3, 4), [(3, 1)]),
    "expand_keep": (lambda L, x: x.expand(-1, 5), [(3, 1)]),
    "expand_as": (lambda L, x, y: x.expand_as(y) * y, [(4,), (3, 4)]),
    "transpose": (lambda L, x: x.transpose(0, 2), [(2, 3, 4)]),
    "transpose_fn": (lambda L, x: L.transpose(x, -1, 0), [(3, 4)]),
    "transpose_same": (lambda L, x: x.transpose(1, 1), [(3, 4)]),
    "transpose_1d": (lambda L, x: x.transpose(0, -1), [(4,)]),
    "swapaxes": (lambda L, x: x.swapaxes(0, 1), [(3, 4)]),
    "t": (lambda L, x: x.t(), [(3, 4)]),
    "t_1d": (lambda L, x: L.t(x), [(4,)]),
    "T_2d": (lambda L, x: x.T, [(3, 4)]),
    "T_3d": (lambda L, x: x.T, [(2, 3, 4)]),
    "T_1d": (lambda L, x: x.T, [(4,)]),
    "mT": (lambda L, x: x.mT, [(2, 3, 4)]),
    "mH": (lambda L, x: x.mH, [(3, 4)]),
    "H": (lambda L, x: x.H, [(3, 4)]),
    "swapdims_fn": (lambda L, x: L.swapdims(x, 0, 1), [(3, 4)]),
    "concat": (lambda L, x, y: L.concat([x, y], 1), [(2, 3), (2, 2)]),
    "permute": (lambda L, x: x.permute(2, 0, 1), [(2, 3, 4)]),
    "permute_tuple": (lambda L, x: L.permute(x, (1, 2, 0)), [(2, 3, 4)]),
    "permute_neg": (lambda L, x: x.permute(-1, 0, 1), [(2, 3, 4)]),
    "select": (lambda L, x: x.select(1, -1), [(3, 4)]),
    "narrow": (lambda L, x: L.narrow(x, 1, 1, 2), [(3, 4)]),
    "cat": (lambda L, x, y: L.cat([x, y]), [(2, 3), (4, 3)]),
    "cat_dim": (lambda L, x, y: L.cat((x, y, x), dim=1), [(2, 3), (2, 1)]),
    "cat_neg": (lambda L, x, y: L.cat([x, y], -1), [(2, 2, 3), (2, 2, 1)]),
    "cat_one": (lambda L, x: L.cat([x]), [(2, 3)]),
    "cat_legacy_empty": (lambda L, x: L.cat([x, L.zeros(0)]), [(2, 3)]),
    "cat_constant": (lambda L, x: L.cat([x, L.ones(1, 3)]), [(2, 3)]),
    "stack": (lambda L, x, y: L.stack([x, y]), [(2, 3), (2, 3)]),
    "stack_end": (lambda L, x, y: L.stack([x, y, x], dim=-1), [(2, 3), (2, 3)]),
    "stack_0d": (lambda L, x, y: L.stack([x, y]), [(), ()]),
    "split": (lambda L, x: x.split(2), [(5, 3)]),
    "split_dim": (lambda L, x: L.split(x, 2, dim=1), [(2, 3)]),
    "split_sizes": (lambda L, x: x.split([1, 3, 1]), [(5, 2)]),
    "split_one_piece": (lambda L, x: x.split(4), [(3, 2)]),
    "split_first_only": (lambda L, x: x.split(2)[0], [(5, 3)]),
    "chunk": (lambda L, x: x.chunk(3, 1), [(2, 4)]),
    "chunk_even": (lambda L, x: L.chunk(x, 2), [(6,)]),
    "unbind": (lambda L, x: x.unbind(1), [(2, 3)]),
    "unbind_middle_only": (lambda L, x: L.unbind(x)[1], [(3, 2)]),
    "chain": (lambda L, x: x.t().unsqueeze(0).expand(2, 4, 3).flatten(0, 1).sum(0), [(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_against_torch(case: str) -> None:
    scenario, shapes = CASES[case]
    check(scenario, arrays_for(*shapes))


def test_cases_compare_something() -> None:
    """The harness must be able to fail: a wrong gradient is caught."""
    with pytest.raises(AssertionError):
        check(lambda L, x: x.reshape(4, 3) if L is torch else x.t().reshape(4, 3), arrays_for((3, 4)))


# -- views share the version counter -------------------------------------------------------------------------
VIEWS = {
    "reshape": lambda x: x.reshape(6, 2),
    "view": lambda x: x.view(12),
    "flatten": lambda x: x.flatten(),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x.unsqueeze(0).expand(2, 3, 4),
    "transpose": lambda x: x.transpose(0, 1),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "permute": lambda x: x.permute(1, 0),
    "select": lambda x: x.select(0, 1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "split": lambda x: x.split(2)[1],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "unbind": lambda x: x.unbind(1)[2],
}


@pytest.mark.parametrize("op", sorted(VIEWS))
def test_view_shares_version_and_memory(op: str) -> None:
    for lib in (torch, gradcalc):
        x = lib.arange(12.0).reshape(3, 4)
        v = VIEWS[op](x)
        version = "_version" if lib is torch else "version"
        assert getattr(v, version) == getattr(x, version) == 0
        with lib.no_grad():
            x.mul_(2)  # a change through the base shows in the view
        assert getattr(v, version) == getattr(x, version) == 1, op
        expected = VIEWS[op](lib.arange(12.0).reshape(3, 4) * 2)
        assert np.array_equal(np.asarray(v.tolist()), np.asarray(expected.tolist())), op
        if op not in ("expand",):  # an expanded view cannot be written to
            with lib.no_grad():
                v.add_(1)
            assert getattr(x, version) == 2, op


def test_copying_reshape_does_not_share_version() -> None:
    for lib, version in ((torch, "_version"), (gradcalc, "version")):
        x = lib.arange(12.0).reshape(3, 4)
        r = x.t().reshape(12)  # the transpose cannot be viewed flat: a copy
        x.add_(1)
        assert getattr(r, version) == 0 and getattr(x, version) == 1
        assert r.tolist() == lib.arange(12.0).reshape(3, 4).t().reshape(12).tolist()


def test_split_outputs_keep_their_output_numbers() -> None:
    x = gradcalc.randn(5, 2, requires_grad=True)
    pieces = x.split(2)
    assert [p.output_nr for p in pieces] == [0, 1, 2]
    assert pieces[0].grad_fn is pieces[2].grad_fn and pieces[0].grad_fn.num_outputs == 3
    b = pieces[1] * 3
    b.retain_grad()
    (pieces[2].sum() + b.sum()).backward()
    assert x.grad.tolist() == [[0, 0], [0, 0], [3, 3], [3, 3], [1, 1]]


# -- warnings and errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, warns", [((3, 4), False), ((4,), True), ((), True), ((2, 3, 4), True)])
def test_T_warns_outside_two_dims(shape: tuple, warns: bool) -> None:
    x = gradcalc.zeros(*shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = x.T
    assert bool(caught) == warns
    assert r.shape == tuple(reversed(shape))
    if warns:
        assert caught[0].category is UserWarning and caught[0].filename == __file__


ERRORS = {
    "view_noncontiguous": lambda L: L.zeros(3, 4).t().view(12),
    "view_bad_size": lambda L: L.zeros(3, 4).view(5, 3),
    "view_two_inferred": lambda L: L.zeros(3, 4).view(-1, -1),
    "reshape_bad_size": lambda L: L.zeros(3, 4).reshape(7),
    "expand_bad": lambda L: L.zeros(3, 4).expand(2, 4),
    "expand_fewer_dims": lambda L: L.zeros(3, 4).expand(4),
    "permute_repeat": lambda L: L.zeros(3, 4).permute(0, 0),
    "permute_count": lambda L: L.zeros(3, 4).permute(0),
    "transpose_range": lambda L: L.zeros(3, 4).transpose(0, 2),
    "unsqueeze_range": lambda L: L.zeros(3, 4).unsqueeze(3),
    "squeeze_range": lambda L: L.zeros(3, 4).squeeze(2),
    "flatten_order": lambda L: L.zeros(2, 3, 4).flatten(2, 0),
    "t_3d": lambda L: L.zeros(2, 3, 4).t(),
    "mT_1d": lambda L: L.zeros(3).mT,
    "cat_empty": lambda L: L.cat([]),
    "cat_0d": lambda L: L.cat([L.tensor(1.0), L.tensor(2.0)]),
    "cat_mismatch": lambda L: L.cat([L.zeros(2, 3), L.zeros(3, 3)], 1),
    "cat_dim_range": lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 3)], 2),
    "stack_mismatch": lambda L: L.stack([L.zeros(2), L.zeros(3)]),
    "split_sizes_sum": lambda L: L.zeros(3).split([1, 1]),
    "select_range": lambda L: L.zeros(3, 4).select(1, 4),
    "select_0d": lambda L: L.tensor(1.0).select(0, 0),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    same_outcome(ERRORS[case])


def test_dtype_promotion_in_cat_and_stack() -> None:
    same_outcome(lambda L: L.cat([L.zeros(2, dtype=L.float32), L.arange(2)]))
    same_outcome(lambda L: L.stack([L.zeros(2, dtype=L.float32), L.zeros(2)]))
    same_outcome(lambda L: L.cat([L.arange(2), L.tensor([True, False])]))


def test_messages_name_the_fix() -> None:
    with pytest.raises(RuntimeError, match=r"\.reshape"):
        gradcalc.zeros(3, 4).t().view(12)


# -- random shapes -------------------------------------------------------------------------------------------
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, data=st.data())
def test_random_reshape_permute_squeeze(shape: tuple, data: st.DataObject) -> None:
    order = tuple(data.draw(st.permutations(range(len(shape)))))
    d = data.draw(st.integers(-len(shape) - 1, len(shape)))

    def scenario(L, x):  # noqa: ANN001, ANN202
        y = x.permute(*order).reshape(-1).reshape(*[shape[i] for i in order])
        return y.unsqueeze(d).squeeze().flatten()

    check(scenario, arrays_for(shape, seed=len(shape)))


@settings(max_examples=20, deadline=None)
@given(shape=shapes, data=st.data())
def test_random_cat_stack_split(shape: tuple, data: st.DataObject) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = data.draw(st.integers(1, 4))

    def scenario(L, x, y):  # noqa: ANN001, ANN202
        joined = L.cat([x, y], dim)
        return (*joined.split(size, dim), L.stack([x, y], dim))

    check(scenario, arrays_for(shape, shape, seed=1))
