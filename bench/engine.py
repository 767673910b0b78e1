"""Engine benchmarks, printed side by side with their references in one run.

    python bench/engine.py [--quick] [--only scalar,big,mlp,deep,second,pinn]
    python bench/engine.py --only jac,fwd,persample     (the function transforms and forward mode)
    python bench/engine.py --only vmap                  (vmap: per-sample grads, vmap(jacrev), ensembling)
    python bench/engine.py --only cnn                   (a training step of a small CNN, float32)
    python bench/engine.py --before HEAD~3              (a column of gradcalc at an earlier commit)

Each benchmark is written once against the PyTorch API and run on gradcalc (`import gradcalc as torch`)
and on PyTorch CPU, beside a hand-written NumPy forward+backward: the limit for an engine on NumPy.
PyTorch runs in a child process of this run, so that neither library's objects weigh on the other's
garbage collector. Machines here are noisy: each figure is the best of several repeats, and only the
ratios of one run mean anything.
"""

from __future__ import annotations

import os

# One BLAS thread for every library, set before NumPy or PyTorch load their BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def traced_peak(fn: Callable[[], Any]) -> int:
    """Peak bytes NumPy and Python allocate during `fn`, above what was live before it."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


# -- the benchmarks, on an engine `T` with PyTorch's API -------------------------------------------------
def scalar_chain(T: ModuleType, n: int, repeat: int) -> dict[str, float]:
    """20,000 × `y = (y * y + 1.0) ** -0.5 + x` on 0-d tensors (4 ops each), then backward: µs per op."""

    def once() -> tuple[float, float]:
        x = T.tensor(0.5, requires_grad=True)
        y = x
        t0 = time.perf_counter()
        for _ in range(n):
            y = (y * y + 1.0) ** -0.5 + x
        t1 = time.perf_counter()
        y.backward()
        return t1 - t0, time.perf_counter() - t1

    runs = [once() for _ in range(repeat)]
    us = 1e6 / (4 * n)
    return {"forward": min(r[0] for r in runs) * us, "backward": min(r[1] for r in runs) * us,
            "total": min(r[0] + r[1] for r in runs) * us}


def big_elementwise(T: ModuleType, data: np.ndarray, repeat: int) -> dict[str, float]:
    """(sin(x) * x + exp(-x)).sum() over 10^7 values, forward and backward: seconds."""

    def once() -> Any:
        x = T.tensor(data, requires_grad=True)
        (T.sin(x) * x + T.exp(-x)).sum().backward()
        return x.grad

    return {"time": best(once, repeat)}


def mlp(T: ModuleType, dtype: str, steps: int, repeat: int) -> dict[str, float]:
    """MLP 256×784→512→512→10, tanh, mean squared error, SGD: ms per step."""
    w, b, xb, yb = mlp_data(dtype)

    def once() -> None:
        W = [T.tensor(a, requires_grad=True) for a in w]
        B = [T.tensor(a, requires_grad=True) for a in b]
        x, y = T.tensor(xb), T.tensor(yb)
        for _ in range(steps):
            h = x
            for i in range(3):
                h = h @ W[i] + B[i]
                if i < 2:
                    h = T.tanh(h)
            loss = ((h - y) ** 2).mean()
            loss.backward()
            with T.no_grad():
                for p in W + B:
                    p -= 0.01 * p.grad
                    p.grad = None

    return {"step": best(once, repeat) * 1e3 / steps}


def deep_chain(T: ModuleType, n: int, repeat: int) -> dict[str, float]:
    """`y = y * 0.999 + 0.001 * x` n times on a 100-vector, then backward: seconds."""
    x0 = np.linspace(0, 1, 100)

    def once() -> None:
        x = T.tensor(x0, requires_grad=True)
        y = T.zeros(100, dtype=T.float64)
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        y.sum().backward()

    return {"time": best(once, repeat)}


def second_derivative(T: ModuleType, reps: int, repeat: int) -> dict[str, float]:
    """d²/dx² x³ by `autograd.grad(..., create_graph=True)` twice: µs per repetition."""

    def once() -> None:
        x = T.tensor(1.5, requires_grad=True)
        for _ in range(reps):
            (g,) = T.autograd.grad(x**3, x, create_graph=True)
            T.autograd.grad(g, x, create_graph=True)

    return {"rep": best(once, repeat) * 1e6 / reps}


def pinn(T: ModuleType, steps: int, repeat: int) -> dict[str, float]:
    """PINN step: net 1→32→32→1 tanh on 256 points, u and u'' by grad(create_graph=True), residual
    mean((u'' + u)²), backward, Adam step; float64: ms per step."""
    rng = np.random.default_rng(0)
    shapes = {"0.weight": (32, 1), "0.bias": (32,), "2.weight": (32, 32), "2.bias": (32,), "4.weight": (1, 32),
              "4.bias": (1,)}
    weights = {k: rng.uniform(-0.5, 0.5, s) for k, s in shapes.items()}
    points = np.linspace(0.0, 3.0, 256).reshape(-1, 1)

    def once() -> None:
        nn = T.nn
        net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
        net.load_state_dict({k: T.tensor(v) for k, v in weights.items()})
        opt = T.optim.Adam(net.parameters(), lr=1e-3)
        x = T.tensor(points, requires_grad=True)
        for _ in range(steps):
            opt.zero_grad()
            u = net(x)
            (du,) = T.autograd.grad(u, x, T.ones_like(u), create_graph=True)
            (d2u,) = T.autograd.grad(du, x, T.ones_like(du), create_graph=True)
            loss = ((d2u + u) ** 2).mean()
            loss.backward()
            opt.step()

    return {"step": best(once, repeat) * 1e3 / steps}


def mlp_data(dtype: str) -> tuple[list, list, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = [(784, 512), (512, 512), (512, 10)]
    w = [(rng.standard_normal(s) * 0.05).astype(dtype) for s in shapes]
    b = [np.zeros(s[1], dtype=dtype) for s in shapes]
    return w, b, rng.standard_normal((256, 784)).astype(dtype), rng.standard_normal((256, 10)).astype(dtype)


# -- the same by hand in NumPy: the limit --------------------------------------------------------------
def numpy_scalar_chain(n: int, repeat: int) -> dict[str, float]:
    def once() -> tuple[float, float]:
        x = y = np.array(0.5)
        tape = []
        t0 = time.perf_counter()
        for _ in range(n):
            b = y * y + 1.0
            tape.append((y, b))
            y = b**-0.5 + x
        t1 = time.perf_counter()
        gy, gx = 1.0, 0.0
        for yy, b in reversed(tape):
            gx = gx + gy
            gy = gy * (-0.5 * b**-1.5) * 2.0 * yy
        return t1 - t0, time.perf_counter() - t1

    runs = [once() for _ in range(repeat)]
    return {"total": min(r[0] + r[1] for r in runs) * 1e6 / (4 * n)}


def numpy_big_elementwise(x: np.ndarray) -> np.ndarray:
    s, e = np.sin(x), np.exp(-x)
    _ = (s * x + e).sum()
    return s + x * np.cos(x) - e


def numpy_mlp(dtype: str, steps: int, repeat: int) -> dict[str, float]:
    w, b, xb, yb = mlp_data(dtype)

    def once() -> None:
        W, B = [a.copy() for a in w], [a.copy() for a in b]
        for _ in range(steps):
            acts = [xb]
            h = xb
            for i in range(3):
                h = h @ W[i] + B[i]
                if i < 2:
                    h = np.tanh(h)
                acts.append(h)
            d = h - yb
            _ = (d * d).mean()
            g = d * (2.0 / d.size)
            for i in (2, 1, 0):
                if i < 2:
                    g = g * (1 - acts[i + 1] * acts[i + 1])
                gw, gb = acts[i].T @ g, g.sum(0)
                g = g @ W[i].T
                W[i] -= 0.01 * gw
                B[i] -= 0.01 * gb

    return {"step": best(once, repeat) * 1e3 / steps}


def numpy_deep_chain(n: int, repeat: int) -> dict[str, float]:
    x = np.linspace(0, 1, 100)

    def once() -> None:
        y = np.zeros(100)
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        g, gx = np.ones(100), np.zeros(100)
        for _ in range(n):
            gx = gx + 0.001 * g
            g = g * 0.999

    return {"time": best(once, repeat)}


# -- forward mode and the function transforms ----------------------------------------------------------------
def jacobians(T: ModuleType, repeat: int) -> dict[str, float]:
    """The Jacobian of f: R^4 -> R^400 (an elementwise chain on a broadcast), by jacfwd and by jacrev: ms."""
    c = T.tensor(np.linspace(0.5, 1.5, 400).reshape(100, 4))

    def f(x: Any) -> Any:
        z = x * c
        for _ in range(4):
            z = (z.sin() * z + z.exp() * 0.1).tanh()
        return z.reshape(400)

    x = T.tensor([0.1, 0.2, 0.3, 0.4])
    fwd, rev = T.func.jacfwd(f), T.func.jacrev(f)
    return {"jacfwd": best(lambda: fwd(x), repeat) * 1e3, "jacrev": best(lambda: rev(x), repeat) * 1e3}


def forward_chain(T: ModuleType, n: int, repeat: int) -> dict[str, float]:
    """The scalar chain of `scalar_chain` (4 ops a step) in forward mode, on a dual 0-d tensor: µs per op."""
    fw = T.autograd.forward_ad

    def once() -> None:
        with fw.dual_level():
            x = fw.make_dual(T.tensor(0.5), T.tensor(1.0))
            y = x
            for _ in range(n):
                y = (y * y + 1.0) ** -0.5 + x
            fw.unpack_dual(y).tangent.item()

    return {"op": best(once, repeat) * 1e6 / (4 * n)}


def per_sample_grads(T: ModuleType, repeat: int) -> dict[str, float]:
    """Per-sample gradients of a 2-layer MLP (10 -> 32 -> 4) over 64 samples by vmap(grad(loss)): ms."""
    rng = np.random.default_rng(0)
    params = {"w1": T.tensor(rng.standard_normal((32, 10)) * 0.3), "b1": T.tensor(np.zeros(32)),
              "w2": T.tensor(rng.standard_normal((4, 32)) * 0.3), "b2": T.tensor(np.zeros(4))}
    data, targets = T.tensor(rng.standard_normal((64, 10))), T.tensor(np.eye(4)[rng.integers(0, 4, 64)])

    def loss(p: dict, x: Any, t: Any) -> Any:
        h = T.relu(p["w1"] @ x + p["b1"])
        return -(T.log_softmax(p["w2"] @ h + p["b2"], 0) * t).sum()

    per_sample = T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))
    return {"time": best(lambda: per_sample(params, data, targets), repeat) * 1e3}


def _mlp_params(T: ModuleType, sizes: list[int], dt: Any, rng: np.random.Generator) -> dict[str, Any]:
    """An MLP's parameters as nn.Linear's (weight (out, in), bias (out)), by their functional_call names."""
    params = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        params[f"{2 * k}.weight"] = T.tensor(rng.standard_normal((n_out, n_in)) / np.sqrt(n_in), dtype=dt)
        params[f"{2 * k}.bias"] = T.tensor(rng.standard_normal(n_out) * 0.1, dtype=dt)
    return params


def _tanh_mlp(T: ModuleType, sizes: list[int], dtype: Any) -> Any:
    layers: list[Any] = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [T.nn.Linear(n_in, n_out, dtype=dtype), T.nn.Tanh()]
    return T.nn.Sequential(*layers[:-1])


def vmap_transforms(T: ModuleType, dtype: str, repeat: int) -> dict[str, float]:
    """issue 22's workloads, ms: per-sample gradients of a 16-64-64-10 tanh MLP with cross-entropy over 64
    samples (vmap(grad(loss), in_dims=(None, 0, 0)) over functional_call); vmap(jacrev(f)) of a 4-32-4 tanh
    MLP over 64 points; 10 MLPs 16-64-10 ensembled with stack_module_state + vmap over a batch of 64."""
    rng = np.random.default_rng(0)
    dt = getattr(T, dtype)
    model = _tanh_mlp(T, [16, 64, 64, 10], dt)
    params = _mlp_params(T, [16, 64, 64, 10], dt, rng)
    x = T.tensor(rng.standard_normal((64, 16)), dtype=dt)
    t = T.tensor(rng.integers(0, 10, 64))

    def loss(p: dict, xi: Any, ti: Any) -> Any:
        out = T.func.functional_call(model, p, (xi.unsqueeze(0),))
        return T.nn.functional.cross_entropy(out, ti.unsqueeze(0))

    per_sample = T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))

    small = _tanh_mlp(T, [4, 32, 4], dt)
    small_params = _mlp_params(T, [4, 32, 4], dt, rng)
    pts = T.tensor(rng.standard_normal((64, 4)), dtype=dt)
    jac = T.func.vmap(T.func.jacrev(lambda xi: T.func.functional_call(small, small_params, (xi,))))

    models = [_tanh_mlp(T, [16, 64, 10], dt) for _ in range(10)]
    stacked, buffers = T.func.stack_module_state(models)
    base = _tanh_mlp(T, [16, 64, 10], dt).to("meta")
    batch = T.tensor(rng.standard_normal((64, 16)), dtype=dt)

    def one(p: dict, b: dict, xb: Any) -> Any:
        return T.func.functional_call(base, (p, b), (xb,))

    ensemble = T.func.vmap(one, in_dims=(0, 0, None))
    return {"persample": best(lambda: per_sample(params, x, t), repeat) * 1e3,
            "jacrev": best(lambda: jac(pts), repeat) * 1e3,
            "ensemble": best(lambda: ensemble(stacked, buffers, batch), repeat) * 1e3}


# -- a convolutional network --------------------------------------------------------------------------------
def cnn_step(T: ModuleType, steps: int, repeat: int) -> dict[str, float]:
    """One training step (forward, backward, SGD) of the per-sample-gradients tutorial's CNN: conv 1→32 3×3,
    relu, conv 32→64 3×3, relu, max-pool 2, flatten, linear 9216→128, relu, linear 128→10, nll_loss of the
    logits (as the tutorial has it), a batch of 64 images 28×28, float32: ms per step."""
    nn, F, f32 = T.nn, T.nn.functional, T.float32

    class SimpleCNN(nn.Module):  # the tutorial's model, its layers in float32 whatever the default dtype
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1, dtype=f32)
            self.conv2 = nn.Conv2d(32, 64, 3, 1, dtype=f32)
            self.fc1 = nn.Linear(9216, 128, dtype=f32)
            self.fc2 = nn.Linear(128, 10, dtype=f32)

        def forward(self, x: Any) -> Any:
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = F.relu(self.fc1(T.flatten(x, 1)))
            return self.fc2(x)

    rng = np.random.default_rng(0)
    data = T.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    targets = T.tensor(rng.integers(0, 10, 64))
    model = SimpleCNN()
    opt = T.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad()
        F.nll_loss(model(data), targets).backward()
        opt.step()

    step()  # the first step allocates what the others reuse
    return {"step": best(lambda: [step() for _ in range(steps)], repeat) * 1e3 / steps}


# -- running ----------------------------------------------------------------------------------------------
def sizes(quick: bool) -> dict[str, Any]:
    return {
        "chain": 2_000 if quick else 20_000, "big": 10**5 if quick else 10**7, "steps": 3 if quick else 10,
        "deep": 10**4 if quick else 10**5, "deep_long": None if quick else 10**6, "reps": 200 if quick else 2_000,
        "repeat": 2 if quick else 5, "pinn_steps": 5 if quick else 50, "cnn_steps": 1 if quick else 3,
    }


def run_engine(T: ModuleType, only: set[str], sz: dict[str, Any]) -> dict[str, Any]:
    """Every selected benchmark on one engine."""
    r, out = sz["repeat"], {}
    if "scalar" in only:
        out["scalar"] = scalar_chain(T, sz["chain"], r)
    if "big" in only:
        data = np.random.default_rng(0).random(sz["big"])
        out["big"] = big_elementwise(T, data, min(r, 3))
    if "mlp" in only:
        out["mlp64"] = mlp(T, "float64", sz["steps"], min(r, 3))
        out["mlp32"] = mlp(T, "float32", sz["steps"], min(r, 3))
    if "deep" in only:
        out["deep"] = deep_chain(T, sz["deep"], min(r, 3))
        if sz["deep_long"]:
            out["deep_long"] = deep_chain(T, sz["deep_long"], 1)
    if "second" in only:
        out["second"] = second_derivative(T, sz["reps"], r)
    if "jac" in only:
        out["jac"] = jacobians(T, r)
    if "fwd" in only:
        out["fwd"] = forward_chain(T, sz["chain"], r)
    if "persample" in only:
        out["persample"] = per_sample_grads(T, r)
    if "pinn" in only:
        out["pinn"] = pinn(T, sz["pinn_steps"], min(r, 3))
    if "vmap" in only:
        out["vmap64"] = vmap_transforms(T, "float64", r)
        out["vmap32"] = vmap_transforms(T, "float32", r)
    if "cnn" in only and hasattr(T.nn, "Conv2d"):  # (a commit before convolutions has none to time)
        out["cnn"] = cnn_step(T, sz["cnn_steps"], min(r, 3))
    return out


def torch_figures(args: argparse.Namespace) -> dict[str, Any] | None:
    """The PyTorch column, measured in a child process (None when PyTorch is not installed)."""
    cmd = [sys.executable, __file__, "--engine", "torch", "--only", ",".join(sorted(args.only))]
    if args.quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--only", default="scalar,big,mlp,deep,second,pinn,cnn", help="comma-separated subset")
    parser.add_argument("--before", metavar="REF", help="also time gradcalc at this earlier commit")
    parser.add_argument("--engine", choices=("gradcalc", "torch"), default="gradcalc", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)  # whose gradcalc to time
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # figures only, as JSON
    args = parser.parse_args()
    args.only = set(args.only.split(","))
    sz = sizes(args.quick)

    if args.engine == "torch":  # the child process: figures as JSON
        try:
            import torch
        except ImportError:
            sys.exit(3)
        torch.set_num_threads(1)
        torch.set_default_dtype(torch.float64)
        print(json.dumps(run_engine(torch, args.only, sz)))
        return

    sys.path.insert(0, args.root)
    import gradcalc

    if hasattr(gradcalc, "set_default_dtype"):  # float64, as PyTorch's child (a commit before it had no other)
        gradcalc.set_default_dtype(gradcalc.float64)
    ours = run_engine(gradcalc, args.only, sz)
    if args.json:  # the child of --before
        print(json.dumps(ours))
        return
    theirs = torch_figures(args) or {}
    before = None
    if args.before:
        from before import figures

        child = ["--only", ",".join(sorted(args.only))] + (["--quick"] if args.quick else [])
        before = figures(Path(__file__), args.before, child)
    rows = table(ours, theirs, args.only, sz, before)
    print(f"gradcalc {gradcalc.__version__}, numpy {np.__version__}, "
          f"torch {'measured in a child process' if theirs else 'absent'}; best of {sz['repeat']}")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def table(ours: dict, theirs: dict, only: set[str], sz: dict[str, Any],
          before: dict | None = None) -> list[tuple[str, ...]]:
    """The printed rows; with `before` (figures of an earlier commit) a column of them and their ratio."""
    rows: list[tuple[str, ...]] = [("benchmark", "gradcalc", "torch", "numpy by hand", "ratio", "target")]

    def add(name: str, key: str, field: str, unit: str, np_value: float | None, target: str, vs: str) -> None:
        o = ours[key][field]
        t = theirs.get(key, {}).get(field)
        ref = t if vs == "torch" else np_value
        ratio = f"{o / ref:.2f}× {vs}" if ref else "n/a"
        rows.append((name, f"{o:.4g} {unit}", f"{t:.4g} {unit}" if t else "-",
                     f"{np_value:.4g} {unit}" if np_value else "-", ratio, target))
        if before is not None:
            b = before.get(key, {}).get(field)
            rows[-1] += (f"{b:.4g} {unit}" if b else "-", f"{o / b:.2f}×" if b else "n/a")

    r = sz["repeat"]
    if "scalar" in only:
        npc = numpy_scalar_chain(sz["chain"], r)["total"]
        add("scalar chain, forward", "scalar", "forward", "µs/op", None, "", "torch")
        add("scalar chain, backward", "scalar", "backward", "µs/op", None, "", "torch")
        add("scalar chain, total", "scalar", "total", "µs/op", npc, "≤ 0.5× torch", "torch")
    if "big" in only:
        data = np.random.default_rng(0).random(sz["big"])
        t_np = best(lambda: numpy_big_elementwise(data), min(r, 3))
        add("big elementwise, time", "big", "time", "s", t_np, "≤ 1.1× numpy", "numpy")
        import gradcalc

        def ours_once() -> Any:
            x = gradcalc.tensor(data, requires_grad=True)
            (gradcalc.sin(x) * x + gradcalc.exp(-x)).sum().backward()
            return x.grad

        # tensor() copies the input, which the hand-written version reads in place: not counted
        m_ours = (traced_peak(ours_once) - data.nbytes) / 1e6
        m_np = traced_peak(lambda: numpy_big_elementwise(data)) / 1e6
        rows.append(("big elementwise, extra peak memory", f"{m_ours:.4g} MB", "-", f"{m_np:.4g} MB",
                     f"{m_ours / m_np:.2f}× numpy", "≤ 1.2× numpy"))
    if "mlp" in only:
        for key, dtype in (("mlp64", "float64"), ("mlp32", "float32")):
            t_np = numpy_mlp(dtype, sz["steps"], min(r, 3))["step"]
            add(f"MLP {dtype}", key, "step", "ms/step", t_np, "≤ 1.1× numpy", "numpy")
    if "deep" in only:
        t_np = numpy_deep_chain(sz["deep"], min(r, 3))["time"]
        add(f"deep chain {sz['deep']:.0e}", "deep", "time", "s", t_np, "≤ 4× numpy", "numpy")
        rows.append(deep_chain_memory(sz["deep"]))
        if sz["deep_long"]:
            t_np = numpy_deep_chain(sz["deep_long"], 1)["time"]
            add(f"deep chain {sz['deep_long']:.0e}", "deep_long", "time", "s", t_np, "completes", "numpy")
    if "second" in only:
        add("d²/dx² x³, grad twice", "second", "rep", "µs/rep", None, "≤ 0.4× torch", "torch")
    if "jac" in only:
        add("Jacobian R^4→R^400, jacfwd", "jac", "jacfwd", "ms", None, "≤ 1× torch", "torch")
        add("Jacobian R^4→R^400, jacrev", "jac", "jacrev", "ms", None, "≤ 1× torch", "torch")
        o = ours["jac"]
        rows.append(("  jacfwd / jacrev", f"{o['jacfwd'] / o['jacrev']:.2f}×", "-", "-", "", "≤ 0.5×"))
    if "fwd" in only:
        add("scalar chain, forward-mode JVP", "fwd", "op", "µs/op", None, "≤ 0.5× torch", "torch")
    if "persample" in only:
        add("per-sample grads, MLP ×64", "persample", "time", "ms", None, "(report)", "torch")
    if "vmap" in only:
        for key, dtype in (("vmap64", "float64"), ("vmap32", "float32")):
            add(f"per-sample grads 16-64-64-10 ×64, {dtype}", key, "persample", "ms", None, "≤ 1.0× torch", "torch")
            add(f"vmap(jacrev) 4-32-4 ×64, {dtype}", key, "jacrev", "ms", None, "≤ 1.5× torch", "torch")
            add(f"ensemble 10 × 16-64-10, batch 64, {dtype}", key, "ensemble", "ms", None, "≤ 1.5× torch", "torch")
    if "pinn" in only:
        add("PINN step 1-32-32-1, 256 pts", "pinn", "step", "ms/step", None, "≤ 1.0× torch", "torch")
    if "cnn" in only:
        add("CNN step, tutorial's, float32", "cnn", "step", "ms/step", None, "≤ 1.5× torch", "torch")
    if before is not None:  # the rows without a figure of the earlier commit (memory) get dashes
        rows[0] += ("before", "now / before")
        rows[1:] = [r if len(r) == 8 else r + ("-", "") for r in rows[1:]]
    return rows


def deep_chain_memory(n: int) -> tuple[str, ...]:
    """What the recorded graph of the deep chain holds between forward and backward, per operation."""
    import gradcalc

    x = gradcalc.tensor(np.linspace(0, 1, 100), requires_grad=True)
    y = gradcalc.zeros(100)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(n):
        y = y * 0.999 + 0.001 * x
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    kb = held / (3 * n) / 1024
    return (f"deep chain {n:.0e}, memory per graph op", f"{kb:.3f} KB", "1.1 KB (issue)", "-",
            f"{kb / 1.1:.2f}× torch", "≤ 0.5 KB")


if __name__ == "__main__":
    main()
