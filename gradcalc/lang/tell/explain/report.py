"""An explanation in words (`explain T.grad`, bare `explain`): a `Told` whose lines are built once the session's
format and colour are known; with `--format json` one object `{"event": "explain", "about": ..., "reason": ...,
"text": ...}`."""

from __future__ import annotations

from collections.abc import Callable

from .style import Style
from .told import Told


class Report(Told):
    """`build(style)` gives the lines; `about` is what was explained ("grad", "error"), `reason` a word for
    the case (e.g. "not_leaf", "freed"); `extra` more fields of its JSON object."""

    def __init__(self, about: str, reason: str, build: Callable[[Style], list[str]], **extra: object) -> None:
        self.about, self.reason, self.build, self.extra = about, reason, build, extra

    def lines(self, style: Style) -> list[str]:
        return self.build(style)

    def objects(self) -> list[dict[str, object]]:
        text = "\n".join(self.build(Style("torch", False)))
        return [{"event": "explain", "about": self.about, "reason": self.reason, **self.extra, "text": text}]


def owned(origin: object, interp: object) -> bool:
    """Whether `origin` is a statement of this session (the engine's history is shared by a process)."""
    owner = getattr(origin, "owner", None)
    return owner is not None and owner() is interp
