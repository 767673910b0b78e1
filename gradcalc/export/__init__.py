"""Export (LANGUAGE.md §10): a gradcalc program, or the session so far, as a PyTorch script that prints what
gradcalc prints (`gradcalc --export torch FILE.gc`, `:export torch FILE.py`), or as a notebook for the gradcalc
kernel (`--export notebook`, `:export notebook FILE.ipynb`).

- registry.py: `@translates(Record)`, each statement's translation, registered beside its compile function in
  gradcalc/lang/statements/;
- script.py: the translator (statements, names, comments); expressions.py: expressions from the lowered records;
  names.py: PyTorch's names of the built-ins, from the language's tables; prelude.py: the script's top;
- notebook.py: the notebook; source.py: what is exported (statements with their text).

Nothing here is imported when gradcalc starts, but registry.py (which imports nothing).
"""

from __future__ import annotations

from typing import Any

FORMATS = ("torch", "notebook")
SUFFIXES = {"torch": ".py", "notebook": ".ipynb"}
WHAT = {"torch": "the PyTorch script", "notebook": "the notebook"}

__all__ = ["FORMATS", "SUFFIXES", "WHAT", "export", "export_program"]


def export(entries: list[Any], fmt: str, title: str = "") -> str:
    """`entries` (source.py's `Entry`s) as a PyTorch script (`fmt` "torch") or a notebook ("notebook")."""
    if fmt == "torch":
        from .script import translate

        return translate(entries, title)
    if fmt == "notebook":
        from .notebook import notebook

        return notebook(entries)
    raise ValueError(f"the export formats are {', '.join(FORMATS)}, not {fmt!r}")


def export_program(source: str, filename: str, fmt: str) -> str:
    """Program `source` (named `filename`) exported as `fmt`; a GradcalcError (with the filename and source set)
    when it does not parse."""
    from .language import GradcalcError, parse
    from .source import entries

    try:
        program = parse(source)
    except GradcalcError as exc:
        exc.filename, exc.source = filename, source
        raise
    title = f"{filename} as PyTorch, exported by gradcalc (gradcalc --export torch {filename})"
    return export(entries(program, source, filename), fmt, title)
