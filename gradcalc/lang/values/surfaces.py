"""How the engine's objects that the language shows as values (modules, optimizers, schedulers, generators) are
found: `surface_of(o)` asks the finders registered here, which objects.py adds when it loads (the first time a
program makes a module or an optimizer: a plain run loads neither it nor the engine's nn and optim packages).
A surface answers `o.name`, `o.name(...)`, assignment, and how `:vars`, messages and printing show `o`.

`OBJECT_CALLS` says how a value of such a type is called (`net(x)`); objects.py fills it too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradcalc import Tensor

    from .objects import Surface

# type -> how a value of that type is called (`net(x)`); filled by objects.py for the module classes
OBJECT_CALLS: dict[type, Callable[[Any, list[object], dict[str, object]], object]] = {}  # (Any: the key's type)

# functions that give the surface of a value they know, or None (objects.py adds its own when it loads)
FINDERS: list[Callable[[object], Surface[Any] | None]] = []


def surface_of(o: object) -> Surface[Any] | None:
    """The declared surface (objects.py) of a module, optimizer, scheduler or generator; None for any other
    value."""
    for find in FINDERS:
        surface = find(o)
        if surface is not None:
            return surface
    return None


def parameter_paths(name: str, value: object) -> list[tuple[str, Tensor]]:
    """The parameters of a module bound to workspace name `name`, each with the language's way to reach it
    (`net[0].weight`, `lin.bias`): how `graph` and `explain` name them. Empty for any other value."""
    if "gradcalc.nn" not in sys.modules:
        return []
    module_type = sys.modules["gradcalc.nn"].Module
    if not isinstance(value, module_type):
        return []
    out: list[tuple[str, Tensor]] = []
    for dotted, p in value.named_parameters():
        path = name
        for part in dotted.split("."):
            path += f"[{part}]" if part.isdigit() else f".{part}"
        out.append((path, p))
    return out
