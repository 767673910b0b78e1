"""heap.py: a process that trains keeps the memory its steps free (glibc only). Measured as the kernel counts
it: the page faults of a training step, in a child process that runs the engine as it is, beside one where
`keep_freed_memory` is made to have run already (so it never asks glibc)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest


def _glibc() -> bool:
    try:
        return sys.platform.startswith("linux") and hasattr(ctypes.CDLL("libc.so.6"), "gnu_get_libc_version")
    except OSError:
        return False


CHILD = """
import json, resource, sys
import numpy as np
import gradcalc as T
from gradcalc.autograd import heap
heap.KEPT[0] = {untouched}
# the operation families and the engine this step uses load at their first use (ops/lazy.py): loaded first, by a
# tiny step, so that their long-lived objects are not made among the first step's arrays (above them in the heap,
# they would keep glibc from trimming it, with or without keep_freed_memory)
_t = T.ones(2, requires_grad=True)
((T.tanh(_t @ T.ones(2, 2)) - T.ones(2)) ** 2).mean().backward()
with T.no_grad():
    _t -= 0.01 * _t.grad
_t.grad = None
del _t
rng = np.random.default_rng(0)
w = [T.tensor((rng.standard_normal(s) * 0.05).astype(np.float32), requires_grad=True)
     for s in ((784, 512), (512, 512), (512, 10))]
x = T.tensor(rng.standard_normal((256, 784)).astype(np.float32))
y = T.tensor(rng.standard_normal((256, 10)).astype(np.float32))

def step():
    h = T.tanh(T.tanh(x @ w[0]) @ w[1]) @ w[2]
    ((h - y) ** 2).mean().backward()
    with T.no_grad():
        for p in w:
            p -= 0.01 * p.grad
            p.grad = None

for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(json.dumps((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10))
"""


def _faults(untouched: bool) -> float:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD.format(untouched=untouched)], capture_output=True, text=True,
                         check=True, env=env)
    return float(json.loads(out.stdout))


@pytest.mark.skipif(not _glibc(), reason="keep_freed_memory acts on glibc's malloc only")
def test_a_training_step_takes_few_pages_from_the_kernel() -> None:
    """Without it each step frees its activations and gradients at the end of backward and glibc returns them
    (about 1,500 faults a step here, one per 4 KB page of those arrays); with it they are served again from the
    process's heap: the faults left are NumPy's and BLAS's own."""
    kept, given_back = _faults(False), _faults(True)
    assert kept * 3 < given_back, (kept, given_back)
