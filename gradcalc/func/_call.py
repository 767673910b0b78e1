"""`functional_call`: call a module with some of its parameters and buffers replaced, as
`torch.func.functional_call` (so `grad` can differentiate with respect to them); `stack_module_state`: the
parameters and buffers of several models of one class, stacked, for `vmap(functional_call)` to run them all
(PyTorch's model-ensembling recipe)."""

from __future__ import annotations

from typing import Any

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """`module(*args, **kwargs)` with the attributes named (dotted: `"layer.weight"`) in
    `parameter_and_buffer_dicts` (a dict, or a tuple of dicts) set to the given tensors for the call."""
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) else (
        parameter_and_buffer_dicts,)
    merged: dict[str, Any] = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise TypeError(f"functional_call: parameter_and_buffer_dicts must be a dict or a tuple of dicts, "
                            f"not {type(d).__name__}")
        for k, v in d.items():
            if k in merged:
                raise ValueError(f"functional_call: {k!r} is given twice in parameter_and_buffer_dicts")
            merged[k] = v
    if strict and hasattr(module, "named_parameters"):
        known = {n for n, _ in module.named_parameters()}
        if hasattr(module, "named_buffers"):
            known |= {n for n, _ in module.named_buffers()}
        if set(merged) != known:
            raise RuntimeError(f"functional_call (strict): missing {sorted(known - set(merged))}, unexpected "
                               f"{sorted(set(merged) - known)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved: list[tuple[Any, str, Any]] = []
    try:
        for name, value in merged.items():
            *path, last = name.split(".")
            owner = module
            for part in path:
                owner = getattr(owner, part)
            if not hasattr(owner, last):
                raise AttributeError(f"functional_call: the module has no attribute {name!r}")
            saved.append((owner, last, _swap(owner, last, value)))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, last, old in reversed(saved):
            _swap(owner, last, old)


def _swap(owner: Any, name: str, value: Any) -> Any:
    """Put `value` in place of `owner.name` and return what was there. A module that registers its
    parameters and buffers in dicts (`_parameters`, `_buffers`, as PyTorch's) has them swapped there, so its
    own attribute rules (a parameter must be a Parameter) do not refuse a plain tensor."""
    for registry in ("_parameters", "_buffers"):
        table = getattr(owner, registry, None)
        if isinstance(table, dict) and name in table:
            old = table[name]
            table[name] = value
            return old
    old = getattr(owner, name)
    setattr(owner, name, value)
    return old


def stack_module_state(models: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, buffers): for each name of the models' parameters (buffers), the models' tensors stacked
    along a new first dimension. Stacked parameters are new leaves that require grad when the models' do."""
    from ..autograd.ops.joins import stack

    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors: tuple, name: str) -> Any:
        wants = [t.requires_grad for t in tensors]
        if any(wants) and not all(wants):
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = stack([t.detach() for t in tensors])
        return out.requires_grad_() if all(wants) else out

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
