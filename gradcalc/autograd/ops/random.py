"""Random numbers: `Generator`, the random factories (`rand randn randint normal randperm bernoulli multinomial`
and their `_like` forms), the in-place fills (`Tensor.uniform_`, `normal_`, ...) and the default generator
(`manual_seed`, `seed`, `initial_seed`, `get_rng_state`, `set_rng_state`), with PyTorch's signatures.

The stream is gradcalc's own, NumPy's PCG64 generator, not PyTorch's Mersenne twister: the same seed repeats
the same draws here, but never PyTorch's draws. The distributions, dtypes, shapes and errors are PyTorch's.
Draws are made in the result's dtype (a float32 uniform is NumPy's float32 draw, not a rounded float64 one).
"""

from __future__ import annotations

import os
from _thread import allocate_lock  # what threading.Lock is (`threading` itself is kept off the start-up path)
from typing import Any

import numpy as np

from .. import spec
from ..defaults import default_float
from ..devices import CPU, check_device
from ..grad_mode import state
from ..tensor import Size, Tensor, float32, float64, int64
from .creation import _size, np_dtype

# PyTorch's default seed (`torch.initial_seed()` in a fresh process; also every new Generator's)
DEFAULT_SEED = 67280421310721
_STATE_BYTES = 8 + 16 + 16 + 1 + 4  # seed, PCG64's state and increment, its buffered 32 bits (get_state)


def _seed_value(seed: Any) -> int:
    """A seed as PyTorch takes it: anything `int()` reads, from -2**63 up to 2**64 - 1 (negative ones wrap)."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    value = int(seed)
    if not -(2**63) <= value < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return value % 2**64


class Generator:
    """A source of random numbers for the random factories' `generator=` (gradcalc's stream: NumPy's PCG64).

    `Generator().manual_seed(42)` seeds it (and returns it); `seed()` seeds it from the operating system;
    `initial_seed()` is the seed it was last given; `get_state()`/`set_state()` save and restore its place."""

    def __init__(self, device: Any = "cpu") -> None:
        check_device(device)
        self._lock = allocate_lock()
        self._numpy: Any = None  # made on first draw: importing numpy.random costs a cold start ~13 ms
        self._seed = DEFAULT_SEED

    @property
    def device(self) -> Any:
        return CPU

    def _rng(self) -> Any:
        rng = self._numpy
        if rng is None:
            rng = self._numpy = np.random.Generator(np.random.PCG64(self._seed))
        return rng

    def manual_seed(self, seed: Any) -> Generator:
        """Seed the generator (any whole number from -2**63 to 2**64 - 1); returns it."""
        value = _seed_value(seed)
        with self._lock:
            self._seed, self._numpy = value, None
        return self

    def seed(self) -> int:
        """Seed the generator from the operating system's randomness; returns the seed."""
        value = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state, as a uint8 tensor that `set_state` takes back."""
        with self._lock:
            bits = self._rng().bit_generator.state
            inner = bits["state"]
            raw = (self._seed.to_bytes(8, "little") + inner["state"].to_bytes(16, "little")
                   + inner["inc"].to_bytes(16, "little") + bytes([bits["has_uint32"]])
                   + int(bits["uinteger"]).to_bytes(4, "little"))
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy(), False, None)

    def set_state(self, new_state: Any) -> Generator:
        """Put the generator back where `get_state` found it; returns it."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._data.reshape(-1).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a gradcalc generator state of size {_STATE_BYTES} but found the input "
                               f"RNG state size to be {len(raw)}: give what get_state() returned")
        seed = int.from_bytes(raw[:8], "little")
        bits = np.random.PCG64()
        bits.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[8:24], "little"), "inc": int.from_bytes(raw[24:40], "little")},
            "has_uint32": raw[40], "uinteger": int.from_bytes(raw[41:45], "little"),
        }
        with self._lock:
            self._seed, self._numpy = seed, np.random.Generator(bits)
        return self

    def __repr__(self) -> str:
        return f"<gradcalc.Generator object at {id(self):#x}>"

    def __deepcopy__(self, memo: dict) -> Generator:
        copy = Generator()
        copy.set_state(self.get_state())
        return copy


default_generator = Generator()


def _draw(generator: Any, how: Any) -> Any:
    """`how(numpy_generator)`, under the generator's lock (the default generator when None)."""
    if state.vmap is not None:  # inside vmap: its levels' randomness= (batching.py)
        spec.RANDOM_GUARD()
    g = default_generator if generator is None else generator
    if not isinstance(g, Generator):
        raise TypeError(f"generator must be a gradcalc Generator (gradcalc.Generator()), not {type(g).__name__}")
    with g._lock:
        return how(g._rng())


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data, False, None)
    if requires_grad:
        t.requires_grad = True  # PyTorch's error for a dtype that can't require grad
    return t


def _floating(dtype: Any, name: str, like: Tensor | None = None) -> np.dtype:
    want = np_dtype(dtype) or (like._data.dtype if like is not None else default_float())
    if want not in (float32, float64):
        raise NotImplementedError(f'"{name}" not implemented for {want.name} tensors: it draws floating-point '
                                  "values (randint draws whole numbers)")
    return want


def _sizes(size: tuple, name: str) -> tuple[int, ...]:
    if not size:
        raise TypeError(f"{name}() received an invalid combination of arguments - got (), but expected one of: "
                        f"{name}(*size), {name}(size: tuple of ints)")
    if len(size) == 1 and isinstance(size[0], Size):
        size = tuple(size[0])
    return _size(size, name)


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator, which the random factories, `nn.init` and the layers' initial weights
    draw from (gradcalc's stream, not PyTorch's); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's randomness; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 tensor for `set_rng_state`)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Put the default generator back where `get_rng_state` found it."""
    default_generator.set_state(new_state)


def rand(*size: Any, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
         device: Any = None) -> Tensor:
    """Uniform random values in [0, 1), of the given size: `rand(2, 3)` or `rand((2, 3))`."""
    check_device(device)
    shape, want = _sizes(size, "rand"), _floating(dtype, "rand")
    return _leaf(_draw(generator, lambda r: r.random(shape, dtype=want)), requires_grad)


def randn(*size: Any, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
          device: Any = None) -> Tensor:
    """Random values from the standard normal distribution, of the given size."""
    check_device(device)
    shape, want = _sizes(size, "randn"), _floating(dtype, "randn")
    return _leaf(_draw(generator, lambda r: r.standard_normal(shape, dtype=want)), requires_grad)


def _integers(low: Any, high: Any, shape: tuple[int, ...], generator: Any, want: np.dtype) -> np.ndarray:
    for bound in (low, high):
        if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)):
            raise TypeError(f"randint(): the bounds must be whole numbers, not {type(bound).__name__}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _draw(generator, lambda r: r.integers(low, high, shape, dtype=np.int64)).astype(want, copy=False)


def randint(low: int = 0, high: int | tuple[int, ...] | None = None, size: tuple[int, ...] | None = None, *,
            generator: Any = None, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """Random whole numbers from `low` (0 when left out) up to but excluding `high`, of the given size (a
    tuple): `randint(10, (3,))`, `randint(2, 10, (3,))`. int64 unless `dtype` says otherwise."""
    check_device(device)
    if size is None and high is not None:  # randint(high, size)
        low, high, size = 0, low, high
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(size).__name__}")
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: randint(high, size) or randint(low, high, size)")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    low, high = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v for v in (low, high))
    want = np_dtype(dtype) or int64
    return _leaf(_integers(low, high, _size(tuple(size), "randint"), generator, want), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
           requires_grad: bool = False, device: Any = None, out: Any = None) -> Tensor:
    """Random values from normal distributions N(mean, std²). `mean` and `std` may be tensors (one
    distribution per element, broadcast together: the result has their shape and dtype) or numbers, and then
    `size` gives the shape: `normal(0., 1., (2, 3))`."""
    check_device(device)
    if size is not None:  # the (float, float, size) overload: 0-d tensors are read as numbers
        mean, std = (v.item() if isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad else v
                     for v in (mean, std))
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if ts and bool(np.any(std._data < 0)):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not ts and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_shown(std)}")
    if tm or ts:
        if size is not None:
            raise TypeError("normal(): size= is for numbers mean and std; with tensors the shape is theirs")
        parts = [t._data for t in (mean, std) if isinstance(t, Tensor)]
        try:
            shape = np.broadcast_shapes(*(p.shape for p in parts))
        except ValueError:
            raise RuntimeError(f"normal: mean of shape {tuple(np.shape(parts[0]))} and std of shape "
                               f"{tuple(np.shape(parts[-1]))} do not broadcast together") from None
        want = np.result_type(*parts) if dtype is None else np_dtype(dtype)
        m = mean._data if tm else mean
        s = std._data if ts else std
    else:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of: normal(mean: Tensor, std: Tensor), normal(mean: float, std: float, "
                            "size: tuple of ints)")
        shape = _size(tuple(size) if isinstance(size, (tuple, list)) else (size,), "normal")
        want, m, s = _floating(dtype, "normal"), mean, std
    if want not in (float32, float64):
        raise NotImplementedError(f'"normal" not implemented for {want.name} tensors')
    z = _draw(generator, lambda r: r.standard_normal(shape, dtype=want))
    return _leaf((z * np.asarray(s, dtype=want) + np.asarray(m, dtype=want)).astype(want, copy=False),
                 requires_grad)


def _shown(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def rand_like(input: Tensor, *, generator: Any = None, dtype: Any = None, requires_grad: bool = False,  # noqa: A002
              device: Any = None, memory_format: Any = None) -> Tensor:
    """Uniform random values in [0, 1) with `input`'s shape and dtype."""
    check_device(device)
    want, shape = _floating(dtype, "rand_like", input), input._data.shape
    return _leaf(_draw(generator, lambda r: r.random(shape, dtype=want)), requires_grad)


def randn_like(input: Tensor, *, generator: Any = None, dtype: Any = None,  # noqa: A002
               requires_grad: bool = False, device: Any = None, memory_format: Any = None) -> Tensor:
    """Standard normal random values with `input`'s shape and dtype."""
    check_device(device)
    want, shape = _floating(dtype, "randn_like", input), input._data.shape
    return _leaf(_draw(generator, lambda r: r.standard_normal(shape, dtype=want)), requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Any = None,  # noqa: A002
                 dtype: Any = None, requires_grad: bool = False, device: Any = None,
                 memory_format: Any = None) -> Tensor:
    """Random whole numbers in [low, high) with `input`'s shape and dtype: `randint_like(x, 10)`,
    `randint_like(x, 2, 10)`."""
    check_device(device)
    if high is None:
        low, high = 0, low
    low, high = (v.item() if isinstance(v, Tensor) else v for v in (low, high))
    want = np_dtype(dtype) or input._data.dtype
    return _leaf(_integers(low, high, input._data.shape, generator, want), requires_grad)


def randperm(n: Any, *, generator: Any = None, dtype: Any = None, requires_grad: bool = False,
             device: Any = None) -> Tensor:
    """A random permutation of 0, 1, ..., n - 1 (int64 unless `dtype` says otherwise)."""
    check_device(device)
    (count,) = _size((n,), "randperm")
    want = np_dtype(dtype) or int64
    return _leaf(_draw(generator, lambda r: r.permutation(count)).astype(want), requires_grad)


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """1 with probability `input` (each element; or with probability `p` when given), else 0, in `input`'s
    dtype. The result never requires grad."""
    probs = input._data if p is None else np.full(input._data.shape, p)
    if probs.size and not (np.all(probs >= 0) and np.all(probs <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = _draw(generator, lambda r: r.random(probs.shape))
    return Tensor._make((draws < probs).astype(input._data.dtype), False, None)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """Indices drawn from the categories whose weights are `input`'s last dimension (one row of draws per row
    of a 2-d `input`), with or without replacement: int64."""
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if w.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input")
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and n > w.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    if np.any(rows < 0) or not np.all(np.isfinite(rows)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = rows.sum(axis=1)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and np.any(np.count_nonzero(rows, axis=1) < n):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                           "category to sample)")

    def draw(r: Any) -> np.ndarray:
        return np.stack([r.choice(len(row), size=n, replace=replacement, p=row / row.sum()) for row in rows])

    out = _draw(generator, draw).astype(int64)
    return Tensor._make(out.reshape(w.shape[:-1] + (n,)), False, None)


# -- in-place fills -----------------------------------------------------------------------------------


def _fill(t: Tensor, values: np.ndarray) -> Tensor:
    """Write `values` into `t` as an in-place operation does (PyTorch's checks; the version goes up; the
    result is a constant: no gradient flows to what `t` held)."""
    return t.copy_(Tensor._make(np.asarray(values, dtype=t._data.dtype), False, None))


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with values drawn uniformly from [from_, to) (PyTorch's `from`, a word Python reserves); returns
    self."""
    a, b = from_, to
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    want = _floating(None, "uniform_", self)
    shape = self._data.shape
    return _fill(self, _draw(generator, lambda r: r.random(shape, dtype=want)) * (b - a) + a)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with values drawn from N(mean, std²); returns self."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_shown(std)}")
    want = _floating(None, "normal_", self)
    shape = self._data.shape
    return _fill(self, _draw(generator, lambda r: r.standard_normal(shape, dtype=want)) * std + mean)


def bernoulli_(self: Tensor, p: float = 0.5, *, generator: Any = None) -> Tensor:
    """Fill with 1 (probability `p`) or 0; returns self."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    shape = self._data.shape
    return _fill(self, _draw(generator, lambda r: r.random(shape)) < p)


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with values drawn from the exponential distribution of rate `lambd`; returns self."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    shape = self._data.shape
    return _fill(self, _draw(generator, lambda r: r.exponential(1.0 / lambd, shape)))


def random_(self: Tensor, from_: Any = None, to: Any = None, *, generator: Any = None) -> Tensor:
    """Fill with whole numbers from [from_, to): `random_(n)` is [0, n) (PyTorch's `from`, a word Python
    reserves); returns self."""
    low, high = (0, from_) if to is None else (from_, to)
    if high is None:
        raise RuntimeError("random_(): give the upper bound, random_(to) or random_(from, to)")
    return _fill(self, _integers(0 if low is None else low, high, self._data.shape, generator, self._data.dtype))


FUNCTIONS = {
    "rand": rand, "randn": randn, "randint": randint, "normal": normal, "rand_like": rand_like,
    "randn_like": randn_like, "randint_like": randint_like, "randperm": randperm, "bernoulli": bernoulli,
    "multinomial": multinomial, "manual_seed": manual_seed,
}
# gradcalc.<name> in Python only (the language seeds with `seed N`, and has no generator objects' state)
PYTHON_ONLY = {
    "Generator": Generator, "default_generator": default_generator, "seed": seed, "initial_seed": initial_seed,
    "get_rng_state": get_rng_state, "set_rng_state": set_rng_state,
}
METHODS = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "exponential_": exponential_,
    "random_": random_,
}
