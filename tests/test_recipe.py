"""docs/contributing.md's recipe, followed: a new operation is one registration, and every surface derives it.

In a fresh interpreter (the registry is process-wide), the language is loaded first, then two operations gradcalc
does not have are registered as the recipe says: `asinh`, an elementwise row (`unary(...)`), and `logaddexp2`, a
node class with its `@spec.node` and a function with its `@spec.op`. Then each surface must have them, checked
against PyTorch: `gradcalc.<name>`, `Tensor.<name>` and the in-place method, backward, PyTorch's saved names, the
forward rule, the batched Jacobian, the batching rule, the language's built-in and method, `:help`, completion, and
the tests' own tables (the spec tests, the forward-mode tests, the batched-Jacobian tests run on the new ones).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import io, sys
import numpy as np
import torch
torch.set_default_dtype(torch.float64)

from gradcalc.lang import Session  # the language first: what it has must grow with the registrations
import gradcalc
from gradcalc.autograd import batched, batching, spec
from gradcalc.autograd import saved as SV
from gradcalc.autograd.node import Node
from gradcalc.autograd.ops.binary import add_scalar, plus
from gradcalc.autograd.ops.core import needs, record, result
from gradcalc.autograd.ops.sums import sum_to
from gradcalc.autograd.ops.logarithms import rsqrt
from gradcalc.autograd.ops.unary import unary

# -- the recipe: an elementwise row is one registration ------------------------------------------------------
asinh = unary("asinh", forward=np.arcsinh, node="AsinhBackward0", saves="self",
              formula="grad * (self.pow(2) + 1).rsqrt()", factor=lambda x, y: rsqrt(add_scalar(x**2.0, 1.0)))


# -- the recipe: any other operation is its node class with its spec, and its function with its op spec ----------
def _logaddexp2_jvp(node, inputs, out, tangents):
    (a, b), (ta, tb) = inputs, tangents
    return plus(None if ta is None else ta / add_scalar(2.0 ** (b - a), 1.0),
                None if tb is None else tb / add_scalar(2.0 ** (a - b), 1.0))


@spec.node(formula={"self": "grad / (1 + pow(2, other - self))", "other": "grad / (1 + pow(2, self - other))"},
           saved={"other": SV.tensor(1), "self": SV.tensor(0)}, jvp=_logaddexp2_jvp,
           tangent="self_t / (1 + pow(2, other_p - self_p)) + other_t / (1 + pow(2, self_p - other_p))",
           batched=spec.BROADCASTS)
class Logaddexp2Backward0(Node):
    __slots__ = ("shapes",)
    raw_ok = True  # written with operators and the engine's functions: it runs on bare arrays too

    def apply(self, g):
        a, b = self.unpack_saved(type(g) is not gradcalc.Tensor)
        ga = sum_to(g / add_scalar(2.0 ** (b - a), 1.0), self.shapes[0]) if needs(self, 0) else None
        gb = sum_to(g / add_scalar(2.0 ** (a - b), 1.0), self.shapes[1]) if needs(self, 1) else None
        return (ga, gb)


@spec.op("logaddexp2", nodes=(Logaddexp2Backward0,), vmap=spec.rule("pointwise_binary", "logaddexp2"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.logaddexp2(a, b) + a.logaddexp2(b * 2.0)))
def logaddexp2(input, other):
    """log2(2**input + 2**other), computed without overflow."""
    node = record(Logaddexp2Backward0, input, other)
    if node is not None:
        node.shapes = (input._data.shape, other._data.shape)
        node.save(input, other)
    return result(np.logaddexp2(input._data, other._data), node)


def close(ours, theirs, what):
    a = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    b = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=what)


x0, y0 = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]]), np.array([0.5, -0.25, 1.5])

# gradcalc.<name>, Tensor.<name>, the in-place method
for lib in (gradcalc, torch):
    assert callable(lib.asinh) and callable(lib.Tensor.asinh) and callable(lib.Tensor.asinh_)
    assert callable(lib.logaddexp2) and callable(lib.Tensor.logaddexp2)
close(gradcalc.asinh(gradcalc.tensor(x0)), torch.asinh(torch.tensor(x0)), "asinh")
close(gradcalc.tensor(x0).asinh_(), torch.tensor(x0).asinh_(), "asinh_")
close(gradcalc.tensor(x0).logaddexp2(gradcalc.tensor(y0)), torch.tensor(x0).logaddexp2(torch.tensor(y0)), "logaddexp2")

# backward, and PyTorch's node names and saved values
got = {}
for lib in (gradcalc, torch):
    a, b = lib.tensor(x0, requires_grad=True), lib.tensor(y0, requires_grad=True)
    u, v = lib.asinh(a), lib.logaddexp2(a, b)
    assert u.grad_fn.name() == "AsinhBackward0" and v.grad_fn.name() == "Logaddexp2Backward0"
    got[lib] = (u.grad_fn._saved_self, v.grad_fn._saved_self, v.grad_fn._saved_other,
                *lib.autograd.grad((u * v).sum(), (a, b)))
for i, (o, t) in enumerate(zip(got[gradcalc], got[torch])):
    close(o, t, f"backward and saved values {i}")
node = gradcalc.logaddexp2(gradcalc.tensor(x0, requires_grad=True), gradcalc.tensor(y0)).grad_fn
assert set(spec.of(node).formula) == {"self", "other"}

# the forward rule
for f in (lambda L, a, b: L.asinh(a) * b, lambda L, a, b: L.logaddexp2(a, b)):
    ours = gradcalc.func.jvp(lambda a, b: f(gradcalc, a, b), (gradcalc.tensor(x0), gradcalc.tensor(y0)),
                             (gradcalc.tensor(x0 * 0.5), gradcalc.tensor(y0 + 1.0)))
    theirs = torch.func.jvp(lambda a, b: f(torch, a, b), (torch.tensor(x0), torch.tensor(y0)),
                            (torch.tensor(x0 * 0.5), torch.tensor(y0 + 1.0)))
    close(ours[1], theirs[1], "jvp")

# the batched Jacobian, in one pass
a, b = gradcalc.tensor(x0, requires_grad=True), gradcalc.tensor(y0, requires_grad=True)
rows = batched.rows(gradcalc.logaddexp2(gradcalc.asinh(a), b), [a, b])
assert rows is not None, "the batched backward must run"
theirs = torch.func.jacrev(lambda a, b: torch.logaddexp2(torch.asinh(a), b), argnums=(0, 1))(
    torch.tensor(x0), torch.tensor(y0))
for o, t in zip(rows, theirs):
    close(o, t, "jacrev")

# the batching rules
ours = batching.vmap(lambda p, q: batching.bind("logaddexp2", batching.bind("asinh", p), q), (1, None))(
    gradcalc.tensor(x0), gradcalc.tensor(y0[:2]))
theirs = torch.vmap(lambda p, q: torch.logaddexp2(torch.asinh(p), q), (1, None))(torch.tensor(x0), torch.tensor(y0[:2]))
close(ours, theirs, "vmap")

# the language: built-ins, methods, :help, completion
out = io.StringIO()
s = Session(out=out)
assert s.run("x = tensor([0.5, 1.5], requires_grad=true)\n"
             "y = asinh(x) + x.asinh() + logaddexp2(x, x) + x.logaddexp2(2 * x)\n"
             "y.sum().backward()\nx.grad\n:help asinh\n:help logaddexp2\nz = x.detach()\nz.asinh_()\n"), out.getvalue()
xt = torch.tensor([0.5, 1.5], requires_grad=True)
(2 * torch.asinh(xt) + torch.logaddexp2(xt, xt) + torch.logaddexp2(xt, 2 * xt)).sum().backward()
lines = out.getvalue().splitlines()
expected = repr(xt.grad).replace("tensor(", "").rstrip(")")
assert lines[0].replace("tensor(", "").rstrip(")") == expected, (lines[0], expected)
assert lines[1].startswith("asinh(x)") and "asinh" in lines[1], lines[1]
assert lines[2].startswith("logaddexp2(input, other): log2(2**input + 2**other)"), lines[2]
assert lines[3].startswith("tensor([0.4812, 1.1948]"), lines[3]
assert {"asinh", "logaddexp2"} <= set(s.completions())
assert {"asinh", "asinh_", "logaddexp2"} <= set(s.attribute_completions("x"))

# the tests' tables: the new operations are cases of the spec tests, forward-mode tests, batched-Jacobian tests
sys.path.insert(0, "tests/engine")
import test_specs, test_forward_ad, test_batched_jacobian
assert {"asinh", "logaddexp2"} <= set(test_specs.SAMPLED)
assert {"spec asinh", "spec logaddexp2"} <= set(test_forward_ad.CASES)
for name in ("asinh", "logaddexp2"):
    test_specs.test_backward_matches_torch(name)
    test_specs.test_forward_rule_matches_torch_func_jvp(name)
    test_specs.test_saved_names_and_values_are_pytorchs(name)
    test_forward_ad.test_jvp_matches_torch(f"spec {name}")
    test_batched_jacobian.test_every_specs_batched_backward_matches_torch_jacrev(name)
test_specs.test_every_node_class_has_its_own_spec()
test_specs.test_every_spec_has_a_formula_for_each_input()
print("RECIPE OK")
'''


def test_a_new_operation_is_one_registration_and_every_surface_has_it() -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "RECIPE OK" in done.stdout, done.stdout + done.stderr
