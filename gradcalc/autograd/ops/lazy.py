"""Operation families loaded when first used, so that `import gradcalc` (and the language's cold start) does not
pay for what most programs never call: convolutions, pooling, normalization, losses, einsum, scatters.

Each family's names are known before its module is: `INDEX` lists, per module, the names its operations' specs
install as `gradcalc.<name>` and as `Tensor.<name>` (in-place forms included). ops/__init__.py puts a
`Deferred` under each of them; the first use of one (a call, an attribute of it, `inspect.signature`) imports the
module, whose specs install the real functions over every `Deferred` of the family (spec.listen), and then goes
on as if they had been there. Listing them (`dir`, completion, the language's built-ins) loads nothing.

`INDEX` is derived from the specs, not written by hand: `main()` rewrites it, and tests/engine/test_lazy.py fails,
saying so, when it differs from what the modules register. A family may also add names outside its specs (a
`FUNCTIONS`, `METHODS` or `PROPERTIES` table, as the families loaded at start-up do): INDEX lists them too, and
they are installed when the first use of one of the family's names loads it (`TABLES`, which ops/__init__.py
hands down; importing the module by itself installs only its specs' names).

The tables of the modules loaded at start-up (`STARTED`) have Deferreds too, but for Tensor's operators and
properties: each name is wrapped and installed at its first use (its module is loaded already).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, MutableMapping
from typing import Any

from ..tensor import Tensor

DEFERRED = (
    "conv", "pooling", "normalization", "batch_norm", "dropout", "embedding", "losses", "smooth_losses",
    "classification", "divergence", "einsum", "inverses", "scatter", "rearrange", "cumulative", "encoding",
    "pointwise", "smooth_activations", "products", "decompositions", "special", "statistics", "quantiles",
    "selection", "scatter_reduce", "blocks", "integrals", "counting", "scaled_products", "activations", "softmax",
    "joins", "reorder", "linalg", "nn", "predicates", "trigonometric", "rounding", "logarithms",
    "elementwise", "reductions", "random", "indexing", "inplace", "slicing",
)

# ops/__init__.py's `install_tables`, handed down when it loads: installs a module's tables, or one of their names
TABLES: Callable[..., None] | None = None
# the modules loaded at start-up, whose tables' names are Deferreds too until each is first used (ops/__init__.py)
STARTED: tuple[str, ...] = ()

# module -> (its `gradcalc.<name>` functions, its `Tensor.<name>` methods), written by `main()` below
INDEX: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    'conv': (
        ('constant_pad_nd', 'conv1d', 'conv2d', 'conv_transpose1d', 'conv_transpose2d', 'convolution'),
        (),
    ),
    'pooling': (
        ('adaptive_avg_pool1d', 'avg_pool1d', 'max_pool1d', 'max_pool2d'),
        (),
    ),
    'normalization': (
        ('layer_norm',),
        (),
    ),
    'batch_norm': (
        (),
        (),
    ),
    'dropout': (
        ('feature_dropout', 'native_dropout'),
        (),
    ),
    'embedding': (
        (),
        (),
    ),
    'losses': (
        ('binary_cross_entropy_with_logits',),
        (),
    ),
    'smooth_losses': (
        (),
        (),
    ),
    'classification': (
        (),
        (),
    ),
    'divergence': (
        ('xlogy',),
        ('xlogy', 'xlogy_'),
    ),
    'einsum': (
        ('diagonal', 'einsum'),
        ('diagonal',),
    ),
    'inverses': (
        ('det', 'inverse'),
        ('det', 'inverse'),
    ),
    'scatter': (
        ('gather', 'index_select', 'masked_fill', 'scatter', 'scatter_add', 'take'),
        ('gather', 'index_select', 'masked_fill', 'masked_fill_', 'scatter', 'scatter_', 'scatter_add', 'scatter_add_',
         'take'),
    ),
    'rearrange': (
        ('broadcast_to', 'flip', 'fliplr', 'flipud', 'hstack', 'meshgrid', 'repeat_interleave', 'roll', 'tile', 'trace',
         'tril', 'triu', 'vstack'),
        ('broadcast_to', 'flip', 'fliplr', 'flipud', 'repeat', 'repeat_interleave', 'roll', 'tile', 'trace', 'tril',
         'tril_', 'triu', 'triu_'),
    ),
    'cumulative': (
        ('cummax', 'cummin', 'cumprod', 'cumsum', 'diff', 'logcumsumexp'),
        ('cummax', 'cummin', 'cumprod', 'cumprod_', 'cumsum', 'cumsum_', 'diff', 'logcumsumexp'),
    ),
    'encoding': (
        (),
        (),
    ),
    'pointwise': (
        ('addcdiv', 'addcmul', 'arctan2', 'atan2', 'fmod', 'heaviside', 'hypot', 'lerp', 'logaddexp'),
        ('addcdiv', 'addcdiv_', 'addcmul', 'addcmul_', 'arctan2', 'atan2', 'atan2_', 'fmod', 'fmod_', 'heaviside',
         'heaviside_', 'hypot', 'hypot_', 'lerp', 'lerp_', 'logaddexp'),
    ),
    'smooth_activations': (
        (),
        (),
    ),
    'products': (
        ('cdist', 'cross', 'dist', 'inner', 'kron', 'matrix_power', 'tensordot', 'vdot'),
        ('cross', 'dist', 'inner', 'kron', 'matrix_power', 'vdot'),
    ),
    'decompositions': (
        ('logdet', 'slogdet'),
        ('logdet', 'slogdet'),
    ),
    'special': (
        ('copysign', 'deg2rad', 'digamma', 'erf', 'erfinv', 'float_power', 'i0', 'lgamma', 'logit', 'polygamma',
         'rad2deg', 'signbit', 'sinc', 'true_divide'),
        ('copysign', 'copysign_', 'deg2rad', 'deg2rad_', 'digamma', 'digamma_', 'erf', 'erf_', 'erfinv', 'erfinv_',
         'float_power', 'float_power_', 'i0', 'i0_', 'lgamma', 'lgamma_', 'logit', 'logit_', 'polygamma', 'polygamma_',
         'rad2deg', 'rad2deg_', 'signbit', 'sinc', 'sinc_', 'true_divide', 'true_divide_'),
    ),
    'statistics': (
        ('aminmax', 'count_nonzero', 'kthvalue', 'median', 'mode', 'nanmean', 'nansum', 'std_mean', 'var_mean'),
        ('aminmax', 'count_nonzero', 'kthvalue', 'median', 'mode', 'nanmean', 'nansum'),
    ),
    'quantiles': (
        ('nanquantile', 'quantile'),
        ('nanquantile', 'quantile'),
    ),
    'selection': (
        ('index_put', 'masked_select', 'put', 'take_along_dim'),
        ('index_put', 'index_put_', 'masked_select', 'put', 'put_', 'take_along_dim'),
    ),
    'scatter_reduce': (
        ('scatter_reduce',),
        ('scatter_reduce', 'scatter_reduce_'),
    ),
    'blocks': (
        ('block_diag', 'cartesian_prod', 'rot90', 'unflatten', 'vander'),
        ('rot90', 'unflatten'),
    ),
    'integrals': (
        ('cumulative_trapezoid', 'trapezoid', 'trapz'),
        (),
    ),
    'counting': (
        ('bincount', 'bucketize', 'histc', 'searchsorted', 'unique', 'unique_consecutive'),
        ('bincount', 'histc', 'unique', 'unique_consecutive'),
    ),
    'scaled_products': (
        ('addbmm', 'addmv', 'addr', 'baddbmm'),
        ('addbmm', 'addmv', 'addr', 'baddbmm'),
    ),
    'activations': (
        ('relu', 'selu'),
        ('relu', 'relu_'),
    ),
    'softmax': (
        ('log_softmax', 'logsumexp', 'softmax'),
        ('log_softmax', 'logsumexp', 'softmax'),
    ),
    'joins': (
        ('cat', 'chunk', 'concat', 'concatenate', 'split', 'stack', 'unbind'),
        ('chunk', 'split', 'unbind'),
    ),
    'reorder': (
        ('argsort', 'diag', 'index_add', 'moveaxis', 'movedim', 'nonzero', 'sort', 'topk'),
        ('argsort', 'diag', 'index_add', 'index_add_', 'moveaxis', 'movedim', 'nonzero', 'sort', 'topk'),
    ),
    'linalg': (
        ('bmm', 'dot', 'ger', 'matmul', 'mm', 'mv', 'outer'),
        ('__matmul__', '__rmatmul__', 'bmm', 'dot', 'ger', 'matmul', 'mm', 'mv', 'outer'),
    ),
    'nn': (
        ('addmm',),
        ('__deepcopy__', 'addmm'),
    ),
    'predicates': (
        ('isclose', 'isfinite', 'isinf', 'isneginf', 'isposinf', 'nan_to_num'),
        ('isclose', 'isfinite', 'isinf', 'isneginf', 'isposinf', 'nan_to_num', 'nan_to_num_'),
    ),
    'trigonometric': (
        ('acos', 'asin', 'atan', 'cos', 'cosh', 'sin', 'sinh', 'tan', 'tanh'),
        ('acos', 'acos_', 'asin', 'asin_', 'atan', 'atan_', 'cos', 'cos_', 'cosh', 'cosh_', 'sin', 'sin_', 'sinh',
         'sinh_', 'tan', 'tan_', 'tanh', 'tanh_'),
    ),
    'rounding': (
        ('abs', 'ceil', 'floor', 'frac', 'round', 'sgn', 'sign', 'trunc'),
        ('abs', 'abs_', 'ceil', 'ceil_', 'floor', 'floor_', 'frac', 'frac_', 'round', 'round_', 'sgn', 'sgn_', 'sign',
         'sign_', 'trunc', 'trunc_'),
    ),
    'logarithms': (
        ('exp', 'exp2', 'expm1', 'log10', 'log1p', 'log2', 'rsqrt', 'sigmoid', 'sqrt'),
        ('exp', 'exp2', 'exp2_', 'exp_', 'expm1', 'expm1_', 'log10', 'log10_', 'log1p', 'log1p_', 'log2', 'log2_',
         'rsqrt', 'rsqrt_', 'sigmoid', 'sigmoid_', 'sqrt', 'sqrt_'),
    ),
    'elementwise': (
        ('clamp', 'clamp_max', 'clamp_min', 'clip', 'maximum', 'minimum', 'softplus', 'where'),
        ('__abs__', 'clamp', 'clamp_', 'clamp_max', 'clamp_min', 'clip', 'maximum', 'minimum', 'softplus', 'where'),
    ),
    'reductions': (
        ('amax', 'amin', 'argmax', 'argmin', 'max', 'mean', 'min', 'norm', 'prod', 'std', 'var'),
        ('amax', 'amin', 'argmax', 'argmin', 'max', 'mean', 'min', 'norm', 'prod', 'std', 'var'),
    ),
    'random': (
        ('bernoulli', 'manual_seed', 'multinomial', 'normal', 'rand', 'rand_like', 'randint', 'randint_like', 'randn',
         'randn_like', 'randperm'),
        ('bernoulli_', 'exponential_', 'normal_', 'random_', 'uniform_'),
    ),
    'indexing': (
        (),
        ('__getitem__', '__setitem__'),
    ),
    'inplace': (
        (),
        ('__iadd__', '__imul__', '__ipow__', '__isub__', '__itruediv__', 'add_', 'copy_', 'div_', 'fill_', 'mul_',
         'pow_', 'sub_', 'zero_'),
    ),
    'slicing': (
        ('narrow', 'select'),
        ('narrow', 'select'),
    ),
}


class Deferred:
    # `gradcalc.<name>` (in `table`, the functions) or `Tensor.<name>` (`table` None) while the module of its
    # operation is not loaded: it loads it at first use and stands for the real function from then on. (Its
    # `__doc__` is the real function's: a property, below, so the class keeps no docstring of its own.)

    __slots__ = ("name", "module", "table")

    def __init__(self, name: str, module: str, table: MutableMapping[str, Any] | None) -> None:
        self.name, self.module, self.table = name, module, table

    def load(self, owner: type | None = None) -> Any:
        """Import the family, and return what now stands under this name (the function, or `owner`'s method)."""
        module = importlib.import_module(_qualified(self.module))
        if TABLES is not None:
            TABLES(module, self.name, self.table is not None)
        real = self.table.get(self.name) if self.table is not None else vars(owner).get(self.name)
        if real is self or real is None:  # INDEX out of date (test_lazy.py says so): never loop
            raise AttributeError(f"module 'gradcalc' has no attribute {self.name!r}")
        return real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if self.table is not None:  # a function: not a method
            return self
        cls = owner if owner is not None else type(obj)
        for klass in cls.__mro__:  # the class that holds this Deferred (a subclass inherits it)
            if vars(klass).get(self.name) is self:
                self.load(klass)
                break
        return getattr(cls if obj is None else obj, self.name)

    def _real(self) -> Any:
        return self.load() if self.table is not None else self.load(Tensor)

    def __getattr__(self, attr: str) -> Any:  # __wrapped__ (inspect.signature), __name__...: the real one's
        if attr.startswith("__") and attr not in ("__wrapped__", "__signature__", "__name__", "__qualname__"):
            raise AttributeError(attr)
        return getattr(self._real(), attr)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]  # (`:help`, `help()`: the real function's)
        return self._real().__doc__

    def __repr__(self) -> str:
        return f"<gradcalc {self.name} (loads {_qualified(self.module)} when first used)>"


def _qualified(module: str) -> str:
    """A Deferred's module by its full name: a family's (`conv`), or one of the engine's outside the families
    (`..differentiate`, for `Tensor.backward`: the engine loads at the first backward)."""
    if module.startswith(".."):
        return f"{__package__.rpartition('.')[0]}.{module[2:]}"
    return f"{__package__}.{module}"


def install(functions: MutableMapping[str, Any], tensor: type) -> None:
    """Put a `Deferred` under each name of each family not loaded yet (ops/__init__.py, at import)."""
    own = vars(tensor)
    for module, (names, methods) in INDEX.items():
        for name in names:
            if name not in functions:
                functions[name] = Deferred(name, module, functions)
        for name in methods:
            if name not in own:
                setattr(tensor, name, Deferred(name, module, None))


def load_all() -> None:
    """Import every deferred family (what enumerates the specs themselves calls it: vmap's tables, tests)."""
    for name in (*DEFERRED, *STARTED):
        module = importlib.import_module(f"{__package__}.{name}")
        if TABLES is not None:
            TABLES(module)


def index_of(ops: Callable[[], Any]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """INDEX as the specs (and the families' tables) make it: `ops()` gives the registered OpSpecs once every
    family is loaded."""
    out: dict[str, tuple[list[str], list[str]]] = {m: ([], []) for m in DEFERRED}
    for m, (names, methods) in out.items():
        module = importlib.import_module(f"{__package__}.{m}")
        names.extend(getattr(module, "FUNCTIONS", {}))
        methods.extend(getattr(module, "METHODS", {}))
        methods.extend(getattr(module, "PROPERTIES", {}))
    for op in ops():
        module = op.raw.__module__.rpartition(".")[2]
        if module not in out:
            continue
        names, methods = out[module]
        if op.top_level:
            names.extend(op.names)
        if op.method:
            methods.extend(op.names)
        if op.inplace:
            methods.append(f"{op.name}_")
    return {m: (tuple(sorted(set(f))), tuple(sorted(set(x)))) for m, (f, x) in out.items()}


def render(index: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> str:
    """INDEX's source text (as lazy.py holds it)."""
    import textwrap  # (here, off the start-up path: only when the index is written)

    lines = ["INDEX: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {"]
    for module, groups in index.items():
        lines.append(f"    {module!r}: (")
        for group in groups:
            text = "(" + " ".join(f"{n!r}," for n in group)[: -1 if len(group) > 1 else None] + ")"
            lines.extend(textwrap.wrap(text + ",", 120, initial_indent=" " * 8, subsequent_indent=" " * 9,
                                       break_long_words=False, break_on_hyphens=False))
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines)


def main() -> None:
    """Rewrite INDEX in this file from the specs: `python -c "from gradcalc.autograd.ops.lazy import main; main()"`."""
    import pathlib  # (these two here, off the start-up path: only when the index is written)

    from .. import spec  # (start-up: as above)

    load_all()
    path = pathlib.Path(__file__)
    text = path.read_text()
    start = text.index("INDEX: dict[")
    end = text.index("\n}\n", start) + 2
    path.write_text(text[:start] + render(index_of(lambda: spec.OPS.values())) + text[end:])
