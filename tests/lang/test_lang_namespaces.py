"""PyTorch's spellings work as written (LANGUAGE.md section 5): the namespaces `torch.` `nn.` `F.` `optim.`
`autograd.` `func.` split as PyTorch splits them, the imports a PyTorch program starts with, `with
torch.no_grad():` and its siblings, `torch.manual_seed(n)`; their errors, completion and `:help`.

Expected values come from PyTorch (under `torch.set_default_dtype(torch.float64)`): the same text is run by
gradcalc and, where it is Python too, by Python with the real torch.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import math

import pytest
from gclang_testing import out, run
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from gradcalc.lang import Session
from gradcalc.lang.values.builtins import FUNCTIONS, NN_BUILTINS
from gradcalc.lang.values.namespace import NAMESPACES, PREDEFINED_NAMESPACES, Namespace
from gradcalc.lang.values.spaces import SPACES
from gradcalc.repl.completer import GradcalcCompleter

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
for _module in SPACES:
    importlib.import_module(_module)


def shown(value: object) -> str:
    """A torch value as the language prints it."""
    return repr(value).replace("dtype=torch.", "dtype=") + "\n"


# -- membership: derived, and PyTorch's ---------------------------------------------------------------------
def test_the_predefined_namespaces() -> None:
    assert set(PREDEFINED_NAMESPACES) == {"torch", "nn", "F", "optim", "autograd", "func", "linalg"}
    assert {label: ns.path for label, ns in PREDEFINED_NAMESPACES.items()} == {
        "torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim",
        "autograd": "torch.autograd", "func": "torch.func", "linalg": "torch.linalg"}


@pytest.mark.parametrize("path", list(SPACES))
def test_every_member_is_pytorch_s_there(path: str) -> None:
    """What a namespace holds exists in PyTorch under the same module (torch.softplus is the one built-in that
    gradcalc's engine has at its top level and PyTorch only as F.softplus)."""
    module = importlib.import_module(path)
    extra = {"softplus"} if path == "torch" else set()
    assert {n for n in NAMESPACES[path].names() if not hasattr(module, n)} == extra


def test_membership_is_derived_from_the_language_s_tables() -> None:
    """Each built-in of NN_BUILTINS is in the namespace its key names, each engine function of the top level in
    torch, the func transforms in func, what nn.functional exports in F: a name added to a table appears."""
    for key, names in NN_BUILTINS.items():
        for name in names:
            assert NAMESPACES[f"torch.{key}" if key else "torch"].member(name) is FUNCTIONS[name], (key, name)
    for name, b in FUNCTIONS.items():
        if b.target == name:  # gradcalc.NAME: PyTorch's top level
            assert NAMESPACES["torch"].member(name) is b
    import gradcalc.func
    import gradcalc.nn.functional
    import gradcalc.nn.init
    from gradcalc.lang.values.func_namespace import MEMBERS

    assert set(MEMBERS) <= set(NAMESPACES["torch.func"].names()) <= set(gradcalc.func.__all__)
    assert set(NAMESPACES["torch.nn.functional"].names()) == set(gradcalc.nn.functional.__all__)
    assert set(NAMESPACES["torch.nn.init"].names()) == set(gradcalc.nn.init.__all__)
    assert {"grad", "backward", "functional", "forward_ad", "graph", "gradcheck"} <= set(
        NAMESPACES["torch.autograd"].names())
    assert set(NAMESPACES["torch.autograd.functional"].names()) == {"jacobian", "hessian", "vjp", "jvp", "hvp",
                                                                    "vhp"}


def test_a_namespace_is_one_value() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    assert run("a = nn.functional\nb = torch.nn.functional.relu\nc = F.relu\nF\ntorch", session=s).out == (
        "<module 'torch.nn.functional'>\n<module 'torch'>\n")
    assert s.workspace["a"] is PREDEFINED_NAMESPACES["F"] and s.workspace["b"] is s.workspace["c"]


# -- values, against PyTorch --------------------------------------------------------------------------------
SETUP = "t = tensor([-1.5, 0.25, 2.])\nw = tensor([[1., 2.], [3., 4.]])\n"
CASES = [
    ("torch.sin(t)", lambda t, w: torch.sin(t)),
    ("torch.tensor([1., 2.], requires_grad=True)", lambda t, w: torch.tensor([1.0, 2.0], requires_grad=True)),
    ("torch.zeros(2, dtype=torch.float32)", lambda t, w: torch.zeros(2, dtype=torch.float32)),
    ("torch.exp(torch.tensor(torch.pi))", lambda t, w: torch.exp(torch.tensor(torch.pi))),
    ("torch.matmul(w, w)", lambda t, w: torch.matmul(w, w)),
    ("F.relu(t)", lambda t, w: torch.nn.functional.relu(t)),
    ("torch.nn.functional.relu(t)", lambda t, w: torch.nn.functional.relu(t)),
    ("F.softmax(w, dim=1)", lambda t, w: torch.nn.functional.softmax(w, dim=1)),
    ("F.log_softmax(w, dim=0)", lambda t, w: torch.nn.functional.log_softmax(w, dim=0)),
    ("F.sigmoid(t)", lambda t, w: torch.nn.functional.sigmoid(t)),
    ("F.tanh(t)", lambda t, w: torch.nn.functional.tanh(t)),
    ("F.softplus(t)", lambda t, w: torch.nn.functional.softplus(t)),
    ("F.gelu(t)", lambda t, w: torch.nn.functional.gelu(t)),
    ("F.silu(t)", lambda t, w: torch.nn.functional.silu(t)),
    ("F.mse_loss(t, t * 2)", lambda t, w: torch.nn.functional.mse_loss(t, t * 2)),
    ("F.l1_loss(t, t * 2, reduction='sum')", lambda t, w: torch.nn.functional.l1_loss(t, t * 2, reduction="sum")),
    ("F.binary_cross_entropy_with_logits(t, torch.tensor([0., 1., 1.]))",
     lambda t, w: torch.nn.functional.binary_cross_entropy_with_logits(t, torch.tensor([0.0, 1.0, 1.0]))),
    ("F.cross_entropy(w, torch.tensor([1, 0], dtype=torch.long))",
     lambda t, w: torch.nn.functional.cross_entropy(w, torch.tensor([1, 0]))),
    ("F.linear(t[:2], w, t[:2])", lambda t, w: torch.nn.functional.linear(t[:2], w, t[:2])),
    ("nn.init.constant_(torch.zeros(2, 2), 0.5)", lambda t, w: torch.nn.init.constant_(torch.zeros(2, 2), 0.5)),
    ("nn.init.calculate_gain('tanh')", lambda t, w: torch.nn.init.calculate_gain("tanh")),
    ("torch.nn.init.ones_(torch.zeros(3))", lambda t, w: torch.nn.init.ones_(torch.zeros(3))),
    ("torch.pi", lambda t, w: torch.pi),
    ("torch.e * 2", lambda t, w: torch.e * 2),
    ("torch.float64", lambda t, w: "float64"),
    ("torch.vmap(torch.sin)(w)", lambda t, w: torch.vmap(torch.sin)(w)),
]


@pytest.mark.parametrize("source, expected", CASES, ids=[c[0] for c in CASES])
def test_namespace_members_give_pytorch_s_values(source: str, expected) -> None:
    t, w = torch.tensor([-1.5, 0.25, 2.0]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    value = expected(t, w)
    want = value + "\n" if isinstance(value, str) else f"{value!r}\n" if isinstance(value, float) else shown(value)
    assert out(SETUP + source) == want


def test_autograd_namespace_against_pytorch() -> None:
    text = out("x = tensor([0.5, 1.5], requires_grad=True)\ny = (x ** 3).sum()\nautograd.grad(y, x, "
               "create_graph=True)\ntorch.autograd.grad(y, x)\nz = (x * x).sum()\nautograd.backward(z)\nx.grad\n"
               "def f(v):\n    return (v ** 3).sum()\nautograd.functional.jacobian(torch.sin, x)\n"
               "torch.autograd.functional.hessian(f, x)\nfunc.grad(f)(x)\ntorch.func.grad(f)(x)\n"
               "autograd.gradcheck(torch.sin, (x,))")
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    first = torch.autograd.grad((x**3).sum(), x, create_graph=True)
    second = torch.autograd.grad((x**3).sum(), x)
    torch.autograd.backward((x * x).sum())

    def f(v):
        return (v**3).sum()

    expected = [repr(first), repr(second), repr(x.grad),
                repr(torch.autograd.functional.jacobian(torch.sin, x)),
                repr(torch.autograd.functional.hessian(f, x)), repr(torch.func.grad(f)(x)),
                repr(torch.func.grad(f)(x)), "True"]
    assert text == "\n".join(expected) + "\n"


def test_a_pytorch_training_script_runs_as_written(tmp_path) -> None:
    """A PyTorch script (its imports, nn., F., optim., with torch.no_grad(), loss.backward()) run by gradcalc
    and by Python with the real torch: the same loss (the weights are set by the script, not drawn)."""
    script = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch import nn, optim

x = torch.linspace(-1, 1, 20).reshape(20, 1)
y = torch.sin(3 * x)
net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    for p in net.parameters():
        q = p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
opt = optim.Adam(net.parameters(), lr=0.01)
for step in range(100):
    opt.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    opt.step()
print(loss.item())
"""
    ours = float(out(script))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "script.py", "exec"), {})  # noqa: S102 - the oracle runs the same text
    theirs = float(printed.getvalue())
    # float64 throughout; 100 Adam steps over 20 points: rounding of a few ulps per step, far below 1e-9
    assert math.isclose(ours, theirs, rel_tol=1e-9), (ours, theirs)


# -- imports ------------------------------------------------------------------------------------------------
IMPORTS = [
    ("import torch", "torch", "<module 'torch'>"),
    ("import torch.nn as nn", "nn", "<module 'torch.nn'>"),
    ("import torch.nn.functional as F", "F", "<module 'torch.nn.functional'>"),
    ("import torch.optim as optim", "optim", "<module 'torch.optim'>"),
    ("from torch import nn, optim", "optim", "<module 'torch.optim'>"),
    ("from torch.nn import functional as F", "F", "<module 'torch.nn.functional'>"),
    ("import torch.nn", "torch", "<module 'torch'>"),  # as Python: it binds torch
    ("import torch.autograd as AG", "AG", "<module 'torch.autograd'>"),
    ("from torch.optim import lr_scheduler", "lr_scheduler", "<module 'torch.optim.lr_scheduler'>"),
    ("from torch import (nn,\n   optim,)", "nn", "<module 'torch.nn'>"),
    ("import torch, torch.nn as tnn", "tnn", "<module 'torch.nn'>"),
    ("from torch.nn import Linear as L", "L", "<built-in function Linear>"),
    ("from torch.autograd import grad", "grad", "<built-in function grad>"),
    ("from torch.func import vmap, grad", "grad", "<built-in function func.grad>"),
]


@pytest.mark.parametrize("source, name, shows", IMPORTS, ids=[i[0] for i in IMPORTS])
def test_the_imports_bind_the_namespaces(source: str, name: str, shows: str) -> None:
    r = run(f"{source}\n{name}")
    assert (r.ok, r.err, r.out) == (True, "", shows + "\n")


def test_an_imported_name_works_as_in_pytorch() -> None:
    text = out("from torch.func import grad\nfrom torch.nn import functional as G\nimport torch.nn as tnn\n"
               "def f(v):\n    return (v ** 2).sum()\ngrad(f)(tensor([1., 2.]))\nG.relu(tensor([-1., 1.]))\n"
               "tnn.Linear(2, 3).weight.shape")
    assert text == shown(torch.func.grad(lambda v: (v**2).sum())(torch.tensor([1.0, 2.0]))) + shown(
        torch.relu(torch.tensor([-1.0, 1.0]))) + "(3, 2)\n"


def test_reset_undoes_an_import_that_shadowed_a_built_in() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    r = run("from torch.func import grad\ngrad\n:reset\ngrad", session=s)
    assert r.out == "<built-in function func.grad>\n<built-in function grad>\n"


@pytest.mark.parametrize("source, message", [
    ("import numpy as np", "can't import numpy: only torch and its modules can be imported (nothing else is part "
                           "of gradcalc); the built-ins need no import (drop the np. (numpy.) prefix"),
    ("import math", "can't import math: only torch and its modules can be imported"),
    ("from matplotlib import pyplot", "can't import matplotlib: only torch and its modules can be imported"),
    ("import torch.utils.data", "can't import torch.utils.data: gradcalc has torch, torch.nn, "),
    ("import torch.nn.Linear", "can't import torch.nn.Linear: it is not a module; write from torch.nn import Linear"),
    ("from torch.nn import Transformer", "gradcalc has no nn.Transformer"),
    ("from torch.nn import Module", "nn.Module is PyTorch's, but not part of gradcalc's language: gradcalc has no "
                                   "classes"),
    ("from torch import Adam", "torch has no 'Adam': it is optim.Adam"),
    ("from torch import nn, tensr", "torch has no 'tensr'; did you mean torch.tensor?"),
])
def test_what_can_not_be_imported(source: str, message: str) -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    r = run(f"nn = 1\n{source}", session=s)
    assert not r.ok and r.errors[0].startswith(message), r.errors
    assert out_of(s, "nn") == "tensor(1.)\n"  # a failed import binds nothing (`from torch import nn, Linaer`)


def test_an_import_can_not_bind_a_keyword() -> None:
    for source in ("import torch as backward", "from torch import sin as graph", "from torch import no_grad"):
        r = run(source)
        assert not r.ok and r.errors[0].endswith("is a keyword; it can't be used as a name"), r.errors


def out_of(s: Session, source: str) -> str:
    return run(source, session=s).out


# -- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source, message", [
    ("F.Adam", "F has no 'Adam': it is optim.Adam"),
    ("torch.Linear(1, 1)", "torch has no 'Linear': it is nn.Linear"),
    ("torch.grad", "torch has no 'grad': it is autograd.grad"),
    ("optim.relu", "optim has no 'relu': it is torch.relu"),
    ("nn.Transformer", "gradcalc has no nn.Transformer (:help nn lists what it has)"),
    ("nn.Linaer(1, 1)", "nn has no 'Linaer'; did you mean nn.Linear?"),
    ("torch.sn(1)", "torch has no 'sn'; did you mean torch.sin?"),
    ("func.functional_call", "func.functional_call is PyTorch's, but not part of gradcalc's language"),
    ("torch.no_grad()", "torch.no_grad is a block, not a value: write `with torch.no_grad():`"),
    ("autograd.Function", "autograd.Function is PyTorch's, but not part of gradcalc's language: a custom "
                          "autograd Function is a function block"),
    ("torch.float32(1)", "torch.float32 is the dtype float32, not a function: it can't be called"),
    ("nn.functional(1)", "nn.functional is the namespace F, not a function: it can't be called"),
    ("F.relu(none)", "relu: argument 'input' must be a tensor, not none. relu(input, inplace=false)"),
])
def test_namespace_errors_say_where_a_name_lives(source: str, message: str) -> None:
    r = run(source)
    assert not r.ok and r.errors[0].startswith(message), r.errors


def test_the_issue_s_dead_ends_are_gone() -> None:
    seed = out("torch.manual_seed(0)\na = randn(3)\nmanual_seed(0)\nb = randn(3)\nseed 0\nc = randn(3)\n"
               "((a == b).all() and (b == c).all()).item()")
    assert seed == "True\n"  # torch.manual_seed(n) and manual_seed(n) are seed n; they print nothing
    text = out("nn.Linear(1, 1).weight.shape\noptim.Adam\nF.relu\nautograd.grad")
    assert text == "(1, 1)\n<built-in function Adam>\n<built-in function relu>\n<built-in function grad>\n"
    for source in ("torch.manual_seed(-1)", "manual_seed(1.5)"):
        assert run(source).errors == run(f"seed {source.split('(')[1][:-1]}").errors


# -- rebinding -------------------------------------------------------------------------------------------------
def test_a_namespace_name_can_be_rebound_and_reset_restores_it() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    r = run("F = 3\nF * 2\nnn = 1\n:reset\nF\nnn.Linear(2, 2).weight.shape", session=s)
    assert (r.ok, r.out) == (True, "tensor(6.)\n<module 'torch.nn.functional'>\n(2, 2)\n")
    r = run("torch = 2\ntorch.sin(1)", session=s)
    assert not r.ok  # torch is a tensor now: sin is its method, which takes no argument


# -- with torch.no_grad(): ---------------------------------------------------------------------------------
def test_pytorch_s_with_blocks() -> None:
    text = out("x = 2 requires_grad\nwith torch.no_grad():\n    a = x * 2\nwith torch.no_grad():\n"
               "    with torch.enable_grad():\n        b = x * 2\nwith torch.inference_mode():\n    c = x * 2\n"
               "with torch.autograd.no_grad():\n    d = x * 2\n"
               "a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, x * 2")
    x = torch.tensor(2.0, requires_grad=True)
    with torch.no_grad():
        a = x * 2
    with torch.no_grad(), torch.enable_grad():
        b = x * 2
    with torch.inference_mode():
        c = x * 2
    with torch.autograd.no_grad():
        d = x * 2
    assert text == repr((a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, x * 2)) + "\n"


def test_detect_anomaly_through_autograd_names_the_forward_statement() -> None:
    r = run("x = -1 requires_grad\nwith torch.autograd.detect_anomaly():\n    y = sqrt(x)\n    backward y\n")
    assert not r.ok and "SqrtBackward0" in r.errors[0] and "nan" in r.errors[0].lower()


def test_an_alias_of_torch_has_the_blocks_too() -> None:
    assert out("import torch as t\nx = 1 requires_grad\nwith t.no_grad():\n    y = x * 2\ny.requires_grad") == (
        "False\n")


@pytest.mark.parametrize("source, message", [
    ("with torch.detect_anomaly():\n    1", "torch has no block detect_anomaly: write with "
                                             "autograd.detect_anomaly(): (or with detect_anomaly:)"),
    ("with nn.no_grad():\n    1", "nn has no block no_grad: write with torch.no_grad(): or with "
                                  "autograd.no_grad(): (or with no_grad:)"),
    ("x = 1\nwith x.no_grad():\n    1", "with x.no_grad(): x is a tensor of shape (), not a namespace"),
    ("with torch.no_gradx():\n    1", "unexpected '('"),
])
def test_a_block_in_the_wrong_namespace(source: str, message: str) -> None:
    r = run(source)
    assert not r.ok and r.errors[0].startswith(message), r.errors


# -- completion and :help -----------------------------------------------------------------------------------
def completions(text: str, session: Session | None = None) -> dict[str, str]:
    s = session or Session(out=io.StringIO(), err=io.StringIO())
    completer = GradcalcCompleter(s)
    found = completer.get_completions(Document(text, len(text)), CompleteEvent(completion_requested=True))
    return {c.text: c.display_meta_text for c in found}


def test_completion_after_a_namespace_s_dot() -> None:
    assert completions("nn.")["Linear"] == "built-in"
    assert completions("nn.")["functional"] == "namespace"
    assert set(completions("func.")) == set(NAMESPACES["torch.func"].names())
    assert set(completions("torch.nn.")) == set(NAMESPACES["torch.nn"].names())
    assert set(completions("F.re")) == {"relu", "relu6"}
    assert completions("torch.fl")["float32"] == "dtype"
    assert completions("torch.p")["pi"] == "constant"
    s = Session(out=io.StringIO(), err=io.StringIO())
    run("import torch.nn.functional as G", session=s)
    assert set(completions("G.si", s)) == {"sigmoid", "silu"}
    assert completions("x = F.Ad") == {}


def test_help_shows_the_short_name_s_page() -> None:
    assert out(":help nn.Linear") == out(":help Linear")
    assert out(":help torch.nn.Linear") == out(":help Linear")
    assert out(":help torch.sin") == out(":help sin")
    assert out(":help F.relu").startswith("relu(input, inplace=false): ")
    assert out(":help F.mse_loss") == out(":help mse_loss")
    assert out(":help func.grad").startswith("func.grad(func, argnums=0, has_aux=false): ")
    assert out(":help autograd.functional.jacobian") == out(":help jacobian")
    page = out(":help torch.nn")
    assert page.startswith("nn: PyTorch's torch.nn") and "Linear" in page and "nn.functional (F)" in page
    assert "relu" in out(":help F")


def test_namespaces_are_namespace_values() -> None:
    assert all(isinstance(ns, Namespace) for ns in NAMESPACES.values())
