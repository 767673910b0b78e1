"""A cell's outputs, in the order the program made them, as Jupyter messages.

What goes where (docs/language.md, "In Jupyter"):

- an expression statement's value: a `display_data` output whose `text/plain` is what the REPL prints --
  except the value of the cell's last statement, when that statement is an expression: the cell's
  `execute_result` (Jupyter's `Out[n]`);
- `print`, `explain`, `:help`, `:vars`, and text the REPL would print (a graph or plot drawn as text):
  the `stdout` stream; warnings: the `stderr` stream;
- a drawn graph or plot: a `display_data` output with the image and the text the REPL prints as `text/plain`;
- an error: the cell's error (`ename` "error", `evalue` the message, the traceback the REPL's message with
  its source line and caret), and the execute_reply's status "error".

Streams go through ipykernel's own output streams (`sys.stdout`/`sys.stderr` in the kernel process), which
send them in batches from their own thread; before any other message the streams are flushed, so that
Jupyter shows everything in the order it happened. A value is held back until the next output shows that it
was not the cell's last one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Publish = Callable[[str, dict[str, Any]], None]  # (message type, content) -> sent on IOPub


class Channel:
    """A text stream for the Session (its `out` or `err`): what it writes becomes the cell's stream `name`."""

    def __init__(self, outputs: Outputs, name: str) -> None:
        self._outputs = outputs
        self.name = name

    def write(self, text: str) -> int:
        self._outputs.write(self.name, text)
        return len(text)

    def flush(self) -> None:
        """Nothing: the kernel's streams flush on their own timer, and before any other output."""

    def isatty(self) -> bool:
        return False


class Outputs:
    """The outputs of the cell that is running (see the module docstring)."""

    def __init__(self, publish: Publish) -> None:
        self._publish = publish
        self.silent = False
        self.execution_count = 0
        self.failure: dict[str, Any] | None = None  # the cell's error: ename, evalue, traceback
        self._held: str | None = None  # the last value shown, not yet sent
        self._capture: list[str] | None = None
        self._last_stream: str | None = None

    def channel(self, name: str) -> Channel:
        """A writable stream for the cell's `stdout` or `stderr`."""
        return Channel(self, name)

    # -- a cell ------------------------------------------------------------------------------------
    def start(self, execution_count: int, silent: bool) -> None:
        """A cell starts: nothing held, no error yet."""
        self.execution_count = execution_count
        self.silent = silent
        self.failure = None
        self._held = None
        self._capture = None
        self._last_stream = None

    def finish(self, last_value_is_result: bool) -> None:
        """The cell ended: the value still held is its result when `last_value_is_result` (it ran to the
        end and its last statement is the expression that showed it), else one more display."""
        held, self._held = self._held, None
        if held is not None and last_value_is_result and not self.silent:
            self._flush_streams()
            self._publish("execute_result", {
                "execution_count": self.execution_count, "data": {"text/plain": held}, "metadata": {},
            })
        elif held is not None:
            self.display({"text/plain": held})
        self._flush_streams()

    # -- what the session writes -------------------------------------------------------------------
    def write(self, name: str, text: str) -> None:
        """Text for the stream `name` (or for the value or drawing being captured)."""
        if self._capture is not None and name == "stdout":
            self._capture.append(text)
            return
        if self.silent or not text:
            return
        self._release()
        if self._last_stream is not None and self._last_stream != name:
            _stream(self._last_stream).flush()  # stdout and stderr batch apart: keep them in order
        self._last_stream = name
        _stream(name).write(text)

    @contextmanager
    def capture(self) -> Iterator[list[str]]:
        """Within the block, standard output is collected into the list instead of sent."""
        outer, self._capture = self._capture, []
        captured = self._capture
        try:
            yield captured
        finally:
            self._capture = outer

    @contextmanager
    def value(self) -> Iterator[None]:
        """An expression statement's value is shown within the block: held back as a possible result."""
        self._release()
        with self.capture() as text:
            yield
        shown = "".join(text)
        if shown:
            self._held = shown[:-1] if shown.endswith("\n") else shown

    def display(self, data: dict[str, str]) -> None:
        """A `display_data` output: `data` maps MIME types to content (base64 for binary images)."""
        self._release()
        if self.silent:
            return
        self._flush_streams()
        self._publish("display_data", {"data": data, "metadata": {}, "transient": {}})

    def error(self, message: str, text: str) -> None:
        """The cell's error: `message`, and `text` (location, source line and caret) as its traceback."""
        self._release()
        self._flush_streams()
        self.failure = {"ename": "error", "evalue": message, "traceback": text.rstrip("\n").split("\n")}
        if not self.silent:
            self._publish("error", dict(self.failure))

    # -- order -------------------------------------------------------------------------------------
    def _release(self) -> None:
        """The held value was not the cell's last output: send it as a display."""
        held, self._held = self._held, None
        if held is not None and not self.silent:
            self._flush_streams()
            self._publish("display_data", {"data": {"text/plain": held}, "metadata": {}, "transient": {}})

    def _flush_streams(self) -> None:
        if self._last_stream is not None:
            _stream(self._last_stream).flush()
            self._last_stream = None


def _stream(name: str) -> Any:
    """ipykernel's output stream `name` (it replaces sys.stdout and sys.stderr in the kernel process)."""
    return sys.stdout if name == "stdout" else sys.stderr
