"""What the export reads of the language, imported in this one place: the records (lowered expressions and
statements), the built-ins' tables and the namespaces, the parser. (The language's modules live in its layers'
sub-packages, syntax/ and values/; their paths are written here and nowhere else in gradcalc/export/ and
tests/export/.)"""

from __future__ import annotations

from gradcalc.lang import statements as S
from gradcalc.lang.errors import GradcalcError, Loc, format_diagnostic
from gradcalc.lang.syntax import ast as A
from gradcalc.lang.syntax.ast import STATEMENT_RECORDS, walk_statements
from gradcalc.lang.syntax.keywords import GRAD_MODES
from gradcalc.lang.values.builtins import ATTRIBUTES, CONSTANTS, DTYPES, FUNCTIONS, METHODS, Builtin
from gradcalc.lang.values.functions import UserFunction
from gradcalc.lang.values.namespace import NAMESPACES, PREDEFINED_NAMESPACES, Namespace, NamespaceFunction
from gradcalc.lang.values.nn import Checked
from gradcalc.lang.values.objects import MODULE_METHODS, engine_object
from gradcalc.lang.values.signatures import derive_spec
from gradcalc.lang.values.spaces import SPACES, engine_module, is_checked

__all__ = [
    "A", "ATTRIBUTES", "Builtin", "CONSTANTS", "DTYPES", "FUNCTIONS", "GRAD_MODES", "GradcalcError", "Loc", "METHODS",
    "MODULE_METHODS", "NAMESPACES", "Namespace", "NamespaceFunction", "PREDEFINED_NAMESPACES", "S", "SPACES",
    "STATEMENT_RECORDS", "Checked", "UserFunction", "derive_spec", "engine_module", "engine_object",
    "format_diagnostic", "is_checked", "parse", "walk_statements",
]


def parse(source: str) -> A.Program:
    """The program `source` lowered to records (a SyntaxProblem when it does not parse)."""
    from gradcalc.lang.syntax.parser import parse as parse_program

    return parse_program(source)

