"""The operations, one module per family. Each module lists what it adds:
`FUNCTIONS` (module-level `gradcalc.<name>`), `METHODS` (`Tensor.<name>`, operators included) and
`PROPERTIES` (read-only `Tensor.<name>` attributes)."""

from __future__ import annotations

from types import ModuleType

from ..tensor import Tensor
from . import (
    arithmetic,
    basic,
    classification,
    creation,
    device,
    elementwise,
    indexing,
    inplace,
    jvp_rules,  # noqa: F401 - imported for its effect: forward-mode rules of nodes of the modules above
    linalg,
    losses,
    nn,
    random,
    reductions,
    reorder,
    shape,
    spellings,
)

# later modules' entries replace earlier ones of the same name (device's constructors take `device=`)
MODULES: tuple[ModuleType, ...] = (
    arithmetic, elementwise, reductions, shape, linalg, indexing, basic, inplace, creation, reorder, device, random,
    nn, losses, classification, spellings,
)


def _spelled(name: str, fn: object) -> object:
    """`fn`, taking PyTorch's `axis=`/`keepdims=` aliases too when it takes `dim`/`keepdim` (spellings.py)."""
    return spellings.with_aliases(fn) if callable(fn) and spellings.takes_aliases(name, fn) else fn  # type: ignore


FUNCTIONS: dict = {}
for _module in MODULES:
    FUNCTIONS.update((_name, _spelled(_name, _fn)) for _name, _fn in getattr(_module, "FUNCTIONS", {}).items())
    for _name, _fn in getattr(_module, "METHODS", {}).items():
        setattr(Tensor, _name, _spelled(_name, _fn))
    for _name, _fn in getattr(_module, "PROPERTIES", {}).items():
        setattr(Tensor, _name, property(_fn))


def _install_backward() -> None:
    from ..differentiate import tensor_backward

    Tensor.backward = tensor_backward  # type: ignore[attr-defined]


_install_backward()
