"""Reading and writing a file the user named: one wording for every reader and writer, and nothing half-written
(LANGUAGE.md §6).

Every statement or command that writes a file the user named (`graph ... to`, `plot ... to`, and whatever
comes later: a notebook export, `:export`) goes through here, so that its errors read the same:

    can't write the graph to 'out/y.svg': the directory 'out' does not exist
    can't write the plot to 'p.pdf': the file name must end in .svg or .png
    can't write the graph to '/etc/y.dot': permission denied

A file read (a script given to `gradcalc`, `:load`) says the same: `can't read the script from 'x.gc': no
such file or directory`, `can't load the script from 'lib': it is a directory`. A writer's confirmation
too: the writer's caller prints `confirmation(path)` (`wrote y.svg`) on standard error once the file is
complete, and nothing when nothing was written.

The data goes to a temporary file beside the target, renamed over it only once complete (a rename within
one directory is atomic): on any failure the temporary file is removed and an existing target is
untouched. The new file gets the usual permissions (0666 less the umask).

Knows nothing of the language or of plotting (both import it): a `FileProblem` carries the message, and the
caller turns it into its own error type.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import BinaryIO


class FileProblem(Exception):
    """A file that can't be written, in the one wording: `can't write WHAT to 'PATH': REASON` (a reader
    passes `verb="read"`, `"load"`: `can't read WHAT from 'PATH': REASON`)."""

    def __init__(self, what: str, path: str | os.PathLike[str], reason: str, verb: str = "write") -> None:
        self.what, self.path, self.reason = what, os.fspath(path), reason
        to = "to" if verb == "write" else "from"
        self.message = f"can't {verb} {what} {to} '{self.path}': {reason}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def confirmation(path: str | os.PathLike[str]) -> str:
    """What a writer's caller prints on standard error once the file is written: `wrote y.svg`."""
    return f"wrote {os.fspath(path)}"


def either(choices: Sequence[str]) -> str:
    """`.svg or .png`, `.dot, .svg or .png`."""
    return choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}"


def check_suffix(what: str, path: str | os.PathLike[str], suffixes: Sequence[str], described: str = "") -> str:
    """The file name's extension in lower case, one of `suffixes`; else the problem, naming them (or saying
    `described` instead: `.dot (Graphviz's text), .svg or .png (drawn by Graphviz)`)."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in suffixes:
        raise FileProblem(what, path, f"the file name must end in {described or either(suffixes)}")
    return suffix


def check_place(what: str, path: str | os.PathLike[str]) -> str:
    """The path with `~` expanded, once its directory is known to exist and the path is not a directory:
    checked before any costly drawing, so that a typo in the directory fails at once."""
    target = os.path.expanduser(os.fspath(path))
    directory = os.path.dirname(target) or "."
    if os.path.isdir(target):
        raise FileProblem(what, path, "it is a directory")
    if not os.path.exists(directory):
        raise FileProblem(what, path, f"the directory '{os.path.dirname(os.fspath(path))}' does not exist")
    if not os.path.isdir(directory):
        raise FileProblem(what, path, f"'{os.path.dirname(os.fspath(path))}' is not a directory")
    return target


def read(what: str, path: str | os.PathLike[str], verb: str = "read") -> bytes:
    """The bytes of the file `path` (`~` expanded); a FileProblem in the one wording when it can't be read."""
    target = os.path.expanduser(os.fspath(path))
    if os.path.isdir(target):
        raise FileProblem(what, path, "it is a directory", verb)
    try:
        with open(target, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise FileProblem(what, path, reason(exc), verb) from None


def write(what: str, path: str | os.PathLike[str], data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write `data` (bytes, or a function that writes into an open binary file) to `path`, whole or not at
    all. Raises FileProblem when the file can't be written; any other exception of `data` passes through
    (the temporary file removed either way)."""
    target = check_place(what, path)
    directory = os.path.dirname(target) or "."
    name = os.path.basename(target)
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    except OSError as exc:
        raise FileProblem(what, path, reason(exc)) from None
    try:
        with os.fdopen(handle, "wb") as out:
            if isinstance(data, bytes):
                out.write(data)
            else:
                data(out)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes the file private; give it the usual mode
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise FileProblem(what, path, reason(exc)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EISDIR: "it is a directory",
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the file name is too long",
}


def reason(exc: OSError) -> str:
    """The operating system's reason in the language's words (lower case, no error numbers)."""
    known = _REASONS.get(exc.errno or 0)
    if known is not None:
        return known
    text = exc.strerror or "the operating system refused it"
    return text[:1].lower() + text[1:]


def _umask() -> int:
    """The process's umask (reading it means setting it: it is put back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
