"""Helpers for the language tests: run source text in a fresh Session and capture what it prints."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from gradcalc.lang import Session

DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): (?P<msg>.*)$"
)


@dataclass
class Result:
    ok: bool
    out: str
    err: str

    @property
    def errors(self) -> list[str]:
        return [
            m.group("msg") for m in map(DIAGNOSTIC.match, self.err.splitlines()) if m and m["kind"] == "error"
        ]

    @property
    def warnings(self) -> list[str]:
        return [
            m.group("msg")
            for m in map(DIAGNOSTIC.match, self.err.splitlines())
            if m and m["kind"] == "warning"
        ]


def run(source: str, *, session: Session | None = None, filename: str = "<stdin>", **options) -> Result:
    """Run `source`; stdout and stderr captured separately."""
    out, err = io.StringIO(), io.StringIO()
    s = session or Session(out=out, err=err, format=options.pop("format", "torch"))
    if session is not None:
        s._out, s._err = out, err
    ok = s.run(source, filename, **options)
    return Result(ok, out.getvalue(), err.getvalue())


def out(source: str, **options) -> str:
    """What `source` prints on standard output (asserting that no error happened)."""
    r = run(source, **options)
    assert r.ok, r.err
    return r.out


def markers(source: str, filename: str = "t.gc") -> str:
    """Run with values and diagnostics in one stream, diagnostics reduced to `@LINE kind` markers (the form
    of the seed scripts' expected files)."""
    stream = io.StringIO()
    s = Session(out=stream, err=stream)
    s.run(source, filename, keep_going=True)
    lines = stream.getvalue().splitlines()
    result = []
    skipping = False
    for line in lines:
        m = DIAGNOSTIC.match(line)
        if m:
            result.append(f"@{m['line']} {m['kind']}")
            skipping = True
            continue
        if skipping:  # the source line and the caret under it
            if line.strip() == "^":
                skipping = False
            continue
        result.append(line)
    return "\n".join(result) + ("\n" if result else "")
