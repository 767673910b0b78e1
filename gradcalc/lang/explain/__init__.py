"""`explain`: what autograd did and why, in the workspace's names and the program's lines (LANGUAGE.md §7).

- `names`: the workspace names of tensors and nodes (all the names bound to each);
- `style`: how the text looks (values as PyTorch prints them, colour in the REPL);
- `narrate`: `explain backward ...` and `explain grad(...)`: one step per node the engine runs;
- `why_grad`: `explain T.grad`: why it is None, or which calls made it;
- `rebound`: the leaf a name lost to `w = w - lr * w.grad` (noted by the assignment; told by `explain T.grad`,
  the language's non-leaf `.grad` warning and the error that follows from the None);
- `long_errors`: bare `explain`: the last error in full, its culprits named.

The statement itself (record and compile function) is `gradcalc.lang.statements.explain`; the engine's
side (who changed what) is `gradcalc.autograd.provenance`.
"""
