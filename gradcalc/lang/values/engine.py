"""The engine's names the language reaches at run time (`ENGINE.Tensor`, `ENGINE.tensor`...), bound once.

The engine is loaded before any of the language is (`gradcalc.lang` is inside the `gradcalc` package), so
binding them here costs nothing; the compiled closures read them as attributes of one object.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import gradcalc
from gradcalc import Tensor
from gradcalc.autograd import Node

from ..limits import LIMITS

if TYPE_CHECKING:
    from ..limits import _Limits


class EngineNames:
    """The engine's tensor type, its `tensor` factory, its node type, and the session's limits."""

    # (Any: the language reads the engine's tensors and nodes through attributes the engine's classes do not
    # declare to a type checker; the engine's own typing is its business)
    Tensor: Any
    tensor: Callable[..., Any]
    Node: Any
    limits: _Limits

    def __init__(self) -> None:
        self.Tensor, self.tensor, self.Node, self.limits = Tensor, cast(Any, gradcalc).tensor, Node, LIMITS

    def load(self) -> None:
        """(The names are bound already; kept for callers written when they were looked up lazily.)"""


ENGINE = EngineNames()


def engine() -> ModuleType:
    """The engine's top-level module (`gradcalc`: `tensor`, `float64`, `manual_seed`...)."""
    return gradcalc
