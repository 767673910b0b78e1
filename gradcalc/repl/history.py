"""The REPL's persistent history, kept in the XDG state directory.

`$XDG_STATE_HOME/gradcalc/history`, or `~/.local/state/gradcalc/history` when XDG_STATE_HOME is unset or not
an absolute path (as the XDG Base Directory specification says). When the file cannot be created or written,
the REPL keeps its history in memory and says so once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

APP_NAME = "gradcalc"
HISTORY_FILE = "history"


def state_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """gradcalc's directory under the XDG state directory."""
    base = environ.get("XDG_STATE_HOME", "")
    if not base or not os.path.isabs(base):
        home = environ.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local", "state")
    return Path(base) / APP_NAME


def history_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The history file's path."""
    return state_dir(environ) / HISTORY_FILE


class _SafeFileHistory(FileHistory):
    """A FileHistory that survives an unreadable or unwritable file: the REPL goes on without it."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.failed = False

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except (OSError, ValueError):
            self.failed = True
            return []

    def store_string(self, string: str) -> None:
        if self.failed:
            return
        try:
            super().store_string(string)
        except (OSError, ValueError):
            self.failed = True


def make_history(path: Path | None = None) -> tuple[History, str | None]:
    """The REPL's history and, when it can only be kept in memory, a one-line note saying why."""
    path = history_path() if path is None else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and not path.is_file():
            raise IsADirectoryError(f"{path} is not a file")
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return InMemoryHistory(), f"history will not be saved: {path}: {reason}"
    return _SafeFileHistory(str(path)), None
