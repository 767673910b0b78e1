"""Markers derived from the tests themselves, the default dtype the tests run under, and the print options
put back after each test.

`float32`: every test whose id names float32 compares float32 results, whose rounding depends on the kernels
PyTorch picks for the CPU. `kernels`: those, and the long float64 trajectories (the optimizers'), whose bound is
PyTorch's own sensitivity to rounding. `.ci/run` runs these once more under `ATEN_CPU_CAPABILITY=default`, so
that the generic kernels are covered beside the machine's best (`python -m pytest -m kernels`).

The default dtype: gradcalc starts at float32, as PyTorch does. The tests compare with PyTorch in float64 (the
oracle modules call `torch.set_default_dtype(torch.float64)`), so every test runs with gradcalc's default
set to float64 too, as PyTorch's own tests set theirs; a test of the default itself asks for the
`pytorch_default_dtype` fixture, which gives it float32 (gradcalc's and PyTorch's, restored after it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gradcalc

# the modules whose float64 comparisons follow trajectories long enough for the kernels' rounding to show
TRAJECTORIES = ("test_optim.py", "test_optim_lbfgs.py", "test_optim_variants.py", "test_lang_training.py")


def pytest_configure(config: pytest.Config) -> None:
    """Tests enumerate the specs (spec.OPS) and the node kinds: every family ops/lazy.py defers, and the engine's
    modules loaded at first use (autograd/__init__.py), are loaded first, whichever tests run
    (tests/engine/test_lazy.py checks the cold start, where none is, in child processes)."""
    import gradcalc.autograd.forward_ad  # noqa: F401 - forward AD (its double_vjp in the specs that name it)
    import gradcalc.autograd.function  # noqa: F401 - custom functions' node kinds, loaded at first use otherwise
    import gradcalc.autograd.functional  # noqa: F401
    import gradcalc.autograd.graph  # noqa: F401
    from gradcalc.autograd.ops import lazy

    lazy.load_all()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "float32" in item.nodeid:
            item.add_marker(pytest.mark.float32)
            item.add_marker(pytest.mark.kernels)
        elif item.path.name in TRAJECTORIES:
            item.add_marker(pytest.mark.kernels)


@pytest.fixture(autouse=True)
def _default_print_options() -> Iterator[None]:
    """Print options are global, as PyTorch's: a test that sets them (the language's `set_printoptions`,
    a fuzzed call of it) leaves the defaults behind for the next."""
    yield
    from gradcalc.autograd.printing import set_printoptions

    set_printoptions(profile="default")


@pytest.fixture(autouse=True)
def float64_default_dtype() -> Iterator[None]:
    """gradcalc's default dtype is float64 during each test (as the oracles set PyTorch's), then restored."""
    previous = gradcalc.get_default_dtype()
    gradcalc.set_default_dtype(gradcalc.float64)
    yield
    gradcalc.set_default_dtype(previous)


@pytest.fixture
def pytorch_default_dtype() -> Iterator[None]:
    """The default dtype of a fresh `import torch` / `import gradcalc`: float32 for both, restored after."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    gradcalc.set_default_dtype(gradcalc.float32)
    yield
    torch.set_default_dtype(previous)
