"""`explain`: what autograd did and why, in the workspace's names and the program's lines (LANGUAGE.md §7).

- `told`: the one output protocol of everything `explain` and `graph` tell (styled text, JSON objects);
- `style`: how the text looks (values as PyTorch prints them, colour in the REPL and the kernel);
- `where`: where a statement is (`line 4`), the one function every phrase naming a statement goes through;
- `narrate`: `explain backward ...` and `explain grad(...)`: one step per node the engine runs;
- `why_grad`: `explain T.grad`: why it is None, or which calls made it;
- `rebound`: the leaf a name lost to `w = w - lr * w.grad` (noted by the assignment; told by `explain T.grad`,
  the language's non-leaf `.grad` warning and the error that follows from the None);
- `long_errors`: bare `explain`: the last error in full, its culprits named;
- `report`: an explanation in words (`explain T.grad`, bare `explain`) as a `Told`.

The workspace names of tensors and nodes are `gradcalc.lang.tell.names`; `graph` (`gradcalc.lang.tell.graph`) tells
through the same protocol. The statement itself (record and compile function) is
`gradcalc.lang.statements.explain`. Everything of the engine is read through `gradcalc.autograd.inspection`.
"""
