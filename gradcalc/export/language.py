"""What the export reads of the language, imported in this one place: the records (lowered expressions and
statements), the built-ins' tables and the namespaces, the parser. (The language's modules are being moved
into sub-packages; their paths are written here and nowhere else in gradcalc/export/ and tests/export/.)"""

from __future__ import annotations

from gradcalc.lang import ast as A
from gradcalc.lang import statements as S
from gradcalc.lang.ast import STATEMENT_RECORDS, walk_statements
from gradcalc.lang.builtins import ATTRIBUTES, CONSTANTS, DTYPES, FUNCTIONS, METHODS, Builtin, derive_spec
from gradcalc.lang.errors import GradcalcError, Loc, format_diagnostic
from gradcalc.lang.keywords import GRAD_MODES
from gradcalc.lang.namespace import NAMESPACES, PREDEFINED_NAMESPACES, Namespace, NamespaceFunction
from gradcalc.lang.nn import Checked, engine_object
from gradcalc.lang.objects import MODULE_METHODS
from gradcalc.lang.runtime import UserFunction
from gradcalc.lang.spaces import SPACES, engine_module, is_checked

__all__ = [
    "A", "ATTRIBUTES", "Builtin", "CONSTANTS", "DTYPES", "FUNCTIONS", "GRAD_MODES", "GradcalcError", "Loc", "METHODS",
    "MODULE_METHODS", "NAMESPACES", "Namespace", "NamespaceFunction", "PREDEFINED_NAMESPACES", "S", "SPACES",
    "STATEMENT_RECORDS", "Checked", "UserFunction", "derive_spec", "engine_module", "engine_object",
    "format_diagnostic", "is_checked", "parse", "walk_statements",
]


def parse(source: str) -> A.Program:
    """The program `source` lowered to records (a SyntaxProblem when it does not parse)."""
    from gradcalc.lang.parser import parse as parse_program

    return parse_program(source)

