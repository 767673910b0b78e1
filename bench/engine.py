"""Engine benchmarks, printed side by side with their references in the same run.

    python bench/engine.py [--quick]

Each row times gradcalc, PyTorch CPU (when installed) and a hand-written NumPy forward+backward (the
limit an engine on NumPy can reach), and prints the ratio the target is stated in. Machines here are
noisy: each figure is the best of several repeats, and only ratios from one run mean anything.
"""

from __future__ import annotations

import os

# One BLAS thread for every library, set before NumPy or PyTorch load their BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gradcalc as gc_  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
except ImportError:  # the oracle is optional: rows then show only gradcalc and NumPy
    torch = None


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def extra_peak_bytes(fn: Callable[[], object]) -> int:
    """Peak memory NumPy and Python allocate during `fn`, above what was live before it."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


ROWS: list[tuple[str, str, str, str, str, str]] = []


def row(name: str, ours: float, ref_name: str, ref: float, unit: str, target: str) -> None:
    ratio = ours / ref if ref else float("nan")
    ROWS.append((name, f"{ours:.4g} {unit}", f"{ref_name} {ref:.4g} {unit}", f"{ratio:.2f}×", target, ""))


# -- 1. scalar chain -----------------------------------------------------------------------------------
def scalar_chain(n: int, repeat: int) -> None:
    ops = 4 * n

    def ours() -> tuple[float, float]:
        x = gc_.tensor(0.5, requires_grad=True)
        y = x
        t0 = time.perf_counter()
        for _ in range(n):
            y = (y * y + 1.0) ** -0.5 + x
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    def theirs() -> tuple[float, float]:
        x = torch.tensor(0.5, requires_grad=True)
        y = x
        t0 = time.perf_counter()
        for _ in range(n):
            y = (y * y + 1.0) ** -0.5 + x
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    def numpy_by_hand() -> tuple[float, float]:
        # 0-d NumPy arrays, the same four operations, and their derivatives by hand
        x = np.array(0.5)
        y = x
        tape = []
        t0 = time.perf_counter()
        for _ in range(n):
            a = y * y
            b = a + 1.0
            c = b**-0.5
            tape.append((y, b))
            y = c + x
        t1 = time.perf_counter()
        gy, gx = np.array(1.0), np.array(0.0)
        for yy, b in reversed(tape):
            gx = gx + gy
            gb = gy * (-0.5 * b**-1.5)
            gy = gb * 2.0 * yy
        gx = gx + gy
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    def run(fn: Callable[[], tuple[float, float]]) -> tuple[float, float]:
        results = [fn() for _ in range(repeat)]
        return min(r[0] for r in results), min(r[1] for r in results)

    f_ours, b_ours = run(ours)
    f_np, b_np = run(numpy_by_hand)
    us = 1e6 / ops
    if torch is not None:
        f_t, b_t = run(theirs)
        row("scalar chain: forward µs/op", f_ours * us, "torch", f_t * us, "µs", "")
        row("scalar chain: backward µs/op", b_ours * us, "torch", b_t * us, "µs", "")
        row("scalar chain: total µs/op", (f_ours + b_ours) * us, "torch", (f_t + b_t) * us, "µs", "≤ 0.5×")
    row("scalar chain: total µs/op", (f_ours + b_ours) * us, "numpy", (f_np + b_np) * us, "µs", "(limit)")


# -- 2. big elementwise -------------------------------------------------------------------------------
def big_elementwise(n: int, repeat: int) -> None:
    data = np.random.default_rng(0).random(n)

    def ours() -> None:
        x = gc_.tensor(data, requires_grad=True)
        (gc_.sin(x) * x + gc_.exp(-x)).sum().backward()
        return x.grad

    def by_hand() -> np.ndarray:
        x = data
        s = np.sin(x)
        e = np.exp(-x)
        _ = (s * x + e).sum()
        return s + x * np.cos(x) - e

    def theirs() -> None:
        x = torch.tensor(data, requires_grad=True)
        (torch.sin(x) * x + torch.exp(-x)).sum().backward()

    t_ours, t_np = best(ours, repeat), best(by_hand, repeat)
    if torch is not None:
        row("big elementwise 1e7: time s", t_ours, "torch", best(theirs, repeat), "s", "")
    row("big elementwise 1e7: time s", t_ours, "numpy", t_np, "s", "≤ 1.1×")
    # the input array itself is allocated by both (tensor() copies; the hand-written one reads `data`)
    m_ours = extra_peak_bytes(ours) - data.nbytes
    m_np = extra_peak_bytes(by_hand)
    row("big elementwise 1e7: extra peak MB", m_ours / 1e6, "numpy", m_np / 1e6, "MB", "≤ 1.2×")


# -- 3. MLP ---------------------------------------------------------------------------------------------
def mlp(dtype: str, steps: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    shapes = [(784, 512), (512, 512), (512, 10)]
    ws = [rng.standard_normal(s).astype(dtype) * 0.05 for s in shapes]
    bs = [np.zeros(s[1], dtype=dtype) for s in shapes]
    xb = rng.standard_normal((256, 784)).astype(dtype)
    yb = rng.standard_normal((256, 10)).astype(dtype)

    def ours() -> None:
        W = [gc_.tensor(w, requires_grad=True) for w in ws]
        B = [gc_.tensor(b, requires_grad=True) for b in bs]
        x, y = gc_.tensor(xb), gc_.tensor(yb)
        for _ in range(steps):
            h = x
            for i in range(3):
                h = h @ W[i] + B[i]
                if i < 2:
                    h = gc_.tanh(h)
            loss = ((h - y) ** 2).mean()
            loss.backward()
            with gc_.no_grad():
                for p in W + B:
                    p -= 0.01 * p.grad
                    p.grad = None

    def theirs() -> None:
        W = [torch.tensor(w, requires_grad=True) for w in ws]
        B = [torch.tensor(b, requires_grad=True) for b in bs]
        x, y = torch.tensor(xb), torch.tensor(yb)
        for _ in range(steps):
            h = x
            for i in range(3):
                h = h @ W[i] + B[i]
                if i < 2:
                    h = torch.tanh(h)
            loss = ((h - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                for p in W + B:
                    p -= 0.01 * p.grad
                    p.grad = None

    def by_hand() -> None:
        W = [w.copy() for w in ws]
        B = [b.copy() for b in bs]
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

    ms = 1e3 / steps
    t_ours, t_np = best(ours, repeat) * ms, best(by_hand, repeat) * ms
    if torch is not None:
        row(f"MLP {dtype}: ms/step", t_ours, "torch", best(theirs, repeat) * ms, "ms", "")
    row(f"MLP {dtype}: ms/step", t_ours, "numpy", t_np, "ms", "≤ 1.1×")


# -- 4. deep chain --------------------------------------------------------------------------------------
def deep_chain(n: int, repeat: int, memory: bool = True) -> None:
    x0 = np.linspace(0, 1, 100)

    def ours() -> None:
        x = gc_.tensor(x0, requires_grad=True)
        y = gc_.zeros(100)
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        y.sum().backward()

    def by_hand() -> None:
        x = x0
        y = np.zeros(100)
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        g = np.ones(100)
        gx = np.zeros(100)
        for _ in range(n):
            gx = gx + 0.001 * g
            g = g * 0.999

    def theirs() -> None:
        x = torch.tensor(x0, requires_grad=True)
        y = torch.zeros(100)
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        y.sum().backward()

    t_ours, t_np = best(ours, repeat), best(by_hand, repeat)
    if torch is not None:
        row(f"deep chain {n:.0e}: s", t_ours, "torch", best(theirs, repeat), "s", "")
    row(f"deep chain {n:.0e}: s", t_ours, "numpy", t_np, "s", "≤ 4×")
    if memory:
        # what the recorded graph holds between forward and backward, per recorded operation
        x = gc_.tensor(x0, requires_grad=True)
        y = gc_.zeros(100)
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            y = y * 0.999 + 0.001 * x
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        per_op = held / (3 * n)
        ROWS.append((f"deep chain {n:.0e}: KB per graph op", f"{per_op / 1024:.3f} KB",
                     "torch 1.1 KB (issue)", "", "≤ 0.5 KB", ""))
        del y


# -- 5. second derivative ------------------------------------------------------------------------------
def second_derivative(reps: int, repeat: int) -> None:
    def ours() -> None:
        x = gc_.tensor(1.5, requires_grad=True)
        for _ in range(reps):
            (g,) = gc_.autograd.grad(x**3, x, create_graph=True)
            (h,) = gc_.autograd.grad(g, x, create_graph=True)

    def theirs() -> None:
        x = torch.tensor(1.5, requires_grad=True)
        for _ in range(reps):
            (g,) = torch.autograd.grad(x**3, x, create_graph=True)
            (h,) = torch.autograd.grad(g, x, create_graph=True)

    us = 1e6 / reps
    t_ours = best(ours, repeat) * us
    if torch is not None:
        row("d²/dx² x³ via grad twice: µs/rep", t_ours, "torch", best(theirs, repeat) * us, "µs", "≤ 0.5×")
    else:
        ROWS.append(("d²/dx² x³ via grad twice: µs/rep", f"{t_ours:.4g} µs", "torch absent", "", "≤ 0.5×", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", default="", help="comma-separated subset: scalar,big,mlp,deep,second")
    args = parser.parse_args()
    q = args.quick
    only = set(args.only.split(",")) if args.only else {"scalar", "big", "mlp", "deep", "second"}
    print(f"gradcalc {gc_.__version__}, numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'}")
    if "scalar" in only:
        scalar_chain(2_000 if q else 20_000, 3 if q else 5)
    if "big" in only:
        big_elementwise(10**5 if q else 10**7, 2 if q else 3)
    if "mlp" in only:
        mlp("float64", 3 if q else 10, 2 if q else 3)
        mlp("float32", 3 if q else 10, 2 if q else 3)
    if "deep" in only:
        deep_chain(10**4 if q else 10**5, 2 if q else 3)
        if not q:
            deep_chain(10**6, 1, memory=False)
    if "second" in only:
        second_derivative(200 if q else 2_000, 3 if q else 5)
    widths = [max(len(r[i]) for r in ROWS) for i in range(5)]
    header = ("benchmark", "gradcalc", "reference", "ratio", "target")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in ROWS:
        print("  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)))


if __name__ == "__main__":
    main()
