"""ops/lazy.py: the families that load at first use. Their index is the specs' (regenerated, never hand-edited),
start-up loads none of them, and every name of each works from a cold start as if it had been loaded."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import gradcalc
from gradcalc.autograd import spec
from gradcalc.autograd.ops import MODULES, lazy


def test_the_index_is_the_specs() -> None:
    lazy.load_all()
    assert lazy.INDEX == lazy.index_of(lambda: spec.OPS.values()), (
        "ops/lazy.py's INDEX is out of date: run  python -c \"from gradcalc.autograd.ops.lazy import main; main()\"")


def test_no_deferred_name_is_also_a_start_up_name() -> None:
    """A deferred family installs its names when it loads, after start-up's: a name that a module loaded at
    start-up also installs would change meaning when the family loads."""
    lazy.load_all()
    at_start = set()
    for module in MODULES:
        for table in ("FUNCTIONS", "METHODS", "PROPERTIES"):
            at_start.update(getattr(module, table, {}))
    for op in spec.OPS.values():
        if op.raw.__module__.rpartition(".")[2] not in lazy.DEFERRED:
            at_start.update(op.names)
            at_start.update((f"{op.name}_",) if op.inplace else ())
    for module, (functions, methods) in lazy.INDEX.items():
        assert not at_start & (set(functions) | set(methods)), module


COLD = """
import inspect, json, sys
import gradcalc
from gradcalc.autograd.ops import FUNCTIONS, lazy
deferred = [f"gradcalc.autograd.ops.{m}" for m in lazy.DEFERRED]
report = {"loaded_at_start": [m for m in deferred if m in sys.modules]}
listed = set(dir(gradcalc))
report["unlisted"] = [n for fs, _ in lazy.INDEX.values() for n in fs if n not in listed]
# a signature, before anything of the family has loaded: the real function's
report["signature"] = str(inspect.signature(FUNCTIONS["cumsum"]))
report["doc"] = FUNCTIONS["roll"].__doc__
bad = []
for module, (functions, methods) in lazy.INDEX.items():
    for name in functions:
        fn = getattr(gradcalc, name)
        if type(fn) is lazy.Deferred or fn is not FUNCTIONS[name]:
            bad.append(f"gradcalc.{name}")
    for name in methods:
        fn = getattr(gradcalc.Tensor, name)
        if type(fn) is lazy.Deferred or not callable(fn):
            bad.append(f"Tensor.{name}")
report["bad"] = bad
x = gradcalc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
report["values"] = [x.cumsum(1).tolist(), gradcalc.flip(x, [0]).tolist(), x.tril().tolist()]
print(json.dumps(report))
"""


def test_a_cold_start_loads_no_family_and_every_name_works() -> None:
    out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["loaded_at_start"] == []
    assert report["unlisted"] == []
    assert report["signature"].startswith("(input")
    assert report["doc"] and report["doc"] == gradcalc.roll.__doc__
    assert report["bad"] == []
    assert report["values"] == [[[1.0, 3.0], [3.0, 7.0]], [[3.0, 4.0], [1.0, 2.0]], [[1.0, 0.0], [3.0, 4.0]]]


def test_the_language_cold_start_loads_no_family() -> None:
    """`gradcalc -e` runs a statement without loading a family it does not call; one that calls one loads it."""
    code = ("import sys, json\nfrom gradcalc.cli import main\n"
            "try:\n    main(['-e', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m.rpartition('.')[2] for m in sys.modules"
            " if m.startswith('gradcalc.autograd.ops.') and m.rpartition('.')[2] in " + repr(lazy.DEFERRED) + ")))")
    plain = subprocess.run([sys.executable, "-c", code, "1 + 1"], capture_output=True, text=True, check=True)
    assert plain.stdout.splitlines() == ["tensor(2.)", "[]"]
    calls = subprocess.run([sys.executable, "-c", code, "cumsum(tensor([1., 2.]), 0)"], capture_output=True,
                           text=True, check=True)
    printed, loaded = calls.stdout.splitlines()
    assert printed == "tensor([1., 3.])"
    assert "cumulative" in json.loads(loaded) and "conv" not in json.loads(loaded)


def test_a_deferred_name_is_listed_before_it_loads() -> None:
    assert "conv2d" in gradcalc.__all__ and "cumsum" in dir(gradcalc)


TABLES = """
import copy, json, sys
import gradcalc
FAMILIES = [f"gradcalc.autograd.ops.{m}" for m in ("linalg", "nn", "predicates", "reorder")]
loaded = lambda: [m.rpartition(".")[2] for m in FAMILIES if m in sys.modules]
report = {"at_start": loaded()}
x = gradcalc.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
report["matmul"] = (x @ x).tolist()  # an operator (Tensor.__matmul__, in linalg's METHODS table) from a cold start
report["rmatmul"] = x.__rmatmul__(gradcalc.eye(2)).tolist()
report["copy"] = copy.deepcopy(x).requires_grad  # Tensor.__deepcopy__, nn's table
report["isinf"] = gradcalc.isinf(gradcalc.tensor([1.0, float("inf")])).tolist()  # predicates' FUNCTIONS
y = gradcalc.zeros(3)
report["index_add_"] = y.index_add_(0, gradcalc.tensor([0, 2]), gradcalc.tensor([1.0, 2.0])).tolist()  # reorder
report["loaded"] = loaded()
print(json.dumps(report))
"""


def test_a_familys_tables_load_it_at_first_use() -> None:
    """Names a deferred family installs outside its specs (an operator, a method, a function of its tables) work
    from a cold start, loading it."""
    out = subprocess.run([sys.executable, "-c", TABLES], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["at_start"] == []
    assert report["matmul"] == [[7.0, 10.0], [15.0, 22.0]]
    assert report["rmatmul"] == [[1.0, 2.0], [3.0, 4.0]]
    assert report["copy"] is True
    assert report["isinf"] == [False, True]
    assert report["index_add_"] == [1.0, 0.0, 2.0]
    assert report["loaded"] == ["linalg", "nn", "predicates", "reorder"]


FORWARD = """
import json, sys
import gradcalc
from gradcalc.autograd import spec
from gradcalc.autograd.ops import lazy
report = {"at_start": "gradcalc.autograd.forward_ad" in sys.modules}
fw = gradcalc.autograd.forward_ad  # PyTorch's submodule, loaded by its first use
with fw.dual_level():
    f64 = gradcalc.float64
    x = fw.make_dual(gradcalc.tensor([0.5, 2.0], dtype=f64), gradcalc.tensor([1.0, 1.0], dtype=f64))
    report["tangent"] = fw.unpack_dual((x * x).exp()).tangent.tolist()
lazy.load_all()  # families loaded after forward_ad: their specs get its double_vjp too
report["markers"] = [c.__name__ for c, s in spec.NODES.items() if spec.DOUBLE_VJP in (s.jvp, c.jvp_rule)]
report["double_vjp"] = sorted(cls.__name__ for cls, s in spec.NODES.items() if s.jvp is fw.double_vjp)
print(json.dumps(report))
"""


def test_forward_ad_loads_at_first_use() -> None:
    """forward_ad is not loaded at start-up; its first use loads it, and every spec that names its double_vjp
    (spec.DOUBLE_VJP), before or after, then has the rule itself."""
    out = subprocess.run([sys.executable, "-c", FORWARD], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["at_start"] is False
    # d/dx exp(x^2) = 2x exp(x^2), times the tangent 1
    assert report["tangent"] == pytest.approx([2 * 0.5 * math.exp(0.25), 2 * 2.0 * math.exp(4.0)], rel=1e-12)
    assert report["markers"] == []
    assert "ProdOthersBackward" in report["double_vjp"] and "NativeLayerNormBackwardBackward0" in report["double_vjp"]


NAMES = """
import json, sys
import gradcalc
modules = ("gradcalc.autograd.printing", "gradcalc.accelerators", "gradcalc.autograd.ops.random",
           "gradcalc.autograd.ops.reductions")
report = {"at_start": [m for m in modules if m in sys.modules]}
report["listed"] = [n for n in ("cuda", "printoptions", "default_generator", "return_types", "accelerators")
                    if n in dir(gradcalc)]
report["cuda"] = gradcalc.cuda.is_available()
with gradcalc.printoptions(precision=2):
    report["printed"] = repr(gradcalc.tensor([1.2345]))
gradcalc.manual_seed(3)
first = gradcalc.rand(2).tolist()
gradcalc.default_generator.manual_seed(3)
report["same_draws"] = gradcalc.rand(2).tolist() == first
report["generator"] = isinstance(gradcalc.Generator(), gradcalc.Generator)
report["pair"] = type(gradcalc.tensor([1.0, 3.0]).max(0)) is gradcalc.return_types.max
print(json.dumps(report))
"""


def test_names_whose_modules_load_at_first_use() -> None:
    """printoptions, cuda/backends/accelerator, the random family's objects and return_types are listed from a
    cold start and load their modules when first used."""
    from gradcalc.autograd.ops import random

    assert gradcalc._RANDOM == tuple(random.PYTHON_ONLY)  # the names gradcalc lists without loading the family
    out = subprocess.run([sys.executable, "-c", NAMES], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["at_start"] == []
    assert report["listed"] == ["cuda", "printoptions", "default_generator", "return_types", "accelerators"]
    assert report["cuda"] is False
    assert report["printed"] == "tensor([1.23])"
    assert report["same_draws"] is True and report["generator"] is True and report["pair"] is True


ENGINE = """
import inspect, json, sys
import gradcalc
modules = ["gradcalc.autograd." + m for m in ("differentiate", "engine", "plan", "listen", "heap", "provenance")]
report = {"at_start": [m for m in modules if m in sys.modules]}
report["listed"] = [n for n in ("backward", "grad") if n in dir(gradcalc.autograd)]
x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
report["grad"] = x.grad.tolist()
report["autograd.grad"] = [g.tolist() for g in gradcalc.autograd.grad((x ** 3).sum(), x)]
y = gradcalc.tensor([3.0], requires_grad=True)
gradcalc.autograd.backward([(y * 2.0).sum()])
report["autograd.backward"] = y.grad.tolist()
report["method"] = gradcalc.Tensor.backward.__name__
print(json.dumps(report))
"""


def test_the_engine_loads_at_the_first_backward() -> None:
    """differentiate, engine and plan load at the first backward (Tensor.backward, autograd.grad/backward), not at
    start-up; from then on Tensor.backward is the engine's function itself."""
    out = subprocess.run([sys.executable, "-c", ENGINE], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["at_start"] == []
    assert report["listed"] == ["backward", "grad"]
    assert report["grad"] == [2.0, 4.0]
    assert report["autograd.grad"] == [[3.0, 12.0]]
    assert report["autograd.backward"] == [2.0]
    assert report["method"] == "tensor_backward"


STARTED = """
import json
import gradcalc
from gradcalc.autograd.ops import FUNCTIONS, lazy
T = gradcalc.Tensor
report = {"deferred": [type(FUNCTIONS["zeros"]) is lazy.Deferred, type(vars(T)["detach"]) is lazy.Deferred,
                       type(vars(T)["__add__"]) is lazy.Deferred]}
x = gradcalc.zeros(2, device="cpu") + 1.5  # the device module's zeros (it takes device=), not creation's
from gradcalc.autograd import spec
from gradcalc.autograd.ops import device
report["zeros"] = [x.tolist(), spec.raw_of(FUNCTIONS["zeros"]) is device.FUNCTIONS["zeros"],
                   FUNCTIONS["zeros"] is gradcalc.zeros]
report["detach"] = [x.detach().tolist(), type(vars(T)["detach"]) is lazy.Deferred]
lazy.load_all()
report["left"] = [n for n, f in {**FUNCTIONS, **vars(T)}.items() if type(f) is lazy.Deferred and n != "backward"]
print(json.dumps(report))
"""


def test_start_up_modules_tables_install_each_name_at_first_use() -> None:
    """The tables of the modules loaded at start-up put a Deferred under each name but the operators; its first
    use installs it (a later module's entry over an earlier's, as ever), and load_all installs them all."""
    out = subprocess.run([sys.executable, "-c", STARTED], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["deferred"] == [True, True, False]
    assert report["zeros"] == [[1.5, 1.5], True, True]
    assert report["detach"] == [[1.5, 1.5], False]
    assert report["left"] == []


INPLACE = """
import json, sys
import gradcalc
report = {"at_start": "gradcalc.autograd.ops.inplace" in sys.modules}
x = gradcalc.tensor([0.0, 1.0], dtype=gradcalc.float64)
x.exp_()  # an operation's in-place form (ops/__init__.py makes it from inplace.py when that loads)
x += 1.0  # Tensor.__iadd__, inplace.py's table
report["values"] = x.tolist()
report["version"] = x._version
print(json.dumps(report))
"""


def test_in_place_forms_load_inplace_at_first_use() -> None:
    out = subprocess.run([sys.executable, "-c", INPLACE], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["at_start"] is False
    assert report["values"] == [2.0, math.e + 1.0]
    assert report["version"] == 2
