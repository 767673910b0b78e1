"""Tab completion: workspace names, keywords and built-ins; tensor attributes and methods after `.`, and a
namespace's members (`nn.`, `torch.nn.`, `F.re`); REPL commands after `:`, and file names after `:load `."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from gradcalc.lang.syntax.keywords import COMMANDS as COMMAND_NAMES
from gradcalc.repl.blocks import scan

COMMANDS = tuple(":" + name for name in COMMAND_NAMES)  # the language's (gradcalc/lang/syntax/keywords.py)
EXPORT_FORMATS = ("torch", "notebook")  # gradcalc.export.FORMATS (not imported: the REPL starts without it)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
# `x.`, `x.gr`, `x.grad.ze`: a dotted name (not a number such as `3.`) followed by a partial attribute.
_ATTRIBUTE = re.compile(
    r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)"
    r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)?$"
)


class CompletionSource(Protocol):
    """What the completer needs of a Session."""

    def completions(self) -> list[str]: ...

    def attribute_completions(self, name: str) -> list[str]: ...


def _in_string_or_comment(line: str) -> bool:
    """True when the end of `line` is inside a string literal or a comment."""
    comment, in_string = scan(line)
    return comment is not None or in_string


class GradcalcCompleter(Completer):
    """Completes against a live Session, so that new variables are offered as soon as they exist."""

    def __init__(self, session: CompletionSource, keywords: Iterable[str] = (), builtins: Iterable[str] = ()):
        self.session = session
        self.keywords = frozenset(keywords)
        self.builtins = frozenset(builtins)
        self._paths = PathCompleter(expanduser=True)

    def _meta(self, name: str) -> str:
        if name in self.keywords:
            return "keyword"
        if name in self.builtins:
            return "built-in"
        return "variable"

    def _namespace(self, base: str) -> Any:
        """The namespace `base` names (`nn`, `torch.nn`, an imported alias), or None."""
        from ..lang.values.namespace import PREDEFINED_NAMESPACES, Namespace

        first, *rest = base.split(".")
        workspace = getattr(self.session, "workspace", {})
        value = workspace.get(first, PREDEFINED_NAMESPACES.get(first))
        for part in rest:
            if not isinstance(value, Namespace) or not value.has(part):
                return None
            value = value.member(part)
        return value if isinstance(value, Namespace) else None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        line = document.current_line_before_cursor
        stripped = line.lstrip()
        if stripped.startswith(":") and document.cursor_position_row == 0:
            yield from self._command_completions(stripped, document, complete_event)
            return
        if _in_string_or_comment(line):
            return
        match = _ATTRIBUTE.search(line)
        if match is not None:
            base = re.sub(r"\s+", "", match.group(1))
            prefix = match.group(2) or ""
            try:
                names = self.session.attribute_completions(base)
                namespace = self._namespace(base)
            except Exception:  # noqa: BLE001 - completion must never break the prompt
                return
            from ..lang.values.builtins import METHODS, NODE_METHODS
            from ..lang.values.namespace import member_kind

            for name in sorted(set(names)):
                if name.startswith(prefix) and (prefix.startswith("_") or not name.startswith("_")):
                    if namespace is not None:  # nn.Linear, F.relu: the short name, and what it is
                        kind = member_kind(namespace.member(name))
                    else:
                        kind = "method" if name in METHODS or name in NODE_METHODS else "attribute"
                    yield Completion(name, start_position=-len(prefix), display_meta=kind)
            return
        if line.rstrip().endswith("."):
            return  # `3.`, `[1, 2].`: a dot after something that is not a name
        word = _WORD.search(line)
        prefix = word.group(0) if word else ""
        if word is not None and word.start() > 0 and (line[word.start() - 1].isdigit()):
            return  # `1e3`, `2x`: not a name
        if not prefix and not complete_event.completion_requested:
            return
        try:
            names = self.session.completions()
        except Exception:  # noqa: BLE001 - completion must never break the prompt
            return
        for name in sorted(set(names)):
            if name.startswith(prefix) and name != prefix:
                yield Completion(name, start_position=-len(prefix), display_meta=self._meta(name))

    def _command_completions(
        self, stripped: str, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        if " " not in stripped:
            for command in COMMANDS:
                if command.startswith(stripped):
                    yield Completion(command, start_position=-len(stripped), display_meta="command")
            return
        command, _, argument = stripped.partition(" ")
        if command == ":load":
            argument = argument.lstrip()
            yield from self._paths.get_completions(Document(argument, len(argument)), complete_event)
        elif command == ":export":  # :export torch|notebook FILE
            fmt, space, path = argument.lstrip().partition(" ")
            if not space:
                for name in EXPORT_FORMATS:
                    if name.startswith(fmt):
                        yield Completion(name, start_position=-len(fmt), display_meta="format")
            else:
                path = path.lstrip()
                yield from self._paths.get_completions(Document(path, len(path)), complete_event)
