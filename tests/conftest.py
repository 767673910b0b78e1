"""Markers derived from the tests themselves, and the print options put back after each test.

`float32`: every test whose id names float32 compares float32 results, whose rounding depends on the kernels
PyTorch picks for the CPU. `.ci/run` runs these once more under `ATEN_CPU_CAPABILITY=default`, so that the
generic kernels are covered beside the machine's best (`python -m pytest -m float32`).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "float32" in item.nodeid:
            item.add_marker(pytest.mark.float32)


@pytest.fixture(autouse=True)
def _default_print_options():
    """Print options are global, as PyTorch's: a test that sets them (the language's `set_printoptions`,
    a fuzzed call of it) leaves the defaults behind for the next."""
    yield
    from gradcalc.autograd.printing import set_printoptions

    set_printoptions(profile="default")
