"""The one error type of the plotting core.

The language layer turns a `PlotError` into its own diagnostic (with the statement's location), so the
message is written for the user: plain words, no Python or NumPy internals.
"""

from __future__ import annotations


class PlotError(Exception):
    """A plot that cannot be drawn: a bad range, an expression that is not one number per point, a file
    that cannot be written, or the optional image extra that is not installed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
