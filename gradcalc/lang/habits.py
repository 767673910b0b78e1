"""Habits users bring from Python, PyTorch, NumPy and calculators, and the pointer each gets: one table.

A habit is recognised where gradcalc would otherwise give a bare message: a name that is not defined
(`ln`, `help`, `np.`), a character or word the grammar does not have (`^`, `lambda`, `class`), a string with a
prefix (`f"..."`), a member of PyTorch's namespaces that the language does without (`nn.Module`), or a call of
a built-in that failed the way a habit makes it fail (`max(a, b)` of two numbers). The message then says what
to write instead, in the language's terms (LANGUAGE.md section 5, the end).
"""

from __future__ import annotations

from collections.abc import Sequence

_QUIT = "type :quit (or press Ctrl-D) to leave"
_NUMPY = ("drop the np. (numpy.) prefix: the built-ins have PyTorch's names (np.sin(x) is sin(x), "
          "np.array([1, 2]) is tensor([1, 2]))")
_CLASS = ("gradcalc has no classes: build a model with Sequential(...) (net = Sequential(Linear(1, 32), Tanh(), "
          "Linear(32, 1))), or write a function that calls modules (def net(x): return lin2(tanh(lin1(x))))")
_FORMAT = 'print the parts separated by commas instead (print "loss", loss prints: loss tensor(0.5000))'
_EXTREMUM = ("for the {elementwise} of two tensors or numbers, elementwise, write {fn}(a, b); {name}(x, d) reduces x "
             "along dimension d")

# (where it shows, what the user wrote): what to write instead
HABITS: dict[tuple[str, str], str] = {
    # a name that is not defined
    ("name", "ln"): "the natural logarithm is log(x)",
    ("name", "help"): "type :help (:help NAME for a built-in or topic)",
    ("name", "quit"): _QUIT,
    ("name", "exit"): _QUIT,
    ("name", "math"): "drop the math. prefix: math.sin(x) is sin(x), math.pi is pi",
    ("name", "np"): _NUMPY,
    ("name", "numpy"): _NUMPY,
    ("name", "lambda"): "gradcalc has no lambda: write a function with def (def f(v): return v * 2)",
    # a character the grammar does not have
    ("char", "^"): ("write ** for a power (2 ** 3); ^ is not an operator here (for exclusive or of booleans, "
                    "write a != b)"),
    # a word after which nothing parses (`lambda v: v * 2`)
    ("word", "lambda"): "gradcalc has no lambda: write a function with def (def f(v): return v * 2), then use f",
    ("word", "class"): _CLASS,
    ("name", "class"): _CLASS,
    # a prefix glued to a string literal (f"loss {loss}")
    **{("string", prefix): _FORMAT for prefix in ("f", "F", "rf", "fr", "Rf", "fR", "RF", "FR", "rF", "Fr")},
    # a member of PyTorch's namespaces that the language does without (namespace.py)
    ("member", "nn.Module"): _CLASS,
    ("member", "autograd.Function"): ("a custom autograd Function is a function block: function NAME(x): with a "
                                      "forward: block and a backward(grad_output): block (:help function)"),
    ("member", "autograd.forward_ad"): "forward mode is func.jvp(f, (x,), (v,)) or jvp(f, x, v) (:help func)",
    # a call of a built-in that failed
    ("call", "max"): _EXTREMUM.format(elementwise="larger", fn="maximum", name="max"),
    ("call", "min"): _EXTREMUM.format(elementwise="smaller", fn="minimum", name="min"),
}


def name_pointer(name: str) -> str | None:
    """The pointer for a name that is not defined, if it is a habit (`ln`, `help`, `torch`)."""
    return HABITS.get(("name", name))


def character_pointer(char: str) -> str | None:
    """The pointer for a character the grammar does not have (`^`)."""
    return HABITS.get(("char", char))


def word_pointer(word: str) -> str | None:
    """The pointer for a word after which the statement does not parse (`lambda`)."""
    return HABITS.get(("word", word))


def string_pointer(prefix: str) -> str | None:
    """The pointer for a name glued to a string literal (`f"loss {loss}"`), if it is a string prefix."""
    return HABITS.get(("string", prefix))


def member_pointer(spelled: str) -> str | None:
    """The pointer for a namespace member the language does without (`nn.Module`, `autograd.forward_ad.X`)."""
    pointer = HABITS.get(("member", spelled))
    if pointer is None and "." in spelled:
        pointer = HABITS.get(("member", spelled.rsplit(".", 1)[0]))
    return pointer


def call_pointer(name: str, args: Sequence[object]) -> str | None:
    """The pointer for a failed call of built-in `name` with positional `args`, when a habit explains it:
    `max(a, b)` meaning the larger of two values (PyTorch's max(x, d) reduces along dimension d)."""
    pointer = HABITS.get(("call", name))
    if pointer is None or len(args) != 2:
        return None
    return pointer


def with_pointer(message: str, pointer: str | None) -> str:
    """`message`, followed by the pointer when there is one."""
    return f"{message}; {pointer}" if pointer else message

