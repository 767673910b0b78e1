"""Completion after a namespace's dot in the REPL: `nn.Li`+Tab, `torch.nn.functio`+Tab, `G.softp`+Tab (an
imported alias) complete PyTorch's spellings (LANGUAGE.md section 5), typed into the real REPL (prompt_toolkit
on a pipe)."""

from __future__ import annotations

from collections.abc import Callable

from typing_keys import later


def test_tab_completes_a_namespace_member(drive_repl: Callable) -> None:
    run = drive_repl("nn.Li", during=later(
        "\t", "(1, 1).out_features\r",  # the only member of nn that starts so: Linear
        "torch.nn.functio", "\t", ".rel", "\t", "(-2)\r",  # torch.nn.functional, then its relu
        "import torch.nn.functional as G\r", "G.silu(0) + G.softp", "\t", "(0)\r", "\x04", pause=1.0))
    assert run.err == ""
    # nn.Linear(1, 1).out_features; torch.nn.functional.relu(-2); silu(0) + softplus(0) = 0 + log 2
    assert run.out.split() == ["1", "tensor(0.)", "tensor(0.6931)"]
