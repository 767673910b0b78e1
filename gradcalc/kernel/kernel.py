"""The gradcalc kernel on ipykernel's `Kernel` base: ipykernel speaks Jupyter's protocol (sockets, messages,
heartbeat, interrupt and shutdown), this class answers its requests with the language.

- execute: the cell runs in one `KernelSession` that lives as long as the kernel (the workspace carries
  over from cell to cell, as in the REPL); its outputs as outputs.py says; the reply's status is "error"
  when a statement failed, with the error's name, message and traceback.
- interrupt: a Jupyter client interrupts the kernel with SIGINT, which ipykernel turns into a
  KeyboardInterrupt in the running cell; the Session stops the statement with `error: interrupted`, as
  Ctrl-C does in the REPL, and the kernel goes on.
- restart: the client starts a new kernel process (a fresh workspace); `do_shutdown` also starts a fresh
  Session, for a client that restarts in the same process.
- `:` commands run in the Session as in the REPL (a command the Session learns, such as `:export`, works
  here at once); `:quit` ends the cell and asks a console to exit (the `ask_exit` payload, as IPython's
  `exit` does), which a notebook ignores: the kernel runs on.
- complete, inspect, is_complete: assist.py.
"""

from __future__ import annotations

import sys
from typing import Any

from ipykernel.kernelbase import Kernel

from gradcalc import __version__

from . import assist
from .host import KernelSession
from .install import LANGUAGE_INFO
from .outputs import Outputs


class GradcalcKernel(Kernel):
    """A Jupyter kernel for the gradcalc language (see the module docstring)."""

    implementation = "gradcalc"
    implementation_version = __version__
    language_info = LANGUAGE_INFO
    banner = (
        f"gradcalc {__version__}: autograd as PyTorch does it, in cells. "
        "Type :help for help; Tab completes, Shift-Tab shows the help of a name."
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._outputs = Outputs(self._publish)
        self._session = KernelSession(self._outputs)

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = dict(super().kernel_info)
        # no Python debugger for the language; one Session runs one cell at a time (no subshells)
        info["supported_features"] = [
            f for f in info.get("supported_features", []) if f not in ("debugger", "kernel subshells")
        ]
        return info

    def _publish(self, msg_type: str, content: dict[str, Any]) -> None:
        self.send_response(self.iopub_socket, msg_type, content)

    def set_parent(self, ident: Any, parent: Any, channel: str = "shell") -> None:
        """Also tell ipykernel's output streams which request they answer (IPython's shell does this for
        its own kernel; without it, a client would not know the cell that a stream message belongs to)."""
        super().set_parent(ident, parent, channel)
        if channel == "shell":
            for stream in (sys.stdout, sys.stderr):
                setter = getattr(stream, "set_parent", None)
                if setter is not None:
                    setter(parent)

    # -- requests ----------------------------------------------------------------------------------
    async def do_execute(  # type: ignore[override]
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
    ) -> dict[str, Any]:
        reply: dict[str, Any] = {"execution_count": self.execution_count, "payload": [], "user_expressions": {}}
        if not code.strip():
            return {"status": "ok", **reply}
        session = self._session
        filename = f"In[{self.execution_count}]" if not silent else "<cell>"
        self._outputs.start(self.execution_count, silent)
        try:
            session.run_cell(code, filename)
        except KeyboardInterrupt:  # an interrupt that came after the cell's own handling of one
            self._outputs.error("interrupted", "error: interrupted")
        if session.quit_requested:
            session.quit_requested = False
            reply["payload"].append({"source": "ask_exit", "keepkernel": False})
        failure = self._outputs.failure
        if failure is not None:
            return {"status": "error", **reply, **failure}
        return {"status": "ok", **reply}

    async def do_complete(self, code: str, cursor_pos: int) -> dict[str, Any]:
        return assist.complete(self._session, code, cursor_pos)

    async def do_inspect(  # type: ignore[override]
        self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: Any = ()
    ) -> dict[str, Any]:
        text = assist.inspect(self._session, code, cursor_pos)
        data = {} if text is None else {"text/plain": text}
        return {"status": "ok", "found": text is not None, "data": data, "metadata": {}}

    async def do_is_complete(self, code: str) -> dict[str, Any]:
        return assist.is_complete(code)

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        if restart:
            self._session = KernelSession(self._outputs)
        return {"status": "ok", "restart": restart}
