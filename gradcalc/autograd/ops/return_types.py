"""PyTorch's named tuples, `torch.return_types.<name>`: what `max(x, dim)`, `sort`, `topk`, `cummax`, `median`,
`aminmax`, `slogdet`... return. `named_tuple(name, fields)` makes each type, once, and registers it on
`return_types` (`gradcalc.return_types`, a module as `torch.return_types` is).

Each type is what PyTorch's structseq types are: a tuple subclass built from one sequence of exactly its fields'
count (`gradcalc.return_types.max((values, indices))`, which is also how func's pytrees rebuild one), its fields
read by name (properties by position), read-only, named in `match` (`__match_args__`, which the language uses too),
`n_fields`/`n_sequence_fields`, PyTorch's repr and messages, and picklable: pickle finds the class by
`__module__` + `__qualname__`, `gradcalc` + `return_types.max`.

The types of a family loaded at first use (ops/lazy.py) are made when it loads; reading one from `return_types`
before then (`gradcalc.return_types.median`, or unpickling one in a new process) loads its family, which
DEFERRED_TYPES names (tests/engine/test_return_types.py checks it against what the families register). This
module imports nothing heavy.
"""

from __future__ import annotations

import importlib
from operator import itemgetter
from types import ModuleType
from typing import Any

# the types each deferred family (ops/lazy.py's DEFERRED) makes: name -> family
DEFERRED_TYPES = {
    "max": "reductions", "min": "reductions", "sort": "reorder", "topk": "reorder",
    "cummax": "cumulative", "cummin": "cumulative",
    "median": "statistics", "kthvalue": "statistics", "mode": "statistics", "aminmax": "statistics",
    "slogdet": "decompositions", "linalg_slogdet": "decompositions",
}

_NO_SEQUENCE: Any = object()


class _ReturnTypes(ModuleType):
    """The namespace `gradcalc.return_types`: each type made so far, and the deferred families' on first read."""

    def __getattr__(self, name: str) -> Any:
        family = DEFERRED_TYPES.get(name)
        if family is not None:
            importlib.import_module(f"{__package__}.{family}")  # its named_tuple calls register the type
            found = self.__dict__.get(name)
            if found is not None:
                return found
        raise AttributeError(f"module 'gradcalc.return_types' has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__) | set(DEFERRED_TYPES))

    def __reduce__(self) -> str:
        # pickle's protocols 0-3 save a class whose __qualname__ is dotted as getattr(parent, name), pickling
        # the parent, this namespace: by reference, as this module's global `return_types`
        return "return_types"


return_types = _ReturnTypes("gradcalc.return_types", "PyTorch's named tuples (`torch.return_types`).")


def named_tuple(name: str, fields: tuple[str, ...]) -> type[tuple[Any, ...]]:
    """PyTorch's `torch.return_types.<name>` with fields `fields`: made on the first call, registered as
    `gradcalc.return_types.<name>`, the same type on every later call."""
    made = return_types.__dict__.get(name)
    if made is not None:
        if made.__match_args__ != fields:
            raise ValueError(f"return_types.{name} has fields {made.__match_args__}, not {fields}")
        return made  # type: ignore[no-any-return]
    label, count = f"torch.return_types.{name}", len(fields)

    def __new__(cls: type, sequence: Any = _NO_SEQUENCE, dict: Any = None) -> Any:  # noqa: A002 - PyTorch's name
        if sequence is _NO_SEQUENCE:
            raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
        try:
            items = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(items) != count:
            raise TypeError(f"{label}() takes a {count}-sequence ({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self: tuple[Any, ...]) -> str:
        return label + "(\n" + ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True)) + ")"

    def __reduce__(self: tuple[Any, ...]) -> tuple[Any, ...]:
        return (type(self), (tuple(self),))

    def __getattr__(self: tuple[Any, ...], attr: str) -> Any:  # (only when no field nor tuple method has the name)
        raise AttributeError(f"'{label}' object has no attribute '{attr}'", name=attr, obj=self)

    def __setattr__(self: tuple[Any, ...], attr: str, value: Any) -> None:
        raise AttributeError("readonly attribute" if attr in fields else
                             f"'{label}' object has no attribute '{attr}'")

    namespace: dict[str, Any] = {
        "__slots__": (), "__module__": "gradcalc", "__qualname__": f"return_types.{name}",
        "__doc__": f"{label}: a tuple ({', '.join(fields)}) whose items are also read by these names.",
        "__match_args__": fields, "n_fields": count, "n_sequence_fields": count, "n_unnamed_fields": 0,
        "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__, "__getattr__": __getattr__,
        "__setattr__": __setattr__, "__delattr__": lambda self, attr: __setattr__(self, attr, None),
    }
    for i, field in enumerate(fields):
        namespace[field] = property(itemgetter(i), doc=f"item {i} of the tuple")
    made = type(name, (tuple,), namespace)
    setattr(return_types, name, made)
    return made
