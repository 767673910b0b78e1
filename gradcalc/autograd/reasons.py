"""What an engine error is about, for a front end that explains it (the language's bare `explain`).

An error a user can cause and a front end tells in full is made with `failure(message, reason, **info)`:
PyTorch's exception (a RuntimeError) with its message unchanged, carrying `autograd_reason`, one word from
`REASONS`, and `autograd_info`, what it is about (the node, the tensor, the versions...). The public,
typed form of both is `gradcalc.autograd.inspect.reason_of(exc)`. This module imports nothing of the
engine: every layer of it may raise such an error.
"""

from __future__ import annotations

from typing import Any

# Each reason with the fields of its `autograd_info` (a `?` marks one that may be absent): what
# inspect.py's typed records hold, and what a test checks every raise site against.
REASONS: dict[str, tuple[str, ...]] = {
    "freed": ("node",),  # a node's saved values were freed by an earlier backward
    "version": ("tensor", "node", "index", "saved_version", "version"),  # a saved tensor changed in place
    "leaf_inplace": ("tensor", "what", "view?"),  # an in-place change of a leaf that requires grad (or its view)
    "inference_inplace": ("tensor", "what"),  # an inference tensor changed in place outside inference mode
    "inference_saved": ("tensor", "node"),  # an inference tensor saved for backward outside inference mode
    "no_grad_output": ("tensor", "what"),  # backward/grad of an output that does not require grad
    "nonscalar": ("tensor", "what"),  # no gradient given for an output of more than one element
    "input_no_grad": ("index", "tensor"),  # an input of grad()/backward(inputs=) that does not require grad
    "unused": ("index", "tensor"),  # an input of grad() the outputs do not depend on
    "nan": ("node", "index", "grads"),  # anomaly mode: a node's formula gave NaN
}


def worded(pytorch: str, ours: str, kind: type[Exception] = RuntimeError) -> Exception:
    """An engine error as the Python API raises it: PyTorch's own text first (the phrase code and tests match
    on), then gradcalc's explanation on the next line. `language_message` keeps the explanation alone: a front
    end with words of its own (the language) shows that."""
    exc = kind(f"{pytorch}\n{ours}")
    exc.language_message = ours  # type: ignore[attr-defined]
    return exc


def failure(message: str, reason: str, pytorch: str | None = None, **info: Any) -> RuntimeError:
    """The engine's RuntimeError (PyTorch's text `pytorch` first when given, see `worded`), plus what a front
    end needs to explain it: `autograd_reason` (a word of `REASONS`) and `autograd_info` (its fields)."""
    exc = worded(pytorch, message) if pytorch is not None else RuntimeError(message)
    exc.autograd_reason = reason  # type: ignore[attr-defined]
    exc.autograd_info = info  # type: ignore[attr-defined]
    return exc  # type: ignore[return-value]
