"""The operations, one module per family, each beside its spec (spec.py).

What `gradcalc.<name>` and `Tensor.<name>` are is derived from the specs: every registered operation (`@spec.op`,
and each `unary` row) is installed here as its function, its method and its in-place method (`Tensor.<name>_`),
and so is any operation registered later (`spec.listen`). A module may add names that are not operations of a
spec, in its `FUNCTIONS` (module-level `gradcalc.<name>`), `METHODS` (`Tensor.<name>`, operators included) and
`PROPERTIES` (read-only `Tensor.<name>` attributes): constructors, comparisons, conversions, and the hand-written
fast forms of the in-place arithmetic, which replace derived ones of the same name.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType

from .. import spec
from ..tensor import Tensor
from . import (
    arithmetic,
    basic,
    binary,
    creation,
    device,
    lazy,
    shape,
    spellings,
    sums,
    unary,
)

# in the order of their layers (each imports only modules before it); later modules' entries replace earlier
# ones of the same name (device's constructors take `device=`)
# (the families lazy.py defers are not among them: their names are installed when they load, by their specs and
# their tables)
MODULES: tuple[ModuleType, ...] = (
    basic, shape, sums, binary, unary, arithmetic, creation, device, spellings,
)


def _spelled(name: str, fn: object) -> object:
    """`fn`, taking PyTorch's `axis=`/`keepdims=` aliases too when it takes `dim`/`keepdim` (spellings.py)."""
    return spellings.with_aliases(fn) if callable(fn) and spellings.takes_aliases(name, fn) else fn  # type: ignore


FUNCTIONS: dict = {}


def install(op: spec.OpSpec) -> None:
    """Make operation `op` reachable: `gradcalc.<name>`, `Tensor.<name>` and `Tensor.<name>_` as its spec says."""
    if op.raw.__module__.rpartition(".")[2] in _DEFERRED:  # a family loading now (lazy.py): as below
        module = vars(sys.modules[op.raw.__module__])
        if module.get("warnings") is warnings:
            module["warnings"] = _Warnings()
    for name in op.names:
        function = _spelled(name, op.function) if op.top_level or op.method is True else None
        if op.top_level:
            FUNCTIONS[name] = function
        if op.method:
            setattr(Tensor, name, function if op.method is True else _spelled(name, op.method))
    if op.inplace:
        _install_inplace(op)


def _install_inplace(op: spec.OpSpec) -> None:
    """`Tensor.<name>_`: the operation's own in-place method, or its result written in place (inplace.py); while
    inplace.py is not loaded (a family loaded at first use), a Deferred that loads it (install_tables installs the
    method then)."""
    inplace = sys.modules.get(f"{__name__}.inplace")
    if callable(op.inplace):
        method = op.inplace
    elif inplace is None:
        setattr(Tensor, f"{op.name}_", lazy.Deferred(f"{op.name}_", "inplace", None))
        return
    else:
        method = inplace.inplace_method(op.function, op.name)
    setattr(Tensor, f"{op.name}_", spec.public(f"{op.name}_", method))


_DEFERRED = frozenset(lazy.DEFERRED)
for _op in spec.OPS.values():
    install(_op)
# an operation registered from now on (a deferred family's, a contributor's, a test's) is installed as it comes
spec.listen(install)

# Tensor's operators that a batched tensor meets as itself (it has its own: Python asks the right operand's
# reflected operator first when its class is a subclass), so a plain tensor's are the functions as written;
# every other name dispatches for vmap (spec.dispatching), in-place operators included (a batched value
# written into a plain tensor is PyTorch's error).
RAW_OPERATORS = frozenset(
    f"__{n}__" for n in ("add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow matmul "
                         "rmatmul and rand or ror xor rxor eq ne lt le gt ge neg pos abs invert deepcopy").split())


def _public(name: str, fn: object) -> object:
    if not callable(fn) or isinstance(fn, type):
        return fn
    return spec.raw_of(fn) if name in RAW_OPERATORS else spec.public(name, spec.raw_of(fn))


_TABLES_DONE: set[str] = set()


def install_tables(module: ModuleType, name: str | None = None, function: bool = False) -> None:
    """Install a module's `FUNCTIONS`, `METHODS` and `PROPERTIES`: a deferred family's all at once (when it loads:
    lazy.py calls this through `lazy.TABLES`); one of `MODULES` (loaded at start-up), its name `name` (a function
    when `function`, else Tensor's attribute) at the first use of its Deferred, or all that are still Deferreds
    when `name` is None (lazy.load_all)."""
    tables = vars(module)  # (its dict: a module's getattr of a missing name makes an error's message)
    short = module.__name__.rpartition(".")[2]
    if short not in _DEFERRED:
        for kind in (("FUNCTIONS",) if function else ("METHODS",)) if name is not None else _KINDS:
            for entry in (name,) if name is not None else tables.get(kind, {}):
                _install_entry(tables, short, kind, entry)
        return
    if module.__name__ in _TABLES_DONE:
        return
    _TABLES_DONE.add(module.__name__)
    FUNCTIONS.update((name, _spelled(name, _public(name, fn))) for name, fn in tables.get("FUNCTIONS", {}).items())
    for name, fn in tables.get("METHODS", {}).items():
        setattr(Tensor, name, _spelled(name, _public(name, fn)))
    for name, fn in tables.get("PROPERTIES", {}).items():
        setattr(Tensor, name, property(fn))  # (a batched tensor has its own: batched_tensor.py)
    if tables.get("warnings") is warnings:
        tables["warnings"] = _Warnings()  # a family loading now: as below
    if short == "inplace":  # the in-place forms of the operations registered before it loaded (_install_inplace)
        for op in spec.OPS.values():
            if op.inplace and type(vars(Tensor).get(f"{op.name}_")) is lazy.Deferred:
                _install_inplace(op)


_KINDS = ("FUNCTIONS", "METHODS")  # (a start-up module's properties are installed at import: `_defer_tables`)


def _install_entry(tables: dict, short: str, kind: str, name: str) -> None:
    """Install entry `name` of table `kind` of a module loaded at start-up (`short`), where its Deferred still is."""
    fn = tables.get(kind, {}).get(name)
    if fn is None:
        return
    if kind == "FUNCTIONS":
        current = FUNCTIONS.get(name)
        if type(current) is lazy.Deferred and current.module == short:
            FUNCTIONS[name] = _spelled(name, _public(name, fn))
        return
    current = vars(Tensor).get(name)
    if type(current) is lazy.Deferred and current.module == short:
        setattr(Tensor, name, _spelled(name, _public(name, fn)))


def _defer_tables(module: ModuleType) -> None:
    """Put a Deferred under each name of the tables of `module`, loaded at start-up: each is wrapped (for vmap's
    dispatch and the keyword aliases) and installed at its first use rather than at every start-up (some hundred
    names, 2M instructions and 500 objects). A later module's entry replaces an earlier one's of the same name
    (device's constructors take `device=`), as its Deferred does. Tensor's operators are installed as they are (the
    interpreter looks them up on the class; the arithmetic ones are the functions as written, RAW_OPERATORS), and
    so are its properties (no wrapper to make; a Deferred would compute the first value in a frame of its own, and a
    warning the property gives would point there)."""
    tables = vars(module)
    short = module.__name__.rpartition(".")[2]
    for name in tables.get("FUNCTIONS", {}):
        FUNCTIONS[name] = lazy.Deferred(name, short, FUNCTIONS)
    for name, fn in tables.get("METHODS", {}).items():
        operator = name.startswith("__")
        setattr(Tensor, name, _spelled(name, _public(name, fn)) if operator else lazy.Deferred(name, short, None))
    for name, fn in tables.get("PROPERTIES", {}).items():
        setattr(Tensor, name, property(fn))  # (a batched tensor has its own: batched_tensor.py)


for _module in MODULES:
    _defer_tables(_module)
lazy.STARTED = tuple(_module.__name__.rpartition(".")[2] for _module in MODULES)

# Tensor.backward: the engine (differentiate.py, engine.py, plan.py) loads at the first backward, which installs
# the method itself (differentiate.py)
Tensor.backward = lazy.Deferred("backward", "..differentiate", None)  # type: ignore[attr-defined]
lazy.install(FUNCTIONS, Tensor)  # the deferred families' names, each loading its family at first use
lazy.TABLES = install_tables


class _Warnings:
    """The `warnings` module as the operations' modules see it: `warn(..., stacklevel=k)` counts the frames of
    the functions `spec.dispatching` and the alias wrappers put between the operation and its caller as none,
    so that a warning points at the line that called the operation, as before they were wrapped. (Only a
    warning pays for it.)"""

    def __getattr__(self, name: str) -> object:
        return getattr(warnings, name)

    @staticmethod
    def warn(message: object, category: type[Warning] | None = None, stacklevel: int = 1,
             source: object = None) -> None:
        frame, extra = sys._getframe(1), 0
        for _ in range(stacklevel - 1):
            frame = frame.f_back
            while frame is not None and frame.f_code in _WRAPPERS:
                frame, extra = frame.f_back, extra + 1
            if frame is None:
                break
        warnings.warn(message, category, stacklevel + extra + 1, source)  # type: ignore[arg-type]


# (and a Deferred's call: the first call of a function through its Deferred, in FUNCTIONS, is made by it)
_WRAPPERS = {spec.dispatching(spec.Dispatched("", len), len).__code__, *spellings.wrapper_codes(),
             lazy.Deferred.__call__.__code__}
for _module in MODULES:
    if vars(_module).get("warnings") is warnings:
        _module.warnings = _Warnings()  # type: ignore[attr-defined]
