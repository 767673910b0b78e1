"""The torch.func tutorials' computations (per-sample gradients, model ensembling, the empirical neural tangent
kernel), written once against PyTorch's API and run on gradcalc and on PyTorch with the same parameters and data
(issue 22). The tutorials' convolutional networks are MLPs here (gradcalc has no conv2d); `torch.einsum`'s
contraction is written with matmul (gradcalc has no einsum). Each result is also checked against the tutorial's
own reference where it gives one (a per-sample loop; each model run alone).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _torch_float64() -> None:
    torch.set_default_dtype(torch.float64)


def mlp(L: Any, sizes: list[int], seed: int, dtype: Any, act: str = "ReLU") -> Any:
    """An MLP of nn.Linear layers with the same parameters on both libraries."""
    rng = np.random.default_rng(seed)
    layers: list[Any] = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        lin = L.nn.Linear(n_in, n_out, dtype=dtype)
        with L.no_grad():
            lin.weight.copy_(L.tensor(rng.standard_normal((n_out, n_in)) / np.sqrt(n_in), dtype=dtype))
            lin.bias.copy_(L.tensor(rng.standard_normal(n_out) * 0.1, dtype=dtype))
        layers += [lin, getattr(L.nn, act)()]
    return L.nn.Sequential(*layers[:-1])


def arrays(L: Any, dtype: Any, *shape: int, seed: int = 0) -> Any:
    return L.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype)


# -- per-sample gradients ------------------------------------------------------------------------------------------
def per_sample_gradients(L: Any, dtype: Any) -> tuple[dict, dict]:
    """The tutorial: vmap(grad(compute_loss), in_dims=(None, None, 0, 0)) over functional_call, and the loop."""
    model = mlp(L, [20, 32, 32, 10], 0, dtype)
    F = L.nn.functional
    data = arrays(L, dtype, 16, 20, seed=1)
    targets = L.tensor(np.random.default_rng(2).integers(0, 10, 16))

    def loss_fn(predictions: Any, targets: Any) -> Any:
        return F.nll_loss(F.log_softmax(predictions, dim=-1), targets)

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params: dict, buffers: dict, sample: Any, target: Any) -> Any:
        batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
        predictions = L.func.functional_call(model, (params, buffers), (batch,))
        return loss_fn(predictions, targets)

    ft_compute_sample_grad = L.func.vmap(L.func.grad(compute_loss), in_dims=(None, None, 0, 0))
    vmapped = ft_compute_sample_grad(params, buffers, data, targets)

    looped: dict[str, list] = {k: [] for k in params}
    for i in range(16):
        model.zero_grad()
        loss_fn(model(data[i].unsqueeze(0)), targets[i].unsqueeze(0)).backward()
        for k, p in model.named_parameters():
            looped[k].append(p.grad.clone())
    return vmapped, {k: L.stack(v) for k, v in looped.items()}


# -- model ensembling ------------------------------------------------------------------------------------------
def ensembling(L: Any, dtype: Any) -> tuple[Any, Any, Any, Any]:
    """The tutorial: stack_module_state, a 'meta' copy as the base, vmap over the models with different
    minibatches and with one minibatch (in_dims=(0, 0, None)); and each model run alone."""
    num_models = 5
    models = [mlp(L, [28, 32, 32, 10], 10 + k, dtype) for k in range(num_models)]
    minibatches = arrays(L, dtype, num_models, 8, 28, seed=3)
    minibatch = minibatches[0]
    predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches, strict=True)]
    predictions_same_minibatch_loop = [model(minibatch) for model in models]

    params, buffers = L.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0]).to("meta")

    def fmodel(params: dict, buffers: dict, x: Any) -> Any:
        return L.func.functional_call(base_model, (params, buffers), (x,))

    predictions1_vmap = L.vmap(fmodel)(params, buffers, minibatches)
    predictions2_vmap = L.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    return (predictions1_vmap, L.stack(predictions_diff_minibatch_loop), predictions2_vmap,
            L.stack(predictions_same_minibatch_loop))


# -- the empirical neural tangent kernel ----------------------------------------------------------------------
def ntk(L: Any, dtype: Any) -> tuple[Any, Any, Any, Any]:
    """The tutorial's two methods: Jacobian contraction (vmap(jacrev)) and NTK-vector products
    (vmap(vmap(vjp, then vmap(jvp)))), 'full' and 'trace'."""
    net = mlp(L, [6, 16, 16, 3], 20, dtype, act="Tanh")
    x_train, x_test = arrays(L, dtype, 5, 6, seed=4), arrays(L, dtype, 4, 6, seed=5)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params: dict, x: Any) -> Any:
        return L.func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def jacobian_contraction(x1: Any, x2: Any, compute: str) -> Any:
        jac1 = [j.flatten(2) for j in L.vmap(L.func.jacrev(fnet_single), (None, 0))(params, x1).values()]
        jac2 = [j.flatten(2) for j in L.vmap(L.func.jacrev(fnet_single), (None, 0))(params, x2).values()]
        if compute == "full":  # einsum('Naf,Mbf->NMab', j1, j2)
            parts = [j1.unsqueeze(1) @ j2.transpose(1, 2).unsqueeze(0) for j1, j2 in zip(jac1, jac2, strict=True)]
        else:  # 'trace': einsum('Naf,Maf->NM', j1, j2)
            parts = [(j1.unsqueeze(1) * j2.unsqueeze(0)).sum((2, 3)) for j1, j2 in zip(jac1, jac2, strict=True)]
        return L.stack(parts).sum(0)

    def ntk_vps(x1: Any, x2: Any) -> Any:
        def get_ntk(x1: Any, x2: Any) -> Any:
            def func_x1(params: dict) -> Any:
                return fnet_single(params, x1)

            def func_x2(params: dict) -> Any:
                return fnet_single(params, x2)

            output, vjp_fn = L.func.vjp(func_x1, params)

            def get_ntk_slice(vec: Any) -> Any:
                vjps = vjp_fn(vec)
                _, jvps = L.func.jvp(func_x2, (params,), vjps)
                return jvps

            basis = L.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return L.vmap(get_ntk_slice)(basis)

        return L.vmap(L.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    full = ntk_vps(x_train, x_test)
    return (jacobian_contraction(x_train, x_test, "full"), full, jacobian_contraction(x_train, x_test, "trace"),
            _trace(full))


def _trace(k: Any) -> Any:
    """The trace over the last two dims (the tutorial's einsum('NMKK->NM')), by a sum of the diagonal's entries."""
    return sum(k[..., i, i] for i in range(k.shape[-1]))


# -- the tests ---------------------------------------------------------------------------------------------------
def _np(x: Any) -> np.ndarray:
    return x.detach().numpy()


def _same(ours: Any, theirs: Any, what: str) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: {tuple(ours.shape)} against {tuple(theirs.shape)}"
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-9, atol=1e-11, err_msg=what)


def test_per_sample_gradients_as_torch_and_as_the_loop() -> None:
    ours, ours_loop = per_sample_gradients(gc, gc.float64)
    theirs, _ = per_sample_gradients(torch, torch.float64)
    assert set(ours) == set(theirs)
    for k in theirs:
        _same(ours[k], theirs[k], k)
        _same(ours[k], ours_loop[k], f"{k}, against the loop")


def test_ensembling_as_torch_and_as_each_model_alone() -> None:
    ours, theirs = ensembling(gc, gc.float64), ensembling(torch, torch.float64)
    for k, name in enumerate(["different minibatches", "their loop", "one minibatch", "its loop"]):
        _same(ours[k], theirs[k], name)
    _same(ours[0], ours[1], "vmap against each model alone")
    _same(ours[2], ours[3], "vmap (in_dims=(0, 0, None)) against each model alone")


def test_ntk_as_torch_and_both_methods_agree() -> None:
    ours, theirs = ntk(gc, gc.float64), ntk(torch, torch.float64)
    for k, name in enumerate(["jacobian contraction, full", "ntk-vector products, full",
                              "jacobian contraction, trace", "ntk-vector products, trace"]):
        _same(ours[k], theirs[k], name)
    assert tuple(ours[0].shape) == (5, 4, 3, 3)
    _same(ours[0], ours[1], "the two methods")
    _same(ours[2], ours[3], "the two methods' traces")


def test_the_tutorials_in_float32() -> None:
    def flat(out: Any) -> list:
        if isinstance(out, dict):
            return [out[k] for k in sorted(out)]
        return [out]

    for run in (lambda L, dt: per_sample_gradients(L, dt)[0], lambda L, dt: ensembling(L, dt)[0],
                lambda L, dt: ntk(L, dt)[1]):
        ours = flat(run(gc, gc.float32))
        theirs, reference = flat(run(torch, torch.float32)), flat(run(torch, torch.float64))
        for a, b, r in zip(ours, theirs, reference, strict=True):
            assert_float32_close(_np(a), _np(b), _np(r), steps=200, scale=max(1.0, float(np.abs(_np(r)).max())))
