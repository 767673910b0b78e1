"""The operations, one module per family, each beside its spec (spec.py).

What `gradcalc.<name>` and `Tensor.<name>` are is derived from the specs: every registered operation (`@spec.op`,
and each `unary` row) is installed here as its function, its method and its in-place method (`Tensor.<name>_`),
and so is any operation registered later (`spec.listen`). A module may add names that are not operations of a
spec, in its `FUNCTIONS` (module-level `gradcalc.<name>`), `METHODS` (`Tensor.<name>`, operators included) and
`PROPERTIES` (read-only `Tensor.<name>` attributes): constructors, comparisons, conversions, and the hand-written
fast forms of the in-place arithmetic, which replace derived ones of the same name.
"""

from __future__ import annotations

from types import ModuleType

from .. import spec
from ..differentiate import tensor_backward
from ..tensor import Tensor
from . import (
    arithmetic,
    basic,
    batch_norm,
    binary,
    classification,
    conv,
    creation,
    device,
    divergence,
    dropout,
    einsum,
    elementwise,
    embedding,
    encoding,
    indexing,
    inplace,
    joins,
    linalg,
    losses,
    nn,
    normalization,
    pooling,
    random,
    reductions,
    reorder,
    shape,
    smooth_losses,
    softmax,
    spellings,
    sums,
    unary,
)

# in the order of their layers (each imports only modules before it); later modules' entries replace earlier
# ones of the same name (device's constructors take `device=`)
MODULES: tuple[ModuleType, ...] = (
    basic, shape, joins, sums, binary, unary, elementwise, arithmetic, reductions, softmax, linalg, inplace, indexing,
    reorder, nn, losses, classification, conv, pooling, einsum, encoding, creation, device, random, spellings,
    normalization, batch_norm, dropout, embedding, smooth_losses, divergence,
)


def _spelled(name: str, fn: object) -> object:
    """`fn`, taking PyTorch's `axis=`/`keepdims=` aliases too when it takes `dim`/`keepdim` (spellings.py)."""
    return spellings.with_aliases(fn) if callable(fn) and spellings.takes_aliases(name, fn) else fn  # type: ignore


FUNCTIONS: dict = {}


def install(op: spec.OpSpec) -> None:
    """Make operation `op` reachable: `gradcalc.<name>`, `Tensor.<name>` and `Tensor.<name>_` as its spec says."""
    for name in op.names:
        if op.top_level:
            FUNCTIONS[name] = _spelled(name, op.function)
        if op.method:
            setattr(Tensor, name, _spelled(name, op.function if op.method is True else op.method))
    if op.inplace:
        method = op.inplace if callable(op.inplace) else inplace.inplace_method(op.function, op.name)
        setattr(Tensor, f"{op.name}_", method)


for _op in spec.OPS.values():
    install(_op)
spec.listen(install)  # an operation registered from now on (a contributor's, a test's) is installed as it comes

for _module in MODULES:
    FUNCTIONS.update((_name, _spelled(_name, _fn)) for _name, _fn in getattr(_module, "FUNCTIONS", {}).items())
    for _name, _fn in getattr(_module, "METHODS", {}).items():
        setattr(Tensor, _name, _spelled(_name, _fn))
    for _name, _fn in getattr(_module, "PROPERTIES", {}).items():
        setattr(Tensor, _name, property(_fn))

Tensor.backward = tensor_backward  # type: ignore[attr-defined]
