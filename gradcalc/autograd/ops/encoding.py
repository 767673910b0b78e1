"""`one_hot`: class indices as rows of zeros with a one at the index (nn.functional's; no gradient flows through
integers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import spec
from ..reasons import worded
from ..tensor import Tensor


def _one_hot_rule(args: tuple, dims: tuple, *rest: Any, **params: Any) -> tuple[Any, Any]:
    """one_hot adds a last dim: the batch dim stays where it is; the number of classes must be given (it would
    otherwise depend on every sample), as PyTorch's vmap demands."""
    from .. import batching as B  # vmap only: batching.py stays off the start-up path

    (x, *more), (d, *_) = args, dims
    given = dict(zip(("num_classes",), (*more, *rest), strict=False))
    given.update(params)
    if given.get("num_classes", -1) <= 0:
        raise RuntimeError("When vmap-ing torch.nn.functional.one_hot, please provide an explicit positive "
                           "num_classes argument.")
    return B.bind("one_hot", x, given["num_classes"]), d


@spec.op("one_hot", method=False, top_level=False, vmap=_one_hot_rule,
         sample=spec.Sample(((3, 4),), lambda L, a: L.nn.functional.one_hot(a.argmax(1), 4) * a
                            + L.nn.functional.one_hot(L.tensor([0, 3, 1]))))
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Each class index of an int64 tensor as a row of num_classes int64 values, all 0 but a 1 at the index
    (num_classes=-1: one more than the largest index)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    x = tensor._data
    if x.dtype != np.int64:
        raise worded("one_hot is only applicable to index tensor of type LongTensor.",
                     f"one_hot needs class indices as an int64 tensor, not {x.dtype}: convert them with .long()")
    n = int(num_classes)
    if x.size == 0:
        if n <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return Tensor._make(np.zeros(x.shape + (n,), dtype=np.int64), False, None)
    if x.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if n == -1:
        n = int(x.max()) + 1
    elif x.max() >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(x.shape + (n,), dtype=np.int64)
    np.put_along_axis(out, x[..., None], 1, axis=-1)
    return Tensor._make(out, False, None)
