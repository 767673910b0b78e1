"""The statements of the language, one family per module: each statement is a record (the grammar rule it
is lowered from, its fields by name) and, beside it, the one function that compiles it to a closure.

Adding a statement (docs/contributing.md): a rule in grammar/gradcalc.lark, and here a record declared
with `@statement("rule_name")` and its compile function declared with `@compiles(Record)`.
"""

from __future__ import annotations

from ..syntax.ast import finish_records
from .assign import Assign, AugAssign, Del
from .autograd import Backward, Graph, RetainGrad, Seed, With, ZeroGrad
from .control import Branch, Break, Continue, For, If, Pass, Return, While
from .explain import Explain
from .functions import Def, FunctionDef, Save
from .imports import Import
from .output import Command, ExprStmt, Print
from .plot import Plot

finish_records()

__all__ = [
    "Assign", "AugAssign", "Backward", "Branch", "Break", "Command", "Continue", "Def", "Del", "Explain", "ExprStmt",
    "For", "Import",
    "FunctionDef", "Graph", "If", "Pass", "Plot", "Print", "RetainGrad", "Return", "Save", "Seed", "While", "With",
    "ZeroGrad",
]
