"""Every message in the language's words, and every failed statement harmless: a seeded fuzz (no hypothesis).

Many thousands of calls of every built-in function (`builtins.FUNCTIONS`) and every tensor method
(`builtins.METHODS`), operators, indexing, attributes and the autograd statements, with odd arguments (none,
strings, lists, ragged lists, functions, nodes, shapes, booleans, huge and negative numbers, tensors of
mismatched shapes and dtypes, keyword arguments of wrong names and kinds), are run through the interpreter.
The test fails on:
- an exception escaping that is not gradcalc's own error (a traceback);
- an error or warning text with a Python or NumPy word in it (`PYTHON_WORDS`);
- grad, inference or anomaly mode (or the engine's backward state) left changed after a statement;
- a failed statement that changed the workspace, a `.grad`, a version counter, `retains_grad`, or freed a
  saved value (a snapshot is taken before each statement and compared when it failed).

Decisions written down here (and in docs/contributing.md): PyTorch's own message texts are fine ("The size of
tensor a (3) must match ..."); PyTorch's saved-value names `_saved_self`, `_saved_other` are the only private
names a message may show (they are the names PyTorch documents), and "self" appears only as such a saved
value's name (in a message about saved values); a method's tensor is `x` in signatures, as `:help` prints
them; "keyword argument"/"positional argument" are Python's phrasing and never shown: a call names its
parameters ("sum does not take an argument 'foo'").
"""

from __future__ import annotations

import io
import random
import re
import time
from collections.abc import Iterator

import pytest
from gclang_testing import modes_changed, snapshot

from gradcalc.lang import Session
from gradcalc.lang.syntax.keywords import GRAD_MODES
from gradcalc.lang.values.builtins import ATTRIBUTES, FUNCTIONS, METHODS
from gradcalc.lang.values.failures import fallback
from gradcalc.lang.values.namespace import NAMESPACES, Namespace

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SEED = 20240514
ROUNDS = 36  # calls of each built-in and of each method (x2 with the keyword-argument round)
NAMESPACE_ROUNDS = 4  # calls of each function of a namespace, under each of its spellings (x2 likewise)
BATCH = 60  # statements run in one session before a fresh one (failed statements change nothing)

# Words that belong to Python's or NumPy's insides, never to a gradcalc message.
PYTHON_WORDS = re.compile(
    r"""
      NoneType | \bobject\b | positional\ argument | keyword\ argument
    | <lambda> | <locals> | \ at\ 0x | <built-in\ method | <bound | <class
    | ndarray | numpy | \bnp\. | _data\b | operands\ could\ not\ be\ broadcast
    | (?<![.\w])(?:int|float)\(\) | argument\ must\ be | __\w+__ | Traceback
    | \bgradcalc\.\w
    | '(?:NoneType|int|str|list|tuple|dict|function|method|slice|Tensor|Node)'
    | \b(?:str|NoneType|TypeError|ValueError|AttributeError|IndexError|KeyError|RuntimeError)\b
    | \b(?:RawList|UserFunction|BoundMethod|CustomFunction|Builtin|Frame|Closure)\b
    | \bdtype\(' | \barray\( | \b(?:kw)?args\b | \bDType\b | (?i:numpy) | as\ a\ data\ type | empty\ sequence
    | \baxis\b | \btorch\.(?!\w+Tensor\b)\w | \b(?:not|got)\ (?:float|tuple|list|str|dict|Size|Tensor)\b
    """,
    re.X,
)
# a private name (PyTorch's `_saved_*` are its documented names); a name in quotes is the user's own text
PRIVATE = re.compile(r"(?<!\w)_(?!saved_)[A-Za-z]\w*")


def python_words(message: str) -> str | None:
    """The first Python or NumPy word in `message` (None: it speaks the language)."""
    found = next((m for m in PYTHON_WORDS.finditer(message) if not _language_spelling(message, m.start())), None)
    found = found or PRIVATE.search(re.sub(r"'[^']*'", "''", message))
    if found is None and "saved" not in message:  # PyTorch names a saved input `self`: `_saved_self`
        found = re.search(r"\bself\b", message)
    return found.group(0) if found else None


SETUP = """\
a = 2 requires_grad
v = [1, 2, 3] requires_grad
m = [[1, 2], [3, 4]] requires_grad
w = [[1, 2, 3], [4, 5, 6]]
y = (v * v).sum()
z = v * a
q = m @ m
f32 = tensor([1, 2], dtype=float32)
bt = v > 1.5
it = tensor([1, 2, 3], dtype=int64)
e0 = zeros(0)
c3 = ones(2, 1, 3)
u = 5 requires_grad
k = w.detach()
def f(t):
    return t * t
function sq(t):
    forward:
        save t
        return t * t
    backward(g):
        return 2 * t * g
node = y.grad_fn
s = "abc"
sh = w.shape
n = 2
lin = Linear(2, 3)
net = Sequential(Linear(3, 4), Tanh(), Linear(4, 1))
opt = SGD(lin.parameters(), lr=0.1)
gf = func.grad(f)
"""
OBJECTS = {"lin": "module", "net": "module", "opt": "optimizer", "gf": "function"}

TENSORS = ["a", "v", "m", "w", "y", "z", "q", "f32", "bt", "it", "e0", "c3", "u", "k"]
MODULE_METHODS = ("parameters", "named_parameters", "buffers", "children", "modules", "zero_grad", "train", "eval",
                  "requires_grad_", "state_dict", "load_state_dict", "forward", "double", "float", "to", "append",
                  "reset_parameters")
OPTIMIZER_METHODS = ("step", "zero_grad", "state_dict", "load_state_dict")
TRANSFORMS = ("grad", "vjp", "jvp", "jacrev", "jacfwd", "vmap", "hessian", "linearize", "grad_and_value")
VALUES = [
    "none", "true", "false", "0", "1", "2", "-1", "3", "0.5", "-7", "1e300", "-1e300", "123456789012",
    "2.5", "inf", "nan", "n", "'abc'", "''", "s", "[1, 2]", "[1, 2, 3]", "[[1, 2], [3, 4]]", "[]", "[[]]",
    "[v, 2]", "[v, m]", "[v, none]", "[v, 's']", "[1, [2]]", "f", "sq", "sin", "sum", "v.sum", "node",
    "y.grad_fn", "sh", "v.shape", "(1, 2)", "(2, 3)", "(v, 1)", "(none,)", "float32", "int64", "bool",
    "[true, false]", "v.grad", "y.grad_fn.next_functions", "lin", "net", "opt", "gf", "lin.weight", "func.grad",
    "func", "lin.parameters()", "net[0]", "F", "torch", "nn.Linear", "torch.pi", "torch.float32", "F.relu",
    "autograd.functional",
]
KEYWORDS = [
    "foo", "dtype", "dim", "keepdim", "out", "input", "other", "requires_grad", "inputs", "retain_graph",
    "create_graph", "gradient", "min", "max", "p", "alpha", "x", "size", "allow_unused", "grad_outputs",
]
OPERATORS = ["+", "-", "*", "/", "//", "%", "@", "**", "==", "!=", "<", "<=", ">", ">="]
SPELLINGS = ["torch", "torch.nn", "nn", "F", "torch.nn.functional", "optim", "torch.autograd", "autograd",
             "autograd.functional", "func", "torch.func", "torch.utils", "torch.nn.Linear", "nn.init", "v",
             "torch.autograd.forward_ad", "autograd.graph", "lr_scheduler", "optim.lr_scheduler"]
MEMBERS = ["sin", "Linear", "relu", "Adam", "grad", "jacobian", "nn", "functional", "no_grad", "Module", "foo",
           "Linaer", "float32", "pi", "backward", "Function", "vmap", "manual_seed", "zeros_", "make_dual", "init"]


def pick_value(rng: random.Random) -> str:
    return rng.choice(TENSORS) if rng.random() < 0.45 else rng.choice(VALUES)


def parameters(name: str, method: bool) -> list[str]:
    b = METHODS[name] if method else FUNCTIONS[name]
    try:
        return list(b.kw)
    except Exception:  # noqa: BLE001 - a built-in whose signature can't be read gets random names only
        return []


def arguments(rng: random.Random, params: list[str], keywords: bool) -> str:
    args = [pick_value(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 2, 3, 4]))]
    if keywords:
        for _ in range(rng.choice([1, 1, 2])):
            key = rng.choice(params) if params and rng.random() < 0.6 else rng.choice(KEYWORDS)
            if not any(part.startswith(f"{key}=") for part in args):
                args.append(f"{key}={pick_value(rng)}")
    return ", ".join(args)


def namespace_members() -> list[tuple[str, str, list[str]]]:
    """(how the namespace is spelled, member, its parameters) for every function of every namespace but torch's
    (torch's are the built-ins, called bare above): `F.relu`, `torch.nn.functional.relu`, `nn.init.zeros_`."""
    out = []
    for path, ns in NAMESPACES.items():
        if path == "torch":
            continue
        for name in ns.names():
            member = ns.member(name)
            if isinstance(member, Namespace) or not callable(member):
                continue
            params = list(getattr(member, "kw", {}) or {}) if hasattr(member, "kw") else []
            for spelled in {ns.label, path}:
                out.append((spelled, name, params))
    return out


def calls(rng: random.Random) -> Iterator[str]:
    """Every built-in and every method, ROUNDS times each with positional arguments and as often with
    keyword arguments, and every namespace function NAMESPACE_ROUNDS times, in a shuffled order."""
    jobs: list[tuple[str, bool, bool]] = []
    for _ in range(ROUNDS):
        for keywords in (False, True):
            jobs += [(name, False, keywords) for name in FUNCTIONS]
            jobs += [(name, True, keywords) for name in METHODS]
    members = namespace_members()
    for _ in range(NAMESPACE_ROUNDS):
        for keywords in (False, True):
            jobs += [(f"{spelled}.{name}", params, keywords) for spelled, name, params in members]
    rng.shuffle(jobs)
    for name, method, keywords in jobs:
        if isinstance(method, list):  # a namespace's function: `method` holds its parameters
            yield f"{name}({arguments(rng, method, keywords)})"
            continue
        args = arguments(rng, parameters(name, method), keywords)
        if method:
            receiver = rng.choice(TENSORS) if rng.random() < 0.9 else rng.choice(["none", "s", "node", "sh"])
            yield f"{receiver}.{name}({args})"
        else:
            yield f"{name}({args})"


def others(rng: random.Random, count: int) -> Iterator[str]:
    """Operators, indexing, attributes and statements."""
    attrs = sorted(ATTRIBUTES) + [
        "foo", "grad_fn.name", "grad_fn.name()", "next_functions", "variable", "_version", "grad_fn._saved_self",
        "grad_fn._saved_other", "grad_fn._saved_foo", "grad_fn.saved", "grad_fn.register_hook(f)",
        "register_hook(f)", "register_hook(none)", "grad_fn.register_prehook(sin)",
    ]
    for _ in range(count):
        p, q, r = pick_value(rng), pick_value(rng), pick_value(rng)
        kind = rng.randrange(18)
        if kind == 17:  # PyTorch's spellings: imports, blocks, namespace members (good and bad)
            yield rng.choice([
                f"import {rng.choice(SPELLINGS)}", f"import {rng.choice(SPELLINGS)} as G",
                f"from {rng.choice(SPELLINGS)} import {rng.choice(MEMBERS)}",
                f"from {rng.choice(SPELLINGS)} import {rng.choice(MEMBERS)} as G, {rng.choice(MEMBERS)}",
                f"{rng.choice(SPELLINGS)}.{rng.choice(MEMBERS)}", f"{rng.choice(SPELLINGS)}.{rng.choice(MEMBERS)}({p})",
                f"with {rng.choice(SPELLINGS)}.{rng.choice(GRAD_MODES)}():\n    {p} * 2",
                f"{rng.choice(['F', 'nn', 'torch', 'func'])}.{rng.choice(MEMBERS)} = {q}",
            ])
            continue
        if kind < 5:
            yield f"{p} {rng.choice(OPERATORS)} {q}"
        elif kind == 5:
            yield f"{rng.choice(['-', '+', 'not '])}{p}"
        elif kind == 6:
            yield f"{p}[{q}]" if rng.random() < 0.6 else f"{p}[{q}:{r}]"
        elif kind == 7:
            yield f"{p}.{rng.choice(attrs)}"
        elif kind == 8:
            yield f"{rng.choice(TENSORS)}[{q}] = {r}"
        elif kind == 9:
            yield f"{rng.choice(TENSORS)}.{rng.choice(attrs)} = {q}"
        elif kind == 10:
            yield f"{rng.choice(TENSORS)} {rng.choice(['+=', '-=', '*=', '/='])} {q}"
        elif kind == 11:
            flags = rng.sample(["retain_graph", "create_graph", f"gradient {q}"], rng.randrange(3))
            yield f"backward {p} {' '.join(flags)}"
        elif kind == 12:
            yield rng.choice([f"retain_grad {p}", f"zero_grad {p}", f"zero_grad {p}, {q}", f"graph {p}",
                              f"print {p}, {q}", f"seed {p}", f"del {rng.choice(TENSORS)}"])
        elif kind == 13:
            yield rng.choice([f"for i in {p}: pass", f"if {p}: pass", f"while {p}: break",
                              f"g = {p} requires_grad", f"(g, h) = {p}"])
        elif kind == 14:
            mode = rng.choice(["no_grad", "enable_grad", "inference_mode", "detect_anomaly"])
            yield f"with {mode}:\n    {p}.{rng.choice(sorted(METHODS))}({q})"
        elif kind == 15:
            yield rng.choice([f"grad({p}, {q})", f"grad(y, {q}, retain_graph={r})", f"grad({p}, [v, u])",
                              f"y.backward({q}, {r})", f"v.backward({q})", f"jacobian({p}, {q})",
                              f"hessian(f, {q})", f"gradcheck({p}, {q})"])
        elif rng.random() < 0.5:  # modules, optimizers and transformed functions, with odd arguments
            obj = rng.choice(list(OBJECTS))
            kind_of = OBJECTS[obj]
            if kind_of == "module" and rng.random() < 0.5:
                yield rng.choice([f"{obj}({p})", f"{obj}({p}, {q})", f"{obj}[{p}]", f"{obj}.{rng.choice(attrs)}",
                                  f"{obj}.weight = {p}", f"{obj}[{q}] = {p}"])
            elif kind_of == "function":
                transform = rng.choice(TRANSFORMS)
                yield rng.choice([f"gf({p})", f"func.{transform}({p}, {q})", f"func.{transform}(f)({p})",
                                  f"gf({p}, {q})"])
            else:
                methods = MODULE_METHODS if kind_of == "module" else OPTIMIZER_METHODS
                yield f"{obj}.{rng.choice(methods)}({rng.choice(['', p, f'{p}, {q}', f'foo={q}'])})"
        elif rng.random() < 0.15:  # a plot samples its expression many times: a few of them
            order = rng.choice(["", " order 1", " order 5", f" order {r}"])
            yield f"plot {rng.choice([p, 'sin(t)', f't * {p}', f'{p}(t)'])} for t in [{q}, {r}]{order}"
        else:
            yield f"{p}({q})"


def _language_spelling(message: str, at: int) -> bool:
    """Whether the word found at `at` is a `torch.` spelling of the language's own (LANGUAGE.md section 5:
    `torch.sin`, `torch.nn.Linear`, `torch.no_grad`, and whatever the user wrote after `torch.`), which messages
    name as written; in quotes (`'torch.bool'`) it is a Python value's repr, not the language's."""
    return message.startswith("torch.", at) and message[at - 1:at] != "'"


# -- running ------------------------------------------------------------------------------------------


def messages(text: str, source: str) -> list[str]:
    """The diagnostics' texts (the echoed source line and the caret are the user's, not ours)."""
    shown = {line.strip() for line in source.splitlines()}
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "^" or stripped in shown or (stripped.startswith("...") and stripped.endswith("...")):
            continue
        out.append(line.split(": error: ", 1)[-1].split(": warning: ", 1)[-1])
    return out


def normalize(message: str) -> str:
    """A message with its numbers and quoted names blanked: one entry per kind of bad message."""
    return re.sub(r"'[^']*'|\d+", "#", message)


class Findings:
    def __init__(self) -> None:
        self.bad: dict[str, tuple[str, str]] = {}  # normalized -> (message, source)
        self.escaped: dict[str, str] = {}
        self.state: dict[str, str] = {}
        self.described: dict[str, tuple[str, str]] = {}

    def report(self) -> str:
        parts = [f"{len(self.bad)} kinds of message in Python's words:"]
        parts += [f"  {msg!r}\n      from: {src!r}" for msg, src in list(self.bad.values())[:60]]
        parts += [f"escaped: {k}\n      from: {src!r}" for k, src in list(self.escaped.items())[:20]]
        parts += [f"state: {k}\n      from: {src!r}" for k, src in list(self.state.items())[:20]]
        return "\n".join(parts)

    def __bool__(self) -> bool:
        return bool(self.bad or self.escaped or self.state)


def fresh_session() -> tuple[Session, io.StringIO]:
    err = io.StringIO()
    s = Session(out=io.StringIO(), err=err, max_elements=10**5)
    assert s.run(SETUP, "setup.gc"), err.getvalue()
    return s, err


def run_all(sources: list[str], findings: Findings, differential: bool = True) -> None:
    s, err = fresh_session()
    for i, source in enumerate(sources):
        if i and i % BATCH == 0:
            s, err = fresh_session()
        before = snapshot(s) if differential else None
        start = err.tell()
        try:
            ok = s.run(source, "fuzz.gc")
        except Exception as exc:  # noqa: BLE001 - anything escaping is the finding
            findings.escaped.setdefault(f"{type(exc).__name__}: {exc}", source)
            s, err = fresh_session()
            continue
        err.seek(start)
        for message in messages(err.read(), source):
            if python_words(message):
                findings.bad.setdefault(normalize(message), (message, source))
        for message in fallback.seen:  # Python's words that the last line of defence had to hide
            findings.bad.setdefault(normalize(message), (f"(hidden) {message}", source))
        fallback.seen.clear()
        for message in fallback.described:  # hidden too, behind a description of what failed: noted only
            findings.described.setdefault(normalize(message), (message, source))
        fallback.described.clear()
        changed = modes_changed()
        if changed:
            findings.state.setdefault(changed, source)
        if not ok and differential:
            after = snapshot(s)
            if after != before:
                diff = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
                findings.state.setdefault(f"a failed statement changed {diff}", source)
                s, err = fresh_session()


def test_every_call_speaks_the_language() -> None:
    rng = random.Random(SEED)
    sources = list(calls(rng)) + list(others(rng, 8000))
    assert len(sources) > 25000
    findings = Findings()
    start = time.perf_counter()
    run_all(sources, findings)
    elapsed = time.perf_counter() - start
    assert not findings, findings.report()
    assert elapsed < 60, elapsed


# -- the words themselves -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "'NoneType' object has no attribute '_data'",
        "'list' object has no attribute 'shape'",
        "_method.<locals>.method() missing 1 required positional argument: 'other'",
        "<lambda>() got an unexpected keyword argument 'dtype'",
        "_py_len() got an unexpected keyword argument 'dim'",
        "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'",
        "float() argument must be a string or a real number, not 'MulBackward0'",
        "operands could not be broadcast together with shapes (3,) (2,) ",
        "Cannot interpret '3' as a data type: np.dtype",
        "x.__class__ is a gradcalc.autograd.tensor.Tensor",
        "stack: element 1 is a str, not a tensor",
        "expected a tensor or a number, got NoneType",
        "self must be a tensor",
        "max(): dim must be one int here, not float",
        "Could not convert tensor(1.) to a NumPy dtype",
        "duplicate value in 'axis'",
        "attempt to get argmin of an empty sequence",
        "device 'torch.bool': gradcalc computes on the CPU only",
        "expected a tensor or a number, got DType",
    ],
)
def test_python_words_are_recognized(message: str) -> None:
    assert python_words(message)


@pytest.mark.parametrize(
    "message",
    [
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0",
        "norm: argument 'x' must be a tensor, not none. norm(x, p='fro', dim=none, keepdim=false, dtype=none)",
        "sum does not take an argument 'foo'. sum(x, dim=none, keepdim=false, dtype=none)",
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.DoubleTensor [3]], which is output 0 of MulBackward0, is at version 1; expected version 0",
        "the values _saved_self of MulBackward0 were freed",
        "use x.item() or float(x)",
        "name '_' is not defined",
        "can't raise to a power a string and a number (operator '**')",
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",
    ],
)
def test_the_language_words_pass(message: str) -> None:
    assert python_words(message) is None, python_words(message)


def test_state_checks_catch_a_change() -> None:
    """The differential check itself: a snapshot sees a .grad, a version and a freed saved value change."""
    s, _ = fresh_session()
    before = snapshot(s)
    assert s.run("backward y retain_graph", "t.gc")
    assert snapshot(s) != before
    before = snapshot(s)
    assert s.run("k += 1", "t.gc")
    assert snapshot(s) != before
    before = snapshot(s)
    assert s.run("backward y", "t.gc")
    assert snapshot(s) != before

