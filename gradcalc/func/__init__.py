"""`gradcalc.func`: PyTorch's `torch.func` function transforms on gradcalc's engine.

`grad`, `grad_and_value`, `vjp`, `jvp`, `linearize`, `jacrev`, `jacfwd`, `hessian` (see _transforms.py),
`vmap` (see _vmap.py), `functional_call` and `stack_module_state` (_call.py). They compose: `vmap(grad(f))`,
`jacfwd(jacrev(f))`, ...
"""

from __future__ import annotations

from ._call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize",
           "stack_module_state", "vjp", "vmap"]
