"""How close a float32 result must be to PyTorch's: measured against a float64 reference, never against one
machine's float32 kernels.

PyTorch's float32 kernels differ by CPU (`ATEN_CPU_CAPABILITY=default`, `avx2`, `avx512` sum and fuse in other
orders), so a tolerance tuned to the difference between gradcalc and one machine's PyTorch is red on another.
What does not depend on the machine is how far each float32 run is from the exact (float64) computation:
gradcalc's error may be a small multiple of PyTorch's own, plus the rounding that the computation's length
allows in any case (float32's epsilon per step, relative to the reference's size).
"""

from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)

# gradcalc's distance from the float64 reference may be this many times PyTorch's: both round the same
# formula in float32, in possibly different orders, so their errors are of one size, not equal.
MULTIPLE = 4.0


def float32_error_bound(theirs: np.ndarray, reference: np.ndarray, steps: int,
                        scale: float | None = None, envelope: float = 0.0) -> float:
    """The largest error (max norm) that a float32 result may have from `reference`: `MULTIPLE` times
    PyTorch's error, or `steps` roundings of float32 at the computation's scale, whichever is larger. The
    scale is the size of the values the computation went through (`scale`, default the reference's own): a
    value that crossed zero carries the rounding of the larger values it was computed from. `envelope`: PyTorch's
    largest error over the same trajectory (an optimizer's): an error that changes sign passes near zero at some
    step, and two rounding orders' errors grow at different steps; the run's error is of the envelope's size."""
    ref = np.asarray(reference, dtype=np.float64)
    if scale is None:
        scale = float(np.abs(ref).max(initial=0.0))
    theirs_error = float(np.abs(np.asarray(theirs, dtype=np.float64) - ref).max(initial=0.0))
    return max(MULTIPLE * max(theirs_error, envelope), steps * EPS32 * max(scale, 1e-30))


def assert_float32_close(ours: np.ndarray, theirs: np.ndarray, reference: np.ndarray, *, steps: int,
                         scale: float | None = None, what: str = "", envelope: float = 0.0) -> None:
    """gradcalc's float32 `ours` is as close to the float64 `reference` as PyTorch's float32 `theirs` allows
    (see `float32_error_bound`); `steps` is the computation's length in roundings per element, `scale` the size
    of the values it went through."""
    ours = np.asarray(ours)
    assert ours.dtype == np.float32, f"{what}: dtype {ours.dtype}"
    assert ours.shape == np.shape(reference), f"{what}: shape {ours.shape} vs {np.shape(reference)}"
    error = float(np.abs(ours.astype(np.float64) - np.asarray(reference, dtype=np.float64)).max(initial=0.0))
    bound = float32_error_bound(theirs, reference, steps, scale, envelope)
    assert error <= bound, (f"{what}: gradcalc's float32 error {error:.3g} exceeds {bound:.3g} "
                            f"(PyTorch's error x{MULTIPLE:g} or {steps} roundings)")


# float64 ---------------------------------------------------------------------------------------------------------
# A float64 run has no wider reference to be measured against, and PyTorch's float64 kernels also round otherwise
# on other CPUs (the generic kernels multiply and add separately where AVX2 fuses). What a trajectory allows is
# measured instead: how far PyTorch's own run moves when its values are perturbed by one ulp (a trajectory that
# amplifies rounding, as an optimizer near its optimum or L-BFGS's line search does, moves far; a stable one
# does not). Two correct float64 runs may differ by that sensitivity times the roundings that differ between them.

EPS64 = float(np.finfo(np.float64).eps)


def assert_float64_within_sensitivity(ours: np.ndarray, theirs: np.ndarray, perturbed: np.ndarray, *,
                                      roundings: int, what: str = "") -> None:
    """gradcalc's float64 trajectory `ours` (steps × values) is PyTorch's `theirs` to within `roundings` times
    PyTorch's own sensitivity: `perturbed` is PyTorch's run perturbed by one ulp (per step, or at its start), and
    `roundings` how many roundings per step may differ. Errors are relative to the largest value so far; the
    sensitivity is its largest so far (an envelope: two rounding orders' differences grow at different steps),
    and never less than `roundings` ulps per step."""
    ours, theirs, perturbed = (np.asarray(a, dtype=np.float64).reshape(len(a), -1) for a in (ours, theirs, perturbed))
    assert ours.shape == theirs.shape == perturbed.shape, f"{what}: shapes {ours.shape} {theirs.shape}"
    scale = np.maximum(np.maximum.accumulate(np.abs(theirs).max(axis=1, initial=0.0)), 1e-300)
    moved = np.maximum.accumulate(np.abs(perturbed - theirs).max(axis=1, initial=0.0)) / scale
    error = np.abs(ours - theirs).max(axis=1, initial=0.0) / scale
    bound = roundings * np.maximum(moved, EPS64 * np.arange(1, len(ours) + 1))
    worst = int(np.argmax(error - bound))
    assert error[worst] <= bound[worst], (
        f"{what}: at step {worst} gradcalc's float64 trajectory is {error[worst]:.3g} (relative) from PyTorch's, "
        f"beyond {bound[worst]:.3g} ({roundings} roundings of PyTorch's own sensitivity {moved[worst]:.3g})")
