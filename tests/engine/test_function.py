"""Custom autograd functions (`autograd.Function`), run side by side with the same code on real PyTorch.

Each custom function is defined by a factory taking the library (`gradcalc` or `torch`), so both sides run
exactly the same source; expected values come from PyTorch or from mathematics.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)



def arr(t: object) -> np.ndarray:
    """A tensor of either library as a NumPy array."""
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data)  # type: ignore[attr-defined]


def both(make, data):  # type: ignore[no-untyped-def]
    """The same definition on both libraries, with a leaf of `data` that requires grad for each."""
    return [(make(lib), lib.tensor(data, requires_grad=True)) for lib in (gradcalc, torch)]


# -- definitions, shared by both sides ------------------------------------------------------------------
def tutorial_relu(lib):  # type: ignore[no-untyped-def]
    """The seed tutorial's custom ReLU, verbatim."""

    class MyReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    return MyReLU


def mask_relu(lib):  # type: ignore[no-untyped-def]
    """A ReLU written without indexing: the mask is a constant factor."""

    class MyReLU(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.relu()

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * (input > 0).double()

    return MyReLU


def cube(lib):  # type: ignore[no-untyped-def]
    """x**3 whose backward is written with differentiable operations: it has a second derivative."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    return Cube


def saved_exp(lib):  # type: ignore[no-untyped-def]
    """exp that saves its own output for backward."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return Exp


def scaled(lib, log=None):  # type: ignore[no-untyped-def]
    """a * b * k with a non-tensor argument k; records needs_input_grad and the grad mode of backward."""

    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, k):
            if log is not None:
                log.append(("needs", ctx.needs_input_grad, lib.is_grad_enabled()))
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            if log is not None:
                log.append(("backward grad mode", lib.is_grad_enabled()))
            return g * b * ctx.k, g * a * ctx.k, None

    return Scaled


def two_outputs(lib, log=None, materialize=True):  # type: ignore[no-untyped-def]
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            if log is not None:
                log.append((None if g1 is None else arr(g1).tolist(), None if g2 is None else arr(g2).tolist()))
            total = None
            for g, k in ((g1, 2), (g2, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    return Two


def with_mask(lib, log):  # type: ignore[no-untyped-def]
    """Returns (2a, mask) with the mask marked non-differentiable."""

    class WithMask(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            mask = (a > 0).double()
            ctx.mark_non_differentiable(mask)
            return a * 2, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            log.append(arr(g_mask).tolist())
            return g * 2

    return WithMask


# -- the tutorial -----------------------------------------------------------------------------------------
def test_tutorial_custom_relu_matches_torch() -> None:
    results = []
    for fn, x in both(tutorial_relu, [-2.0, -0.5, 0.0, 1.5, 3.0]):
        y = fn.apply(x)
        (y * y).sum().backward()
        results.append((arr(y), arr(x.grad), y.grad_fn.name(), y.requires_grad, y.is_leaf))
    (gy, gg, gname, greq, gleaf), (ty, tg, tname, treq, tleaf) = results
    np.testing.assert_allclose(gy, ty)
    np.testing.assert_allclose(gg, tg)
    assert (gname, greq, gleaf) == (tname, treq, tleaf) == ("MyReLUBackward", True, False)


def test_relu_values_grads_and_node_match_torch() -> None:
    results = []
    for fn, x in both(mask_relu, [[-1.0, 2.0], [3.0, -4.0]]):
        y = fn.apply(x)
        y.sum().backward()
        node = y.grad_fn
        results.append((arr(y), arr(x.grad), node.name(), type(node).__name__, len(node.next_functions),
                        type(node.next_functions[0][0]).__name__))
    (gy, gg, *gmeta), (ty, tg, *tmeta) = results
    np.testing.assert_allclose(gy, ty)
    np.testing.assert_allclose(gg, tg)
    assert gmeta == tmeta


def test_next_functions_has_one_edge_per_tensor_argument() -> None:
    counts = []
    for lib in (gradcalc, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])
        y = scaled(lib).apply(a, b, 2.0)
        counts.append([None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions])
    assert counts[0] == counts[1] == ["AccumulateGrad", None]


# -- ctx ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("grad_b", [False, True])
def test_needs_input_grad_and_ctx_attributes_match_torch(grad_b: bool) -> None:
    logs, grads = [], []
    for lib in (gradcalc, torch):
        log: list = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -1.0], requires_grad=grad_b)
        y = scaled(lib, log).apply(a, b, 5)
        y.sum().backward()
        logs.append(log)
        grads.append((arr(a.grad), None if b.grad is None else arr(b.grad)))
    assert logs[0] == logs[1]
    assert logs[0][0] == ("needs", (True, grad_b, False), False)
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][0], [15.0, -5.0])  # k * b
    if grad_b:
        np.testing.assert_allclose(grads[0][1], grads[1][1])
    else:
        assert grads[0][1] is None and grads[1][1] is None


def test_needs_input_grad_under_no_grad_is_not_recorded() -> None:
    for lib in (gradcalc, torch):
        log: list = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            y = scaled(lib, log).apply(a, a, 1.0)
        assert log == [("needs", (True, True, False), False)]
        assert not y.requires_grad and y.grad_fn is None


def test_inputs_without_grad_give_a_plain_result() -> None:
    for lib in (gradcalc, torch):
        y = mask_relu(lib).apply(lib.tensor([-1.0, 1.0]))
        assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_backward_runs_in_the_grad_mode_the_engine_sets() -> None:
    logs = []
    for lib in (gradcalc, torch):
        log: list = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        fn = scaled(lib, log)
        fn.apply(a, a, 2.0).sum().backward()
        lib.autograd.grad(fn.apply(a, a, 2.0).sum(), a, create_graph=True)
        logs.append([entry for entry in log if entry[0] == "backward grad mode"])
    assert logs[0] == logs[1] == [("backward grad mode", False), ("backward grad mode", True)]


def test_ctx_attribute_survives_and_saved_tensors_are_freed_after_backward() -> None:
    for lib in (gradcalc, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = scaled(lib).apply(a, a, 4)
        node = y.grad_fn
        y.sum().backward()
        assert node.k == 4
        with pytest.raises(RuntimeError) as err:
            _ = node.saved_tensors
        if lib is gradcalc:
            assert "retain_graph" in str(err.value) and "ScaledBackward" in str(err.value)
        with pytest.raises(RuntimeError):
            y.sum().backward()


def test_retain_graph_keeps_saved_tensors_for_a_second_backward() -> None:
    grads = []
    for lib in (gradcalc, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = cube(lib).apply(a)
        y.sum().backward(retain_graph=True)
        saved = y.grad_fn.saved_tensors
        assert len(saved) == 1 and saved[0] is a
        y.sum().backward()
        grads.append(arr(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], [6.0, 24.0])  # twice 3x^2


def test_saved_tensor_changed_in_place_is_an_error_in_both() -> None:
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = cube(lib).apply(a)
        a.add_(1)
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        if lib is gradcalc:
            msg = str(err.value)
            assert "CubeBackward" in msg and "version 1" in msg and "0" in msg and ".clone()" in msg


def test_save_for_backward_refuses_non_tensors() -> None:
    for lib in (gradcalc, torch):

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(3)
                return a * 1

            @staticmethod
            def backward(ctx, g):
                return g

        with pytest.raises(TypeError):
            Bad.apply(lib.tensor([1.0], requires_grad=True))


def test_saving_the_output_makes_no_reference_cycle_and_differentiates_twice() -> None:
    seconds = []
    for lib in (gradcalc, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = saved_exp(lib).apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        seconds.append(arr(gg))
    np.testing.assert_allclose(seconds[0], seconds[1])
    np.testing.assert_allclose(seconds[0], np.exp([0.5, 1.0]))
    x = gradcalc.tensor([0.5, 1.0], requires_grad=True)
    y = saved_exp(gradcalc).apply(x)
    out_ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
    gc.disable()
    try:
        del y
        assert out_ref() is None and node_ref() is None  # freed by reference counting alone
    finally:
        gc.enable()


# -- higher order ------------------------------------------------------------------------------------------
def test_second_derivative_of_custom_cube_matches_torch() -> None:
    results = []
    for lib in (gradcalc, torch):
        x = lib.tensor([-1.5, 0.5, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(cube(lib).apply(x).sum(), x, create_graph=True)
        assert g.requires_grad
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((arr(g), arr(gg)))
    (g1, gg1), (t1, tt1) = results
    np.testing.assert_allclose(g1, t1)
    np.testing.assert_allclose(gg1, tt1)
    np.testing.assert_allclose(gg1, 6 * np.array([-1.5, 0.5, 2.0]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=5))
def test_custom_functions_match_torch_on_random_inputs(values: list[float]) -> None:
    out = []
    for lib in (gradcalc, torch):
        x = lib.tensor(values, requires_grad=True)
        y = cube(lib).apply(saved_exp(lib).apply(x) * 0.5) + mask_relu(lib).apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        out.append((arr(y), arr(g), arr(gg)))
    for a, b in zip(out[0], out[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- several outputs -------------------------------------------------------------------------------------
def test_multiple_outputs_share_a_node_and_missing_gradients_become_zeros() -> None:
    logs, grads = [], []
    for lib in (gradcalc, torch):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        u, v = two_outputs(lib, log).apply(x)
        assert u.grad_fn is v.grad_fn and (u.output_nr, v.output_nr) == (0, 1)
        v.sum().backward()
        logs.append(log)
        grads.append(arr(x.grad))
    assert logs[0] == logs[1] == [([0.0, 0.0], [1.0, 1.0])]
    np.testing.assert_allclose(grads[0], grads[1])


def test_set_materialize_grads_false_passes_none() -> None:
    logs = []
    for lib in (gradcalc, torch):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        u, v = two_outputs(lib, log, materialize=False).apply(x)
        (u.sum() + 0 * v.sum()).backward()  # both reached
        lib.autograd.grad(two_outputs(lib, log, materialize=False).apply(x)[1].sum(), x)
        logs.append(log)
    assert logs[0] == logs[1] == [([1.0, 1.0], [0.0, 0.0]), (None, [1.0, 1.0])]


def test_both_outputs_used_sum_their_contributions() -> None:
    grads = []
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        u, v = two_outputs(lib).apply(x)
        (u * v).sum().backward()
        grads.append(arr(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], 12 * np.array([1.0, -2.0]))  # d(6 x^2)


def test_mark_non_differentiable() -> None:
    logs, grads = [], []
    for lib in (gradcalc, torch):
        log: list = []
        x = lib.tensor([-1.0, 2.0], requires_grad=True)
        y, mask = with_mask(lib, log).apply(x)
        assert y.requires_grad and not mask.requires_grad and mask.grad_fn is None
        (y * mask).sum().backward()
        logs.append(log)
        grads.append(arr(x.grad))
    assert logs[0] == logs[1] == [[0.0, 0.0]]
    np.testing.assert_allclose(grads[0], grads[1])


def with_count(lib, log):  # type: ignore[no-untyped-def]
    class WithCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, 5

        @staticmethod
        def backward(ctx, g, g_count):
            log.append(g_count)
            return g * 2

    return WithCount


def test_non_tensor_output_is_passed_through_and_gets_no_gradient() -> None:
    logs = []
    for lib in (gradcalc, torch):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, count = with_count(lib, log).apply(x)
        assert count == 5
        y.sum().backward()
        logs.append((log, arr(x.grad).tolist()))
    assert logs[0] == logs[1] == ([None], [2.0, 2.0])


# -- what backward returns -------------------------------------------------------------------------------
def bad_count(lib):  # type: ignore[no-untyped-def]
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    return Bad


def test_wrong_number_of_gradients_is_an_error_naming_the_function() -> None:
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="BadBackward"):
            bad_count(lib).apply(x, x).sum().backward()


def test_extra_trailing_none_gradients_are_allowed() -> None:
    grads = []
    for lib in (gradcalc, torch):

        class Extra(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Extra.apply(x).sum().backward()
        grads.append(arr(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_gradient_for_a_non_tensor_argument_is_an_error() -> None:
    for lib in (gradcalc, torch):

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            Bad.apply(x, 2.0).sum().backward()
        if lib is gradcalc:
            assert "BadBackward" in str(err.value) and "None" in str(err.value)


def test_returning_a_non_tensor_gradient_is_an_error() -> None:
    for lib in (gradcalc, torch):

        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return 3

        with pytest.raises(RuntimeError):
            Bad.apply(lib.tensor([1.0], requires_grad=True)).sum().backward()


def returns(lib, shape):  # type: ignore[no-untyped-def]
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(*shape)

    return Returns


def test_broadcast_gradient_is_summed_back_and_a_wrong_shape_is_an_error() -> None:
    grads = []
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        returns(lib, (4, 3)).apply(x).sum().backward()
        grads.append(arr(x.grad))
        with pytest.raises(RuntimeError) as err:
            returns(lib, (2,)).apply(x).sum().backward()
        if lib is gradcalc:
            assert "ReturnsBackward" in str(err.value) and "[2]" in str(err.value) and "[3]" in str(err.value)
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], [4.0, 4.0, 4.0])


def test_gradient_is_cast_to_the_input_dtype() -> None:
    dtypes = []
    for lib in (gradcalc, torch):

        class Narrow(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g.float()

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Narrow.apply(x).sum().backward()
        dtypes.append(str(x.grad.dtype))
    assert dtypes[0] == dtypes[1] == "torch.float64"


def test_backward_returning_none_leaves_no_gradient() -> None:
    for lib in (gradcalc, torch):

        class Nothing(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Nothing.apply(x).sum().backward()
        assert x.grad is None


def test_missing_backward_is_not_implemented() -> None:
    for lib in (gradcalc, torch):

        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

        y = NoBackward.apply(lib.tensor([1.0], requires_grad=True))
        assert y.requires_grad
        with pytest.raises(NotImplementedError):
            y.sum().backward()


# -- inputs returned, changed in place ----------------------------------------------------------------------
def identity(lib):  # type: ignore[no-untyped-def]
    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return Ident


def test_an_input_returned_unchanged_becomes_a_new_graph_member() -> None:
    grads = []
    for fn, x in both(identity, [1.0, 2.0]):
        y = fn.apply(x)
        assert y is not x and x.is_leaf and x.grad_fn is None
        assert y.grad_fn.name() == "IdentBackward" and not y.is_leaf
        y.sum().backward()
        grads.append(arr(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], [3.0, 3.0])


def dirty(lib):  # type: ignore[no-untyped-def]
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


def test_mark_dirty_rewrites_the_graph_and_bumps_the_version() -> None:
    results = []
    for fn, x in both(dirty, [1.0, 2.0]):
        a = x * 1
        out = fn.apply(a)
        assert out is a and a.grad_fn.name() == "DoubleBackward"
        version = a._version if isinstance(a, torch.Tensor) else a.version
        (a * a).sum().backward()
        results.append((arr(a), version, arr(x.grad)))
    (ga, gv, gg), (ta, tv, tg) = results
    np.testing.assert_allclose(ga, ta)
    assert gv == tv
    np.testing.assert_allclose(gg, tg)


def test_mark_dirty_on_a_leaf_that_requires_grad_is_an_error() -> None:
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            dirty(lib).apply(x)
        if lib is gradcalc:
            assert "no_grad" in str(err.value)


# -- other ways to define and call ------------------------------------------------------------------------
def scale_with_setup_context(lib, log):  # type: ignore[no-untyped-def]
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(a, k=2.0):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            log.append((len(inputs), inputs[1], ctx.needs_input_grad, lib.is_grad_enabled()))
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    return Scale


def test_setup_context_style_and_keyword_arguments() -> None:
    results = []
    for lib in (gradcalc, torch):
        log: list = []
        fn = scale_with_setup_context(lib, log)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x, k=3.0)
        y.sum().backward()
        z = fn.apply(x)
        results.append((log, arr(y), arr(x.grad), arr(z), y.grad_fn.name()))
    assert results[0][0] == results[1][0] == [(2, 3.0, (True, False), False), (2, 2.0, (True, False), False)]
    assert results[0][4] == results[1][4] == "ScaleBackward"
    for a, b in zip(results[0][1:4], results[1][1:4], strict=True):
        np.testing.assert_allclose(a, b)


def test_keyword_argument_reaches_forward() -> None:
    outs = []
    for lib in (gradcalc, torch):

        class Short(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k=2.0):
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k=2.0):
                ctx.k = k
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, k=5.0)
        y.sum().backward()
        outs.append((arr(y), arr(x.grad)))
        with pytest.raises(RuntimeError):  # the keyword argument counts: backward must return 2 gradients
            Short.apply(x, k=5.0).sum().backward()
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])


def test_forward_called_directly_with_a_plain_ctx() -> None:
    for lib in (gradcalc, torch):
        ctx = lib.autograd.function.FunctionCtx()
        x = lib.tensor([1.0, -2.0])
        y = mask_relu(lib).forward(ctx, x)
        np.testing.assert_allclose(arr(y), [1.0, 0.0])
        assert ctx.to_save[0] is x


def test_once_differentiable_allows_one_backward_only() -> None:
    results = []
    for lib in (gradcalc, torch):

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x**2 * g

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((Cube.apply(x) * x).sum(), x, create_graph=True)
        results.append(arr(g))
        with pytest.raises(RuntimeError, match="once_differentiable"):
            g.sum().backward()
    np.testing.assert_allclose(results[0], results[1])
    np.testing.assert_allclose(results[0], [4.0, 32.0])  # d(x^4) = 4 x^3


def test_make_function_builds_a_function_from_callables() -> None:
    from gradcalc.autograd.function import make_function

    def forward(ctx, a):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(a)
        return a.sin()

    def backward(ctx, g):  # type: ignore[no-untyped-def]
        (a,) = ctx.saved_tensors
        return g * a.cos()

    mysin = make_function("mysin", forward, backward)
    x = gradcalc.tensor([0.3, 1.2], requires_grad=True)
    y = mysin.apply(x)
    assert y.grad_fn.name() == "mysinBackward"
    (g,) = gradcalc.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = gradcalc.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(arr(g), np.cos([0.3, 1.2]))
    np.testing.assert_allclose(arr(gg), -np.sin([0.3, 1.2]))
