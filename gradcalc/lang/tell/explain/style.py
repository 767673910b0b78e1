"""How explain's text looks: values as the session prints them (PyTorch's reprs, which abbreviate long
tensors as PyTorch does), names and node names set off by colour in the REPL (none under NO_COLOR or in
batch: the session says whether), several-line values indented under their line."""

from __future__ import annotations

from ..render import plain, torch_repr

BOLD = "\x1b[1m"
CYAN = "\x1b[36m"
MAGENTA = "\x1b[35m"
DIM = "\x1b[2m"
GREEN = "\x1b[32m"
RESET = "\x1b[0m"


class Style:
    """Text pieces for one explanation: `fmt` is the session's --format (torch or plain), `color` its colour."""

    def __init__(self, fmt: str = "torch", color: bool = False) -> None:
        self.fmt = fmt if fmt in ("torch", "plain") else "torch"
        self.color = color

    def _paint(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color and text else text

    def name(self, text: str) -> str:
        """A workspace name (or several, as written)."""
        return self._paint(CYAN, text)

    def node(self, text: str) -> str:
        """A node's name (`MulBackward0`)."""
        return self._paint(BOLD, text)

    def where(self, text: str) -> str:
        """Where something was made (`line 3: y = a * b`)."""
        return self._paint(DIM, text)

    def formula(self, text: str) -> str:
        """A node's derivative as mathematics (`grad * other`)."""
        return self._paint(GREEN, text)

    def warn(self, text: str) -> str:
        """What went wrong, or a value that is not what one hopes (NaN, freed)."""
        return self._paint(MAGENTA, text)

    def value(self, v: object, indent: int = 0) -> str:
        """A value as the session prints it; the lines after the first indented by `indent` spaces."""
        if v is None:
            return "None" if self.fmt == "torch" else "none"
        text = torch_repr(v) if self.fmt == "torch" else plain(v)
        if "\n" in text:
            if self.fmt == "plain":
                text = "[" + "; ".join(text.splitlines()) + "]"
            else:
                text = text.replace("\n", "\n" + " " * indent)
        return text


def names_text(names: list[str], style: Style) -> str:
    """`a` or `a, b` (all the names of one tensor), coloured."""
    return style.name(", ".join(names))
