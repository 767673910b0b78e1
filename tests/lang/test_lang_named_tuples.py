"""PyTorch's named tuples in the language (`torch.return_types.max` and the rest): printed as PyTorch prints
them, their fields read by name (`max(x, 1).values`), unpacked as tuples, and an unknown field named in words."""

from __future__ import annotations

import pytest
import torch
from gclang_testing import out, run

SOURCE = "x = tensor([[1., 5., 2.], [3., 2., 0.5]]) requires_grad\n"
CASES = {  # the language's call -> the same call on PyTorch's x
    "max(x, 1)": lambda x: torch.max(x, 1),
    "x.min(0)": lambda x: x.min(0),
    "sort(x, 1)": lambda x: torch.sort(x, 1),
    "x.topk(2)": lambda x: x.topk(2),
    "median(x, 1)": lambda x: torch.median(x, 1),
    "kthvalue(x, 2)": lambda x: torch.kthvalue(x, 2),
    "mode(x, 0)": lambda x: torch.mode(x, 0),
    "cummax(x, 1)": lambda x: torch.cummax(x, 1),
    "aminmax(x, dim=0)": lambda x: torch.aminmax(x, dim=0),
    "slogdet(x[:, :2])": lambda x: torch.slogdet(x[:, :2]),
}


@pytest.fixture
def torch_x() -> torch.Tensor:
    torch.set_default_dtype(torch.float64)
    return torch.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 0.5]], requires_grad=True)


@pytest.mark.parametrize("call", sorted(CASES))
def test_printed_and_read_as_pytorch(call: str, torch_x: torch.Tensor) -> None:
    theirs = CASES[call](torch_x)
    assert out(SOURCE + call + "\n") == repr(theirs) + "\n"
    for field in type(theirs).__match_args__:
        assert out(SOURCE + f"({call}).{field}\n") == repr(getattr(theirs, field)) + "\n"
    first, second = theirs[0], theirs[1]
    assert out(SOURCE + f"a, b = {call}\na\nb\n") == f"{first!r}\n{second!r}\n"


def test_an_unknown_field_is_named_in_words() -> None:
    result = run(SOURCE + "max(x, 1).value\n")
    assert "a torch.return_types.max has no attribute 'value' (it has .values, .indices)" in result.err
