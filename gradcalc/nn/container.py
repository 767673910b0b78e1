"""The containers: `Sequential` (modules applied one after another, indexed like a list: `net[0]`, `net[1:]`,
`len(net)`), `ModuleList` and `ModuleDict` (submodules held as a list or a dict, registered under their index or
key, so that `parameters()` and `state_dict()` see them: `layers.0.weight`), `ParameterList` and `ParameterDict`
(parameters held likewise). Each behaves as PyTorch's, its `repr` included."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from ..autograd.tensor import Tensor
from .module import Module, _addindent
from .parameter import Parameter


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


def _absolute(idx: Any, n: int) -> str:
    """The key of list index `idx` (negative counts from the end), PyTorch's `_get_abs_string_index`."""
    i = operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return str(i + n if i < 0 else i)


class ModuleList(Module):
    """Submodules held in a list: indexed, sliced, appended to and iterated as a list, each registered under its
    index (so `parameters()` and `state_dict()` see them: `layers.0.weight`). It has no forward of its own."""

    _modules: dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[_absolute(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, _absolute(idx, len(self)), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, _absolute(idx, len(self)))
        # renumbered, as PyTorch does, so that the keys stay 0..n-1
        self.__dict__["_modules"] = {str(i): m for i, m in enumerate(self._modules.values())}

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before position `index`."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add `module` at the end; returns this ModuleList."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove the module at `key` and return it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add the modules of an iterable at the end; returns this ModuleList."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self) -> str:
        """PyTorch's: runs of equal modules shown once, as `(0-2): 3 x Linear(...)`."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in runs]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Submodules held in an ordered dict, each registered under its key. It has no forward of its own."""

    _modules: dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Mapping[str, Module] | Iterable[Any] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module under `key` and return it."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        """The keys, in order."""
        return self._modules.keys()

    def items(self) -> Any:
        """(key, module) pairs, in order."""
        return self._modules.items()

    def values(self) -> Any:
        """The modules, in order."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[Any]) -> None:
        """Add (or replace) modules from a mapping or from an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is"
                                + type(m).__name__)
            if len(m) != 2:  # type: ignore[arg-type]
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")  # type: ignore[arg-type]
            self[m[0]] = m[1]  # type: ignore[index]


def _entry_repr(k: Any, p: Any, dtype: str) -> str:
    if isinstance(p, Tensor):
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        size = "x".join(str(n) for n in p.shape)
        return f"  ({k}): {kind} containing: [{dtype} of size {size}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """Parameters held in a list, each registered under its index (a tensor added becomes a Parameter)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, _absolute(idx, len(self)))

    def __setitem__(self, idx: int, param: Any) -> None:
        key = _absolute(idx, len(self))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add `value` at the end (a tensor becomes a Parameter); returns this ParameterList."""
        new = len(self)
        self._size += 1
        self[new] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add the values of an iterable at the end; returns this ParameterList."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(k, p, str(p.dtype) if isinstance(p, Tensor) else "")
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters held in an ordered dict, each registered under its key (a tensor added becomes a Parameter)."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict of the same entries."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under `key`, set to `default` first if there is none."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove the entry under `key` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove the last entry and return it as (key, value)."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """The value under `key`, or `default`."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with `keys`, each set to `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys, in order."""
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        """(key, value) pairs, in order."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        """The values, in order."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add (or replace) entries from a mapping (a plain dict's in sorted key order, as PyTorch) or from an
        iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is"
                                    + type(p).__name__)
                if len(p) != 2:  # type: ignore[arg-type]
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is "  # type: ignore[arg-type]
                                     "required")
                self[p[0]] = p[1]  # type: ignore[index]

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(k, p, p.type() if isinstance(p, Tensor) else "") for k, p in self.items())

    def __call__(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
