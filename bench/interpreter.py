"""Language benchmarks, printed side by side with their references in one run.

    python bench/interpreter.py [--quick] [--before REF]

1. A gradient-descent script (a 5-line loop body: loss, backward, a `with no_grad:` update, zero_grad) run by
   the interpreter, against the same loop written in Python on the engine. Target: at most 1.3 times.
2. A PINN training step (net 1→32→32→1 tanh on 256 points, u and u'' by grad(create_graph=true), the residual
   loss, backward, an Adam step; float64) in the language, against the same step written in Python on the
   engine (`gradcalc.nn`, `gradcalc.optim`). Target: at most 1.3 times.
3. Parsing and lowering (compiling to closures) a 10,000-line script. Target: at most 0.5 s.
4. A cold start of the batch runner on `1 + 1` (`python -m gradcalc -e '1 + 1'`; the parser and bytecode
   caches warm, as after the first run of an installed gradcalc), against `python -c "import numpy, lark"`.
   Target: at most 1.25 times.

Machines here are noisy: each figure is the best of several repeats, and only the ratios of one run mean much.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one BLAS thread, before NumPy
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GD_SCRIPT = """\
xs = linspace(0, 1, 20)
ys = 3 * xs + 0.5
w = 0 requires_grad
b = 0 requires_grad
for step in range({n}):
    loss = ((w * xs + b - ys) ** 2).mean()
    backward loss
    with no_grad:
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    zero_grad w, b
"""

PINN_SETUP = """\
seed 0
net = Sequential(Linear(1, 32), Tanh(), Linear(32, 32), Tanh(), Linear(32, 1))
opt = Adam(net.parameters(), lr=0.001)
x = linspace(0, 3, 256).reshape(-1, 1) requires_grad
"""
PINN_LOOP = """\
for step in range({n}):
    opt.zero_grad()
    u = net(x)
    du = grad(u, x, ones_like(u), create_graph=true)[0]
    d2u = grad(du, x, ones_like(du), create_graph=true)[0]
    loss = ((d2u + u) ** 2).mean()
    backward loss
    opt.step()
"""

# A mix of the statements users write, repeated to 10,000 lines.
BLOCK = """\
x = 3 requires_grad
w = [[1, 2], [3, 4]] requires_grad
y = x ** 2 + sin(x)   # a comment
backward y retain_graph
x.grad
b = x * x
retain_grad b
loss = ((w * 2 + x - 1) ** 2).mean()
with no_grad:
    w -= 0.1 * w.grad
zero_grad x, w
print "loss", loss
"""


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def gradient_descent_python(n: int) -> float:
    """The same loop, written in Python on the engine: returns the final w (to check both agree)."""
    import gradcalc as torch

    xs = torch.linspace(0, 1, 20)
    ys = 3 * xs + 0.5
    w = torch.tensor(0.0, requires_grad=True)
    b = torch.tensor(0.0, requires_grad=True)
    for _step in range(n):
        loss = ((w * xs + b - ys) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad = None
        b.grad = None
    return w.item()


def gradient_descent_language(n: int) -> float:
    from gradcalc.lang import Session

    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run(GD_SCRIPT.format(n=n), "gd.gc")
    return s.workspace["w"].item()  # type: ignore[attr-defined]


def pinn_python() -> Callable[[int], float]:
    """The PINN loop in Python on the engine, from the same seed (so the same weights): a function that runs
    n steps and returns the last loss."""
    import gradcalc as torch

    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters(), lr=0.001)
    x = torch.linspace(0, 3, 256).reshape(-1, 1).requires_grad_()

    def steps(n: int) -> float:
        loss = None
        for _step in range(n):
            opt.zero_grad()
            u = net(x)
            (du,) = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
            (d2u,) = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)
            loss = ((d2u + u) ** 2).mean()
            loss.backward()
            opt.step()
        return loss.item()  # type: ignore[union-attr]

    return steps


def pinn_language() -> Callable[[int], float]:
    """The same in the language: the network made by one program, the steps run by another."""
    from gradcalc.lang import Session

    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run(PINN_SETUP, "pinn.gc")

    def steps(n: int) -> float:
        assert s.run(PINN_LOOP.format(n=n), "pinn.gc")
        return s.workspace["loss"].item()  # type: ignore[attr-defined]

    return steps


def time_steps(make: Callable[[], Callable[[int], float]], n: int) -> float:
    """Wall time of n steps (the network made beforehand, not timed)."""
    run = make()
    t0 = time.perf_counter()
    run(n)
    return time.perf_counter() - t0


def parse_and_lower(text: str) -> None:
    from gradcalc.lang.session import Session  # (loads the statements the parser lowers to)

    try:
        from gradcalc.lang.syntax.parser import parse
        from gradcalc.lang.syntax.source import Unit
    except ImportError:  # gradcalc before its language was in layers (an earlier --before)
        parse = importlib.import_module("gradcalc.lang.parser").parse
        Unit = importlib.import_module("gradcalc.lang.runtime").Unit

    program = parse(text)
    Session(out=io.StringIO())._interp.compile(program, Unit("big.gc", text))


def cold(argv: list[str], repeat: int, root: str | None = None) -> float:
    """Best wall time of a fresh process (of gradcalc at `root`, by default this one). Bytecode caching is on,
    as in an installed package (this environment may set PYTHONDONTWRITEBYTECODE, which would time the
    compiling of every module)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = root or str(ROOT)
    subprocess.run(argv, env=env, check=True, capture_output=True)  # write the bytecode and parser caches
    return best(lambda: subprocess.run(argv, env=env, check=True, capture_output=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    parser.add_argument("--before", metavar="REF", help="also time the loops on gradcalc at this earlier commit")
    parser.add_argument("--root", help=argparse.SUPPRESS)  # whose gradcalc to time (the child of --before)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = 2000 if args.quick else 10_000
    repeat = 2 if args.quick else 5
    if args.root:
        sys.path.insert(0, args.root)
    import gradcalc

    if hasattr(gradcalc, "set_default_dtype"):  # the Python loops in float64, as the language computes
        gradcalc.set_default_dtype(gradcalc.float64)

    # warm both (imports, the parser's cache) before timing
    gradient_descent_python(10)
    gradient_descent_language(10)

    # interleaved, so that a noisy stretch of the machine weighs on both alike; the best of each is kept
    t_py = t_lang = float("inf")
    for _ in range(repeat):
        t_py = min(t_py, best(lambda: gradient_descent_python(n), 1))
        t_lang = min(t_lang, best(lambda: gradient_descent_language(n), 1))
    assert abs(gradient_descent_python(50) - gradient_descent_language(50)) < 1e-12
    if args.json:  # the child of --before: the loop, parsing and a cold start, of gradcalc at --root
        text = BLOCK * (10_000 // BLOCK.count("\n"))
        figures = {"gd_python": t_py, "gd_language": t_lang, "parse": best(lambda: parse_and_lower(text), repeat),
                   "cold": cold([sys.executable, "-m", "gradcalc", "-e", "1 + 1"], repeat * 2, args.root)}
        print(json.dumps(figures))
        return
    print(f"gradient descent, {n} iterations of a 5-line body")
    print(f"  Python on the engine   {t_py:8.3f} s   ({t_py / n * 1e6:6.1f} µs per iteration)")
    print(f"  the interpreter        {t_lang:8.3f} s   ({t_lang / n * 1e6:6.1f} µs per iteration)")
    print(f"  ratio                  {t_lang / t_py:8.2f} x   (target <= 1.30)")
    b = None
    if args.before:
        from before import figures

        b = figures(Path(__file__), args.before, ["--quick"] if args.quick else [])
        if b is not None:
            print(f"  at {args.before}: Python {b['gd_python']:.3f} s, the interpreter {b['gd_language']:.3f} s"
                  f"   (now / before: {t_py / b['gd_python']:.2f} x and {t_lang / b['gd_language']:.2f} x)")

    steps = 20 if args.quick else 100
    time_steps(pinn_python, 2)
    time_steps(pinn_language, 2)
    p_py = p_lang = float("inf")
    for _ in range(repeat):
        p_py = min(p_py, time_steps(pinn_python, steps))
        p_lang = min(p_lang, time_steps(pinn_language, steps))
    assert pinn_python()(5) == pinn_language()(5)  # the same arithmetic, step for step
    print(f"\nPINN step (1-32-32-1 tanh, 256 points, u'' by grad create_graph, Adam), {steps} steps")
    print(f"  Python on the engine   {p_py / steps * 1e3:8.3f} ms per step")
    print(f"  the interpreter        {p_lang / steps * 1e3:8.3f} ms per step")
    print(f"  ratio                  {p_lang / p_py:8.2f} x   (target <= 1.30)")

    text = BLOCK * (10_000 // BLOCK.count("\n"))
    lines = text.count("\n")
    t_parse = best(lambda: parse_and_lower(text), repeat)
    print(f"\nparse and lower a {lines}-line script")
    print(f"  parse + lower          {t_parse:8.3f} s   (target <= 0.50)")
    if b is not None and "parse" in b:
        print(f"  at {args.before}: {b['parse']:.3f} s   (now / before: {t_parse / b['parse']:.2f} x)")

    python = sys.executable
    t_ref = cold([python, "-c", "import numpy, lark"], repeat * 2)
    t_run = cold([python, "-m", "gradcalc", "-e", "1 + 1"], repeat * 2)
    print("\ncold start")
    print(f"  python -c 'import numpy, lark'      {t_ref:8.3f} s")
    print(f"  python -m gradcalc -e '1 + 1'       {t_run:8.3f} s")
    print(f"  ratio                               {t_run / t_ref:8.2f} x   (target <= 1.25)")
    if b is not None and "cold" in b:
        print(f"  at {args.before}: gradcalc -e '1 + 1' {b['cold']:.3f} s   (now / before: {t_run / b['cold']:.2f} x)")

    # plot: a whole process to a non-terminal (plain text), beyond the cold start of `-e '1 + 1'`
    plot = "plot sin(x)*exp(-x/5) for x in [0, 20] order 2"
    per_point = "def f(t):\n    return t * mean(t) + sin(t)\nplot f(x) for x in [0, 20] order 2"
    t_plot = cold([python, "-m", "gradcalc", "-e", plot], repeat * 2)
    t_point = cold([python, "-m", "gradcalc", "-e", per_point], repeat * 2)
    print("\nplot to a non-terminal (80 columns), beyond the cold start above")
    print(f"  {plot}   {(t_plot - t_run) * 1e3:6.1f} ms   (target <= 60)")
    print(f"  a user def that is not elementwise (one point at a time)   {(t_point - t_run) * 1e3:6.1f} ms   (report)")


if __name__ == "__main__":
    main()
