"""Exceptions raised while a statement runs, as located `GradcalcError`s in the language's words.

Everything that fails while running passes through `error_from` (calls first through `calls.call_error`,
operators through `operator_error`), so this is the one place where a message is made safe to show:
- Python's own exceptions (recursion, memory, division of Python numbers, a key) get our sentences;
- NumPy's broadcasting failure becomes PyTorch's message, "The size of tensor a (3) must match the size of
  tensor b (2) at non-singleton dimension 0", for every operation that broadcasts;
- a message that still speaks Python's or NumPy's insides (`speaks_python`) is never shown: the caller's
  description of what was attempted replaces it, and the original is kept in `fallback.seen` (tests read it:
  each such message is a place where a better message is missing).
"""

from __future__ import annotations

import functools
import gc
import re
import sys
from typing import Any

import numpy as np

from gradcalc.autograd.graph import Node

from ..errors import GradcalcError, Loc
from ..limits import MAX_DIMS, too_many_dims
from .convert import describe

OP_WORDS = {
    "+": "add",
    "-": "subtract",
    "*": "multiply",
    "/": "divide",
    "//": "floor-divide",
    "%": "take the remainder of",
    "@": "matrix-multiply",
    "**": "raise to a power",
}
OP_WORDS.update({f"{sym}=": verb for sym, verb in list(OP_WORDS.items()) if sym in "+-*/"})  # x += v

# Python's own words for an operator applied to values it does not take
_PYTHON_OPERAND_WORDS = (
    "unsupported operand",
    "not supported between",
    "can only concatenate",
    "can't multiply",
    "must be str",
    "not iterable",
    "bad operand type",
    "is not supported, use",  # NumPy: `-` of a bool array
    "did not contain a loop",  # NumPy: a ufunc of values it has no loop for
    "could not convert",
)

@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """The regular expressions of this module, compiled on the first failure (not at every start-up)."""
    return {
        # words of Python's or NumPy's insides: a message with one of them is never shown as it is
        "python": re.compile(
            r"NoneType|\bobject\b|positional argument|keyword argument|<lambda>|<locals>|ndarray|\bnp\.|_data\b"
            r"|operands could not be broadcast|(?<![.\w])(?:int|float)\(\)|argument must be|__\w+__|Traceback"
            r"|\bgradcalc\.\w| at 0x"
            r"|'(?:NoneType|int|str|list|tuple|dict|function|method|slice|Tensor|Node)'"
            r"|\b(?:str|NoneType|TypeError|ValueError|AttributeError|IndexError|KeyError|RuntimeError)\b"
            r"|\b(?:RawList|UserFunction|BoundMethod|CustomFunction|Builtin|DType)\b|\bdtype\('|\barray\("
            r"|\b(?:kw)?args\b|(?i:numpy)|as a data type|empty sequence|\baxis\b|\btorch\.(?!\w+Tensor\b)\w"
            r"|\b(?:not|got) (?:float|tuple|list|str|dict|Size|Tensor)\b"
        ),
        # a private name (PyTorch's `_saved_*` are its documented names), outside quotes (the user's own text)
        "private": re.compile(r"(?<!\w)_(?!saved_)[A-Za-z]\w*"),
        "quoted": re.compile(r"'[^']*'"),
        "self": re.compile(r"\bself\b"),
        "broadcast": re.compile(r"operands could not be broadcast together with (?:remapped )?shapes"),
        "shape": re.compile(r"\(([\d,\s]*)\)"),
        "out_of_bounds": re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)"),
        # NumPy's limit on dimensions: "maximum supported dimension for an ndarray is (currently) 64, found
        # 65", "... would exceed the maximum number of dimension of 64", "number of dimensions must be within
        # [0, 64], indexing result would have 65"
        "dims": re.compile(r"maximum supported dimension for an ndarray is (?:currently )?\d+, found (\d+)"
                           r"|exceed the maximum number of dimension"
                           r"|number of dimensions must be within \[0, \d+\], indexing result would have (\d+)"),
        "mask": re.compile(
            r"boolean index did not match indexed array along (?:axis|dimension) (\d+); size of (?:axis|dimension) "
            r"is (\d+) but size of corresponding boolean (?:axis|dimension) is (\d+)"
        ),
    }


class _Fallback:
    """Messages that spoke Python and were replaced (the newest last; a few are kept, for tests): `seen` by
    the generic sentence (a message is missing there), `described` by the caller's account of what failed."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.described: list[str] = []

    def note(self, message: str, described: bool = False) -> None:
        kept = self.described if described else self.seen
        kept.append(message)
        del kept[:-50]


fallback = _Fallback()


def speaks_python(message: str) -> bool:
    """Whether `message` names Python's or NumPy's insides (a type, a function, a private name)."""
    p = _patterns()
    if p["python"].search(message) or p["private"].search(p["quoted"].sub("''", message)):
        return True
    # Python's `self`; but PyTorch names a saved input `self` (`_saved_self`, `saved.self`)
    return "saved" not in message and p["self"].search(message) is not None


def _numpy_broadcast(message: str) -> str | None:
    """NumPy's "operands could not be broadcast together with shapes (3,) (2,)" as PyTorch says it."""
    p = _patterns()
    if not p["broadcast"].search(message):
        return None
    from gradcalc.autograd.inspection import broadcast_message  # (an error's way only: not on a cold start)

    text = message.split("[original->remapped]:")[-1]
    shapes = [tuple(int(d) for d in m.split(",") if d.strip()) for m in p["shape"].findall(text)]
    if "remapped" in message and len(shapes) == 2:  # a value written into a place of another shape
        value, target = shapes
        found = broadcast_message([target, value])
        if found is not None:
            return found.replace("tensor a", "the target").replace("tensor b", "the value")
    return broadcast_message(shapes)


def saved_bytes() -> int:
    """How many bytes the values saved for backward hold, over every graph alive (views counted once).

    Found by walking the garbage collector's objects: run only when memory ran out, never on the way."""
    from gradcalc.autograd.inspection import saved  # (only when memory ran out: not on a cold start)

    seen: set[int] = set()
    total = 0
    for obj in gc.get_objects():
        if not isinstance(obj, Node):
            continue
        for value in saved(obj):  # none once freed
            data = value.value.detach().numpy() if value.is_tensor and value.value is not None else None
            if isinstance(data, np.ndarray):
                while isinstance(data.base, np.ndarray):
                    data = data.base
                if id(data) not in seen:
                    seen.add(id(data))
                    total += data.nbytes
    return total


def _peak_bytes() -> int | None:
    """The process's largest resident size so far (None where the system does not say)."""
    try:
        import resource  # (only when memory ran out, not on a cold start; not on every system)
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, kilobytes elsewhere


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{max(n / 2**20, 0.1):.1f} MB"


def out_of_memory() -> str:
    """What running out of memory means here: when the values saved for backward take a good part of what
    the process holds (a quarter or more), that they do, how much, and the fixes; otherwise that the
    computation needs more memory than is free. (--max-elements limits one result's size: a result under
    that limit can still need more memory than there is, so it is not the fix.)"""
    try:
        saved = saved_bytes()
        peak = _peak_bytes()
    except MemoryError:  # too little memory even to count: say what is sure
        saved, peak = 0, None
    if saved and saved >= 0.25 * (peak or 4 * 2**30):
        return (f"out of memory: the graphs recorded for backward hold {_size(saved)} of values saved for it. "
                "Compute under `with no_grad:` where no gradient is needed, keep `.detach()`ed copies instead "
                "of graph members, run backward sooner (it frees them), or use smaller sizes")
    return "out of memory: this needs more memory than is free (use smaller sizes, or del what you no longer need)"


def translate(exc: BaseException) -> str:
    """An exception's message in our words, as far as it can be told from the exception alone."""
    if isinstance(exc, GradcalcError):
        return exc.message
    # the engine's error in its own words, without PyTorch's text
    own: str | None = getattr(exc, "language_message", None)
    if own is not None:
        return own
    if isinstance(exc, RecursionError):
        return "the computation is nested too deeply (a function calls itself without end?)"
    if isinstance(exc, MemoryError):
        return out_of_memory()
    if isinstance(exc, ZeroDivisionError):
        return "division by zero (of plain numbers; tensors give inf or nan)"
    if isinstance(exc, OverflowError):
        return f"a number is too large: {exc}"
    message = str(exc)
    if "use the `~` or `logical_not()` operator" in message:  # PyTorch's hint, in the language (it has no ~)
        message = message.replace("use the `~` or `logical_not()` operator", "use logical_not(x)")
    if isinstance(exc, KeyError) and exc.args:
        return f"no key {exc.args[0]!r}"
    if isinstance(exc, (ValueError, IndexError)):
        found = _patterns()["dims"].search(message)
        if found:
            dims = found[1] or found[2]
            return too_many_dims(int(dims)) if dims else too_many_dims(cause=f"a list nested more than {MAX_DIMS} deep")
    if isinstance(exc, ValueError):
        shaped = _numpy_broadcast(message)
        if shaped is not None:
            return shaped
    if isinstance(exc, IndexError):  # NumPy's words for an index array, as PyTorch says them
        found = _patterns()["out_of_bounds"].match(message)
        if found:
            return f"index {found[1]} is out of bounds for dimension {found[2]} with size {found[3]}"
        found = _patterns()["mask"].match(message)
        if found:
            return (f"the mask's size {found[3]} does not match the size {found[2]} of the indexed tensor at "
                    f"dimension {found[1]}")
    return message or f"the engine failed ({type(exc).__name__})"


def error_from(exc: BaseException, loc: Loc | None, what: str | None = None) -> GradcalcError:
    """An exception raised while running, as a located GradcalcError in our words. `what` says what was
    attempted, for when the exception's own words are Python's."""
    if isinstance(exc, GradcalcError):
        if exc.loc is None:
            exc.loc = loc
        if not speaks_python(exc.message):
            return exc
    message = translate(exc)
    if speaks_python(message):
        fallback.note(message, described=what is not None)
        message = what or "this operation can't be done with these values"
    return GradcalcError(message, loc)


def operator_error(exc: Exception, sym: str, a: Any, b: Any, loc: Loc) -> GradcalcError:
    """An operator's failure: Python's complaint about operand types as ours, naming both operands."""
    text = str(exc)
    if sym in ("==", "!=", "<", "<=", ">", ">="):
        attempted = f"can't compare {describe(a)} with {describe(b)} using '{sym}'"
    else:
        verb = OP_WORDS.get(sym, f"apply '{sym}' to")
        attempted = f"can't {verb} {describe(a)} and {describe(b)} (operator '{sym}')"
    if isinstance(exc, TypeError):  # operands of kinds the operator does not take
        return GradcalcError(attempted, loc)
    if any(w in text for w in _PYTHON_OPERAND_WORDS):
        return GradcalcError(attempted, loc)
    return error_from(exc, loc, attempted)
