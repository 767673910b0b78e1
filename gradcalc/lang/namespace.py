"""Namespace values of the language (`func`): a name whose attributes are functions (`func.grad`).

A namespace's functions live in a module of their own, imported on the first attribute read, so that a
plain run does not pay for them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from .errors import GradcalcError, Loc, close_matches


class NamespaceFunction:
    """`func.grad` as a value: calling it binds the arguments (with our messages) and runs the function."""

    __slots__ = ("label", "fn")

    def __init__(self, label: str, fn: Callable[..., Any]) -> None:
        self.label, self.fn = label, fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .transforms import bind

        bind(self.label, self.fn, args, kwargs)
        return self.fn(*args, **kwargs)

    @property
    def doc(self) -> str:
        """`:help func.grad`: the signature and the docstring."""
        from .builtins import signature_text

        return f"{signature_text(self.label, self.fn)}: {' '.join((inspect.getdoc(self.fn) or '').split())}"

    def __repr__(self) -> str:
        return f"<built-in function {self.label}>"


class Namespace:
    """A namespace value: its functions are the `MEMBERS` of `module`, loaded on first use."""

    __slots__ = ("name", "module", "_members")

    def __init__(self, name: str, module: str) -> None:
        self.name, self.module = name, module
        self._members: dict[str, Callable[..., Any]] | None = None

    @property
    def members(self) -> dict[str, Callable[..., Any]]:
        """The namespace's functions by name."""
        if self._members is None:
            self._members = importlib.import_module(self.module, __package__).MEMBERS
        return self._members

    def member(self, attr: str, loc: Loc | None = None) -> NamespaceFunction:
        """`func.grad`; an unknown name is an error that lists the namespace's functions."""
        fn = self.members.get(attr)
        if fn is None:
            close = close_matches(attr, list(self.members), n=1)
            hint = f"did you mean '{self.name}.{close[0]}'? " if close else ""
            raise GradcalcError(f"{self.name} has no function '{attr}'; {hint}its functions: "
                                f"{', '.join(sorted(self.members))} (:help {self.name})", loc)
        return NamespaceFunction(f"{self.name}.{attr}", fn)

    def doc_of(self, attr: str) -> str | None:
        """`:help func.grad`, or None for a name the namespace does not have."""
        fn = self.members.get(attr)
        return NamespaceFunction(f"{self.name}.{attr}", fn).doc if fn is not None else None

    def __repr__(self) -> str:
        return f"<namespace {self.name}>"


# the torch.func transforms: func.grad(f), func.jacrev(f), ... (func_namespace.py)
FUNC = Namespace("func", ".func_namespace")
