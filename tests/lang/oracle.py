"""PyTorch as the oracle for the seed scripts: run a `.py` program statement by statement, printing what
gradcalc's language prints for the mirrored `.gc` script.

Used only by make_expected.py (PyTorch is never needed to run the tests). A `.py` program calls `at(N)`
before the statements that mirror line N of its `.gc` script, and `show(value)` / `say(*values)` where the
script has an expression statement / a `print` statement. Warnings and exceptions are printed as markers
`@N warning` / `@N error` at the moment they happen (once per line for warnings, as gradcalc shows them),
so that the expected file records where PyTorch warned or failed, not PyTorch's wording.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from typing import Any

import torch

torch.set_default_dtype(torch.float64)

_line = [0]
_warned: set[int] = set()


def at(n: int) -> None:
    """The statements that follow mirror line n of the .gc script."""
    _line[0] = n


def fmt(value: Any, grad_fn: str | None = None) -> str:
    """A value as gradcalc prints it (LANGUAGE.md section 1), from PyTorch's own repr."""
    if isinstance(value, torch.Tensor):
        text = repr(value).replace("dtype=torch.", "dtype=")
        if grad_fn is not None:
            text = re.sub(r"grad_fn=<\w+>", f"grad_fn=<{grad_fn}>", text)
        return text
    if isinstance(value, torch.Size):
        return repr(tuple(value))
    if isinstance(value, tuple):
        items = [fmt(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if type(value).__name__.endswith("Backward0") or type(value).__name__.endswith("Backward"):
        return f"<{value.name()}>"
    return repr(value)


def show(value: Any, grad_fn: str | None = None) -> None:
    """An expression statement: prints its value (a call's None prints nothing: use show only for values)."""
    print(fmt(value, grad_fn), flush=True)


def say(*values: Any) -> None:
    """A `print` statement: the values separated by spaces, strings as they are."""
    print(" ".join(v if isinstance(v, str) else fmt(v) for v in values), flush=True)


def _on_warning(
    message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    if _line[0] not in _warned:
        _warned.add(_line[0])
        print(f"@{_line[0]} warning", flush=True)


def run_file(path: str) -> None:
    """Run the program one top-level statement at a time; an exception is an `@N error` marker, then on."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    namespace: dict[str, Any] = {"__name__": "__oracle__"}
    warnings.simplefilter("always")
    warnings.showwarning = _on_warning
    for stmt in tree.body:
        code = compile(ast.Module([stmt], type_ignores=[]), path, "exec")
        try:
            exec(code, namespace)
        except Exception:  # noqa: BLE001 - any failure is what the marker records
            print(f"@{_line[0]} error", flush=True)


if __name__ == "__main__":
    import oracle  # the module the .py programs import (not this __main__ copy)

    oracle.run_file(sys.argv[1])
