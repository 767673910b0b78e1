"""Start-up benchmarks of the `gradcalc` command, printed side by side with their references.

    python bench/startup.py [--repeat N]

- batch: `gradcalc -e '1 + 1'` against `python -c "import numpy, lark"` (the libraries it cannot avoid);
  target: at most 1.25 times the reference. Issue 19's figure beside it: against `python -c "import numpy,
  lark, prompt_toolkit"`, at most 0.67 times (what it read when the issue was filed).
- `python -c "import gradcalc"` against `python -c "import numpy"`: at most 1.2 times (issue 19).
- REPL: cold start to the first prompt, under a pseudo-terminal (pexpect): the time from spawning
  `gradcalc` until `>>> ` appears on the screen; target: at most 0.5 s.

Every run is a fresh process with a fresh history directory. Machines here are noisy: each figure is the
median (and the best) of several runs, alternating gradcalc and its reference; the ratio compares medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCH_TARGET = 1.25  # times the reference
ISSUE_BATCH_TARGET = 0.67  # issue 19: no slower than when it was filed, against numpy, lark and prompt_toolkit
IMPORT_TARGET = 1.2  # issue 19: `import gradcalc` against `import numpy`, as when it was filed
REPL_TARGET = 0.5  # seconds


def gradcalc_command() -> list[str]:
    """The installed console script next to this Python, else on PATH, else `python -m gradcalc`."""
    beside = Path(sys.executable).with_name("gradcalc")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("gradcalc")
    if found:
        return [found]
    return [sys.executable, "-m", "gradcalc"]


def environment(state_dir: str) -> dict[str, str]:
    """The environment of each run: a private history directory, no colour, one BLAS thread. Each gradcalc
    run uses the caches a user's would (the language's parser tables in ~/.cache/gradcalc), and bytecode
    caching is on, as in an installed package (this environment may set PYTHONDONTWRITEBYTECODE, which
    would time the compiling of every module that has no bytecode yet)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_STATE_HOME=state_dir, NO_COLOR="1", TERM="xterm", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PROMPT_TOOLKIT_NO_CPR="1")  # pexpect does not answer cursor-position requests as terminals do
    if not Path(gradcalc_command()[0]).name.startswith("gradcalc"):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def time_process(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of one run of `argv` to its exit, in seconds (it must succeed)."""
    # (no timeout: with one, Popen.wait polls with sleeps of up to 50 ms, and every figure came out a multiple of
    # that schedule, 114 ms; without, it blocks in waitpid and wakes when the child exits)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_to_prompt(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning `argv` under a pseudo-terminal until its `>>> ` prompt shows; then Ctrl-D."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(24, 100), encoding="utf-8", timeout=30)
    try:
        child.expect(">>>")  # prompt_toolkit moves the cursor over the prompt's trailing space
        elapsed = time.perf_counter() - start
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return elapsed


def measure(pairs: list[tuple[Callable[[], float], Callable[[], float]]], repeat: int) -> list[list[float]]:
    """Run each (subject, reference) pair `repeat` times, alternating, after one warm-up of each."""
    for subject, reference in pairs:
        subject()
        reference()
    results: list[list[float]] = [[] for _ in range(2 * len(pairs))]
    for _ in range(repeat):
        for index, (subject, reference) in enumerate(pairs):
            results[2 * index].append(subject())
            results[2 * index + 1].append(reference())
    return results


def main() -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each command (default 15)")
    args = parser.parse_args()

    command = gradcalc_command()
    py = sys.executable
    # (name, subject, reference, the reference's words, target: a ratio of medians, or seconds for the REPL)
    cases: list[tuple[str, list[str], list[str], str, float]] = [
        ("batch: gradcalc -e '1 + 1'", [*command, "-e", "1 + 1"], [py, "-c", "import numpy, lark"],
         "python -c 'import numpy, lark'", BATCH_TARGET),
        ("batch, issue 19's reference", [*command, "-e", "1 + 1"], [py, "-c", "import numpy, lark, prompt_toolkit"],
         "python -c 'import numpy, lark, prompt_toolkit'", ISSUE_BATCH_TARGET),
        ("import gradcalc", [py, "-c", "import gradcalc"], [py, "-c", "import numpy"], "python -c 'import numpy'",
         IMPORT_TARGET),
    ]
    with tempfile.TemporaryDirectory() as state:
        env = environment(state)
        pairs: list[tuple[Callable[[], float], Callable[[], float]]] = [
            (lambda a=subject: time_process(a, env), lambda b=reference: time_process(b, env))
            for _, subject, reference, _, _ in cases
        ]
        try:
            import pexpect  # noqa: F401

            has_pty = True
        except ImportError:
            has_pty = False
        if has_pty:
            pairs.append((lambda: time_to_prompt(command, env), lambda: time_process(cases[0][2], env)))
        results = measure(pairs, args.repeat)

    ms = 1000.0
    print(f"gradcalc start-up: {' '.join(command)}  ({args.repeat} runs each, alternating; median / best, ms)")
    header = f"{'case':<34} {'gradcalc':>15} {'reference':>15} {'ratio':>6}   target"
    print(header)
    print("-" * len(header))
    for index, (name, _, _, words, target) in enumerate(cases):
        subject, ref = results[2 * index], results[2 * index + 1]
        s_med, r_med = statistics.median(subject), statistics.median(ref)
        ratio = s_med / r_med
        print(f"{name:<34} {s_med * ms:7.0f} /{min(subject) * ms:5.0f} {r_med * ms:7.0f} /{min(ref) * ms:5.0f}"
              f" {ratio:5.2f}x   x{target} of {words}: {'met' if ratio <= target else 'MISSED'}")
    if has_pty:
        subject, ref = results[-2], results[-1]
        s_med, r_med = statistics.median(subject), statistics.median(ref)
        print(f"{'REPL: cold start to first prompt':<34} {s_med * ms:7.0f} /{min(subject) * ms:5.0f} "
              f"{r_med * ms:7.0f} /{min(ref) * ms:5.0f} {s_med / r_med:5.2f}x   <= {REPL_TARGET * ms:.0f} ms: "
              f"{'met' if s_med <= REPL_TARGET else 'MISSED'}")
    else:
        print("REPL start-up not measured: pexpect is not installed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
