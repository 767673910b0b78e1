"""gradcalc.nn.Module's API against torch.nn.Module's, from the user's side: `to` in each of PyTorch's forms
(device, dtype, tensor, meta), `cpu`/`double`/`float`/`type`, walking the tree, `state_dict`/`load_state_dict`
(keys in order, strictness, PyTorch's reports), buffers, `apply`, modes, `zero_grad`; meta tensors as far as
PyTorch's model-ensembling tutorial needs them (`func.stack_module_state` + `func.functional_call` under
`vmap`), that tutorial run on both."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch


def net(L: Any) -> Any:
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Tanh(), L.nn.Linear(3, 1))


def _meta_weight(n: Any) -> tuple:
    w = n[0].weight
    return str(w.device), w.is_meta, tuple(w.shape), w.requires_grad, repr(n[0].bias)


def _deepcopied(L: Any, n: Any) -> tuple:
    c = copy.deepcopy(n)
    return isinstance(c[0].weight, L.nn.Parameter), c[0].weight is n[0].weight, c[0].weight.requires_grad


def _zero_grad(L: Any, n: Any, set_to_none: bool) -> Any:
    n(L.ones(1, 2)).sum().backward()
    n.zero_grad(set_to_none=set_to_none)
    return n[0].bias.grad


def _buffer(L: Any, persistent: bool) -> tuple:
    m = L.nn.Linear(1, 1)
    m.register_buffer("rb", L.zeros(2), persistent=persistent)
    return [n for n, _ in m.named_buffers()], list(m.state_dict())


def _load_assign(L: Any, n: Any) -> tuple:
    n.load_state_dict({k: v * 0 + 1 for k, v in n.state_dict().items()}, assign=True)
    return n[0].bias.requires_grad, isinstance(n[0].bias, L.nn.Parameter), n[0].bias.tolist()


CASES: dict[str, Callable[[Any], Any]] = {
 "to_cpu": lambda L: type(net(L).to('cpu')).__name__,
 "to_device_kw": lambda L: type(net(L).to(device='cpu')).__name__,
 "to_dtype": lambda L: str(net(L).to(L.float64)[0].weight.dtype),
 "to_dtype_kw": lambda L: str(net(L).to(dtype=L.float64)[0].weight.dtype),
 "to_tensor": lambda L: str(net(L).to(L.zeros(1, dtype=L.float64))[0].weight.dtype),
 "to_cpu_dtype": lambda L: str(net(L).to('cpu', L.float64)[0].weight.dtype),
 "to_int": lambda L: net(L).to(L.int64),
 "to_nothing": lambda L: net(L).to(),
 "to_str_junk": lambda L: net(L).to('xyz'),
 "cpu": lambda L: type(net(L).cpu()).__name__,
 "double": lambda L: str(net(L).double()[0].bias.dtype),
 "type": lambda L: str(net(L).type(L.float64)[0].bias.dtype),
 "meta": lambda L: _meta_weight(net(L).to('meta')),
 "meta_same_obj": lambda L: (lambda n: n.to('meta') is n)(net(L)),
 "to_same_param_obj": lambda L: (lambda n: (n[0].weight is n.double()[0].weight))(net(L)),
 "named_parameters": lambda L: [n for n, _ in net(L).named_parameters()],
 "named_modules": lambda L: [n for n, _ in net(L).named_modules()],
 "named_children": lambda L: [n for n, _ in net(L).named_children()],
 "state_dict_keys": lambda L: (type(net(L).state_dict()).__name__, list(net(L).state_dict())),
 "load_missing": lambda L: net(L).load_state_dict({}),
 "load_missing_nonstrict": lambda L: str(net(L).load_state_dict({'x': L.zeros(1)}, strict=False)),
 "load_ok": lambda L: str(net(L).load_state_dict(net(L).state_dict())),
 "load_shape": lambda L: net(L).load_state_dict({**net(L).state_dict(), '0.bias': L.zeros(4)}),
 "load_nontensor": lambda L: net(L).load_state_dict({**net(L).state_dict(), '0.bias': 3}),
 "deepcopy_param": lambda L: _deepcopied(L, net(L)),
 "get_submodule": lambda L: type(net(L).get_submodule('0')).__name__,
 "get_parameter": lambda L: tuple(net(L).get_parameter('0.bias').shape),
 "requires_grad_": lambda L: [p.requires_grad for p in net(L).requires_grad_(False).parameters()],
 "train_ret": lambda L: (lambda n: (n.train() is n, n.eval().training, n[0].training))(net(L)),
 "train_bad": lambda L: net(L).train("x"),
 "zero_grad_default": lambda L: _zero_grad(L, net(L), True),
 "buffers": lambda L: _buffer(L, True),
 "buffer_np": lambda L: _buffer(L, False),
 "apply": lambda L: (lambda names: (net(L).apply(lambda m: names.append(type(m).__name__)), names)[1])([]),
 "extra_repr": lambda L: repr(net(L)),
 "param_count": lambda L: sum(p.numel() for p in net(L).parameters()),
 "state_dict_detached": lambda L: [v.requires_grad for v in net(L).state_dict().values()],
 "state_dict_prefix": lambda L: list(net(L).state_dict(prefix='m.')),
 "load_assign": lambda L: _load_assign(L, net(L)),
 "modules": lambda L: [type(m).__name__ for m in net(L).modules()],
 "children": lambda L: [type(m).__name__ for m in net(L).children()],
 "float_after_double": lambda L: str(net(L).double().float()[0].weight.dtype),
 "to_bad_kw": lambda L: net(L).to(foo=1),
 "to_non_blocking": lambda L: type(net(L).to('cpu', non_blocking=True)).__name__,
 "to_device_obj": lambda L: type(net(L).to(L.device('cpu'))).__name__,
 "meta_module_state_dict": lambda L: list(net(L).to('meta').state_dict()),
 "meta_repr_module": lambda L: repr(net(L).to('meta')),
 "register_buffer_dup": lambda L: (lambda m: m.register_buffer('weight', L.zeros(1)))(L.nn.Linear(1,1)),
 "register_buffer_nontensor": lambda L: (lambda m: m.register_buffer('b', 3))(L.nn.Linear(1,1)),
 "zero_grad_nonnone": lambda L: _zero_grad(L, net(L), False),
}
# where PyTorch's message names its own signatures, only the start must agree
PREFIX_ONLY = {"to_bad_kw", "train_bad", "to_int"}


def _outcome(make: Callable[[Any], Any], lib: Any) -> tuple[str, str]:
    try:
        value = make(lib)
    except Exception as exc:
        return type(exc).__name__, str(exc)
    return "OK", str(value).replace("gradcalc", "torch")


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_api_against_torch(name: str) -> None:
    ours, theirs = _outcome(CASES[name], gradcalc), _outcome(CASES[name], torch)
    if name in PREFIX_ONLY:
        assert ours[0] == theirs[0]
        head = theirs[1].split(" - ")[0].split(", but expected")[0][:40]
        assert ours[1].startswith(head), (ours, theirs)
    else:
        assert ours == theirs


META_CASES: dict[str, Callable[[Any], Any]] = {
    "to_meta": lambda L: repr(L.ones(2).to("meta")),
    "to_meta_grad": lambda L: repr(L.ones(2, 3, requires_grad=True).to("meta")),
    "meta_back": lambda L: L.ones(2).to("meta").to("cpu"),
    "meta_mixed": lambda L: L.ones(2).to("meta") + L.ones(2),
    "meta_module_call": lambda L: net(L).to("meta")(L.ones(1, 2)),
    "meta_module_to_cpu": lambda L: net(L).to("meta").to("cpu"),
    "meta_module_to_empty": lambda L: [str(p.device) for p in net(L).to("meta").to_empty(device="cpu").parameters()],
    "meta_param_repr": lambda L: repr(net(L).to("meta")[0].bias),
    "meta_double": lambda L: repr(net(L).to("meta").double()[0].bias),
    "meta_item": lambda L: L.ones(1).to("meta").item(),
}


@pytest.mark.parametrize("name", sorted(META_CASES))
def test_meta_tensors_against_torch(name: str) -> None:
    ours, theirs = _outcome(META_CASES[name], gradcalc), _outcome(META_CASES[name], torch)
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1].split(" Please use")[0]), (ours, theirs)


def test_meta_tensors_refuse_to_compute() -> None:
    """PyTorch computes shapes on meta tensors; gradcalc refuses (never zeros as values)."""
    m = gradcalc.ones(2, 3).to("meta")
    assert m.is_meta and not m.is_cpu and str(m.device) == "meta" and m.shape == (2, 3)
    with pytest.raises(RuntimeError, match="meta"):
        m * 2
    with pytest.raises(RuntimeError, match="meta"):
        gradcalc.sin(m)
    with pytest.raises(RuntimeError, match="gradcalc makes meta tensors only"):
        gradcalc.zeros(2, device="meta")


_MODELS: dict[str, type] = {}


def simple_mlp(L: Any) -> Any:
    """PyTorch's model-ensembling tutorial's model (smaller), one class per library."""
    if L.__name__ not in _MODELS:

        class SimpleMLP(L.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.fc1 = L.nn.Linear(16, 16)
                self.fc2 = L.nn.Linear(16, 16)
                self.fc3 = L.nn.Linear(16, 10)

            def forward(self, x: Any) -> Any:
                x = x.flatten(1)
                x = L.nn.functional.relu(self.fc1(x))
                x = L.nn.functional.relu(self.fc2(x))
                return self.fc3(x)

        _MODELS[L.__name__] = SimpleMLP
    return _MODELS[L.__name__]()


def _ensemble(L: Any, func: Any, data: np.ndarray, weights: list[list[np.ndarray]]) -> dict[str, Any]:
    """The tutorial, as written there, on library L; the random tensors are the test's."""
    models = [simple_mlp(L) for _ in weights]
    for model, ws in zip(models, weights, strict=True):
        with L.no_grad():
            for p, w in zip(model.parameters(), ws, strict=True):
                p.copy_(L.tensor(w))
    minibatches = L.tensor(data)[: len(models)]
    loop = L.stack([model(minibatch) for model, minibatch in zip(models, minibatches, strict=True)])
    params, buffers = func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to("meta")

    def fmodel(params: Any, buffers: Any, x: Any) -> Any:
        return func.functional_call(base_model, (params, buffers), (x,))

    different = func.vmap(fmodel)(params, buffers, minibatches)
    same = func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
    # the ensemble's gradient with respect to the stacked parameters
    different.sum().backward()
    return {"loop": loop, "different": different, "same": same, "grad": params["fc1.weight"].grad,
            "stacked": params["fc2.bias"], "buffers": buffers, "device": str(base_model.fc1.weight.device)}


def test_model_ensembling_tutorial() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 5, 16))
    shapes = [(16, 16), (16,), (16, 16), (16,), (10, 16), (10,)]
    weights = [[rng.standard_normal(s) * 0.3 for s in shapes] for _ in range(3)]
    ours = _ensemble(gradcalc, gradcalc.func, data, weights)
    theirs = _ensemble(torch, torch.func, data, weights)
    for key in ("loop", "different", "same", "grad", "stacked"):
        np.testing.assert_allclose(ours[key].detach().numpy(), theirs[key].detach().numpy(), rtol=1e-12,
                                   atol=1e-12, err_msg=key)
    np.testing.assert_allclose(ours["different"].detach().numpy(), ours["loop"].detach().numpy(), rtol=1e-12)
    s_ours, s_theirs = ours["stacked"], theirs["stacked"]
    assert (s_ours.requires_grad, s_ours.is_leaf, tuple(s_ours.shape)) == (
        s_theirs.requires_grad, s_theirs.is_leaf, tuple(s_theirs.shape))
    assert ours["buffers"] == theirs["buffers"] == {}
    assert ours["device"] == theirs["device"] == "meta"


@pytest.mark.parametrize("case", ["empty", "modes", "classes", "requires_grad"])
def test_stack_module_state_errors(case: str) -> None:
    def models(L: Any) -> list[Any]:
        L.manual_seed(0)
        if case == "empty":
            return []
        a, b = L.nn.Linear(2, 2), L.nn.Linear(2, 2)
        if case == "modes":
            b.eval()
        elif case == "classes":
            b = L.nn.Sequential(L.nn.Linear(2, 2))
        else:
            b.bias.requires_grad_(False)
        return [a, b]

    with pytest.raises(RuntimeError) as theirs:
        torch.func.stack_module_state(models(torch))
    with pytest.raises(RuntimeError) as ours:
        gradcalc.func.stack_module_state(models(gradcalc))
    assert str(ours.value) == str(theirs.value)
