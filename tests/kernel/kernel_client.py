"""A gradcalc kernel under test: its own process, started by jupyter_client's KernelManager from the kernel
spec that `python -m gradcalc.kernel install --prefix` wrote (conftest.py), driven by a blocking client over
its real sockets. Every wait is for a message, with a generous timeout (a loaded 2-core machine)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 180.0  # seconds for a kernel to start and answer
CELL = 180.0  # seconds for a cell to finish
REPLY = 60.0  # seconds for a completion, inspection or is_complete reply
ANSI = re.compile(r"\x1b\[[0-9;]*m")
EXTRA = ("ipykernel", "jupyter_client", "nbclient", "nbformat")  # the jupyter extra


def need_jupyter() -> None:
    """Skip the test unless the jupyter extra (pip install -e '.[jupyter]') is installed."""
    import pytest

    for module in EXTRA:
        pytest.importorskip(module, reason="the jupyter extra is not installed: pip install -e '.[jupyter]'")


def kernel_env(extra_path: str | None = None) -> dict[str, str]:
    """The kernel's environment: this checkout's gradcalc first on the path (and `extra_path` before it)."""
    env = dict(os.environ)
    parts = [p for p in (extra_path, str(ROOT), env.get("PYTHONPATH")) if p]
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


@dataclass
class Cell:
    """What one execute request produced: the reply's content and the cell's IOPub messages in order."""

    reply: dict[str, Any]
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["status"]

    def stream(self, name: str) -> str:
        return "".join(c["text"] for t, c in self.messages if t == "stream" and c["name"] == name)

    @property
    def stdout(self) -> str:
        return self.stream("stdout")

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    @property
    def displays(self) -> list[dict[str, Any]]:
        """The data of each display_data output, in order."""
        return [c["data"] for t, c in self.messages if t == "display_data"]

    @property
    def result(self) -> str | None:
        """The execute_result's text/plain, if the cell has one."""
        found = [c["data"]["text/plain"] for t, c in self.messages if t == "execute_result"]
        assert len(found) <= 1, found
        return found[0] if found else None

    @property
    def values(self) -> list[str]:
        """The text/plain of every value output (displays and the result), in order."""
        return [c["data"]["text/plain"] for t, c in self.messages if t in ("display_data", "execute_result")]

    @property
    def error(self) -> dict[str, Any] | None:
        found = [c for t, c in self.messages if t == "error"]
        assert len(found) <= 1, found
        return found[0] if found else None

    @property
    def kinds(self) -> list[str]:
        """The kinds of output in order, consecutive stream messages of one stream counted once."""
        kinds: list[str] = []
        for t, c in self.messages:
            kind = f"stream:{c['name']}" if t == "stream" else t
            if not (kind.startswith("stream:") and kinds and kinds[-1] == kind):
                kinds.append(kind)
        return kinds


class RunningKernel:
    """A gradcalc kernel process and a blocking client connected to it."""

    def __init__(self, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        from jupyter_client import KernelManager

        self.cwd = cwd
        self.km = KernelManager(kernel_name="gradcalc")
        self.km.start_kernel(env=env or kernel_env(), cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=STARTUP)
        except BaseException:
            self.close()
            raise

    def run(self, code: str, timeout: float = CELL, hook: Any = None) -> Cell:
        """Execute `code` as a cell and wait until the kernel is idle again."""
        messages: list[tuple[str, dict[str, Any]]] = []

        def collect(msg: dict[str, Any]) -> None:
            if msg["msg_type"] not in ("status", "execute_input"):
                messages.append((msg["msg_type"], msg["content"]))
            if hook is not None:
                hook(msg)

        reply = self.kc.execute_interactive(code, output_hook=collect, timeout=timeout, stop_on_error=False)
        return Cell(reply["content"], messages)

    def request(self, kind: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Send a shell request (`complete`, `inspect`, `is_complete`) and return its reply's content."""
        msg_id = getattr(self.kc, kind)(*args, **kwargs)
        while True:
            reply = self.kc.get_shell_msg(timeout=REPLY)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]

    def restart(self) -> None:
        """Restart the kernel as a notebook's Restart does (a shutdown request with restart, a new process)."""
        self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=STARTUP)

    def close(self) -> None:
        self.kc.stop_channels()
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=False)


def plain(text: str) -> str:
    """`text` without its ANSI colours."""
    return ANSI.sub("", text)


def torch_repr(value: Any) -> str:
    """A value as PyTorch prints it with float64 as the default dtype (LANGUAGE.md section 1): the oracle."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        if isinstance(value, tuple):
            items = [torch_repr(v) for v in value]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return repr(value).replace("dtype=torch.", "dtype=")
    finally:
        torch.set_default_dtype(previous)


def torch_default_float64() -> Any:
    """A context in which torch makes float64 tensors by default, as gradcalc does."""
    import contextlib

    import torch

    @contextlib.contextmanager
    def scope() -> Any:
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            yield torch
        finally:
            torch.set_default_dtype(previous)

    return scope()


def legend_of(text: str) -> list[str]:
    """The labels of a terminal plot's legend: its lines that start with a curve's sample (a colour's line,
    or without colour the curve's own marker: gradcalc.plotting.terminal)."""
    from gradcalc.plotting.terminal import LEGEND_LINE, MARKERS

    samples = (LEGEND_LINE, *MARKERS)
    return [line.split(" ", 1)[1] for line in text.splitlines() if line.split(" ", 1)[0] in samples and " " in line]
