"""`Sequential`: modules applied one after another, indexed like a list (`net[0]`, `net[1:]`, `len(net)`)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from .module import Module


class Sequential(Module):
    """A chain of modules: the output of each is the input of the next. Give the modules in order
    (named '0', '1', ...) or as one dict of names to modules."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _index(self, idx: Any) -> int:
        try:
            i = operator.index(idx)
        except TypeError:
            raise TypeError(f"Sequential indices must be integers or slices, not {type(idx).__name__}") from None
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a Sequential of {n} modules")
        return i % n

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[self._index(idx)]
        setattr(self, key, module)

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]:
            del self._modules[key]
        # renumber, as PyTorch does, so that indices stay 0..n-1
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(self._modules.values())}

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns this Sequential."""
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        for module in self._modules.values():
            input = module(input)
        return input
