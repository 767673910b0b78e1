"""The export's names are PyTorch's: every built-in, method, attribute and block of the language has a PyTorch
spelling that PyTorch has (derived from the language's tables, names.py), the exceptions table holds exactly the
names the engine spells otherwise, and every statement of the language has a translation."""

from __future__ import annotations

import builtins
import importlib
import warnings

import pytest

from gradcalc.export import names
from gradcalc.export.language import ATTRIBUTES, FUNCTIONS, GRAD_MODES, METHODS, SPACES, STATEMENT_RECORDS
from gradcalc.export.registry import TRANSLATIONS

torch = pytest.importorskip("torch", reason="the oracle extra is not installed: pip install -e '.[oracle]'")

MODULES = {label: path for path, label in SPACES.items()}


def resolve(text: str) -> object:
    """What a spelling (`torch.sin`, `F.relu`, `autograd.functional.jacobian`, `range`) names in PyTorch."""
    first, *rest = text.split(".")
    if first in MODULES:
        obj: object = importlib.import_module(MODULES[first])
    else:
        obj = getattr(builtins, first)
    for part in rest:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_built_in_is_pytorchs(name: str) -> None:
    spelled = names.builtin_spelling(FUNCTIONS[name])
    if spelled.method:
        assert hasattr(torch.Tensor, spelled.method)
    else:
        assert callable(resolve(spelled.text)), spelled


def test_the_exceptions_are_the_engines_other_spellings() -> None:
    # a built-in whose derived name PyTorch lacks must be in SPELLINGS, and every entry there is PyTorch's
    for name, target in names.SPELLINGS.items():
        assert callable(resolve(names.spelled_path(target).text)), name
    missing_methods = {m for m in METHODS if not hasattr(torch.Tensor, m)}
    assert missing_methods == set(names.METHOD_SPELLINGS)
    for target in names.METHOD_SPELLINGS.values():
        assert callable(resolve(names.spelled_path(target).text))
    missing_attributes = {a for a in ATTRIBUTES if not hasattr(torch.Tensor, a)}
    assert missing_attributes == set(names.ATTRIBUTE_SPELLINGS)
    for target in names.ATTRIBUTE_SPELLINGS.values():
        assert hasattr(torch.Tensor, target)


def test_the_blocks_are_pytorchs() -> None:
    for mode in GRAD_MODES:
        block = resolve(names.block_spelling(mode).text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # anomaly mode's: "Anomaly Detection has been enabled"
            with block():
                pass


def test_the_spellings_use_pytorchs_module_names() -> None:
    assert names.builtin_spelling(FUNCTIONS["sin"]).text == "torch.sin"
    assert names.builtin_spelling(FUNCTIONS["grad"]).text == "autograd.grad"
    assert names.builtin_spelling(FUNCTIONS["Linear"]).text == "nn.Linear"
    assert names.builtin_spelling(FUNCTIONS["mse_loss"]).text == "F.mse_loss"
    assert names.builtin_spelling(FUNCTIONS["jacobian"]).text == "autograd.functional.jacobian"
    assert names.builtin_spelling(FUNCTIONS["manual_seed"]).text == "torch.manual_seed"
    assert names.builtin_spelling(FUNCTIONS["range"]).text == "range"
    assert names.label_import("F") == "import torch.nn.functional as F"
    assert names.label_import("torch") == "import torch"


def test_every_statement_has_a_translation() -> None:
    assert set(STATEMENT_RECORDS.values()) <= set(TRANSLATIONS)
