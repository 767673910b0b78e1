"""What `explain` and `graph` tell, in one protocol: a `Told` is rendered as styled text or as JSON objects.

Every form of `explain` (a narrated backward or grad(), `explain T.grad`, bare `explain`) and `graph y` makes
one `Told` and hands its `render` to the session, which calls it with its `--format` and colour:

- `lines(style)`: the text, one string per line, styled by `style` (style.py: colour in the REPL and the
  kernel, none in pipes or under NO_COLOR; values as `--format torch` or `plain` prints them);
- `objects()`: with `--format json`, the objects printed one per line (LANGUAGE.md §7's objects).
"""

from __future__ import annotations

import json

from .style import Style


class Told:
    """Something told: a subclass gives `lines` and `objects`; `render` is how a session shows it."""

    def lines(self, style: Style) -> list[str]:
        """The text, one string per line."""
        raise NotImplementedError

    def objects(self) -> list[dict[str, object]]:
        """What `--format json` prints: one object per line."""
        raise NotImplementedError

    def render(self, fmt: str, color: bool) -> str:
        """The text for the session's format (`torch`, `plain`: text; `json`: JSON lines) and colour."""
        if fmt == "json":
            return "\n".join(json.dumps(o, allow_nan=True) for o in self.objects())
        return "\n".join(self.lines(Style(fmt, color)))
