"""`LBFGS`: limited-memory BFGS with an optional strong-Wolfe line search, as PyTorch's `torch.optim.LBFGS`
computes it, operation for operation (so that a float64 run follows PyTorch's iterates to rounding).

The flat gradient and directions are NumPy vectors of the parameters' dtype, and the scalars that PyTorch
keeps as 0-d tensors (`y·s`, `ro`, `H_diag`, `gtd`, the step `t` once it came from a tensor) are NumPy
scalars of that dtype: NumPy 2 promotes a Python float with them as PyTorch does with a 0-d tensor (the
tensor's dtype wins), so float32 runs round where PyTorch's do. The state keeps them as tensors, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, scalar


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: Any = None) -> Any:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to `bounds`."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[..., Any], x: Any, t: Any, d: np.ndarray, f: float, g: np.ndarray, gtd: Any,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """A step `t` along `d` meeting the strong Wolfe conditions: (loss, flat gradient, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[Any] = []
    bracket_f: list[Any] = []
    bracket_g: list[Any] = []
    bracket_gtd: list[Any] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _stored(value: Any) -> Any:
    """What the state keeps: vectors and tensor scalars as tensors (PyTorch's state holds tensors)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._make(np.array(value), False, None)
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value


def _loaded(value: Any) -> Any:
    """The working form of a stored value: a vector as its array, a 0-d tensor as a NumPy scalar."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data.copy()
    if isinstance(value, list):
        return [_loaded(v) for v in value]
    return value


class LBFGS(Optimizer):
    """L-BFGS: each `step(closure)` runs up to `max_iter` iterations (and `max_eval` evaluations of `closure`,
    which recomputes the loss and its gradients and returns the loss), with directions from the last
    `history_size` curvature pairs and steps of `lr`, or found by `line_search_fn='strong_wolfe'`. Only one
    parameter group."""

    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= scalar(lr, "lr"):
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change, "history_size": history_size, "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector -----------------------------------------------------------
    def _gather_flat_grad(self) -> np.ndarray:
        views = [np.zeros(p._data.size, dtype=p._data.dtype) if p._grad is None else p._grad._data.reshape(-1)
                 for p in self._params]
        return np.concatenate(views, 0)

    def _add_grad(self, step_size: Any, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data[...] = fma(update[offset:offset + n].reshape(p._data.shape), p._data.dtype.type(step_size),
                               p._data)
            bump(p)
            offset += n

    def _clone_param(self) -> list[np.ndarray]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data: list[np.ndarray]) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p._data[...] = data
            bump(p)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[np.ndarray], t: Any,
                              d: np.ndarray) -> tuple[float, np.ndarray]:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the step -------------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """One optimization step: up to `max_iter` iterations; returns the loss `closure` gave first."""
        if not callable(closure):
            raise TypeError("LBFGS.step() needs a closure: a function that zeroes the gradients, computes the "
                            "loss, calls loss.backward() and returns the loss")
        self._opt_called = True
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        def evaluate() -> Any:
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = scalar(group["lr"], "lr")
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _loaded(state.get("d")), _loaded(state.get("t"))
        old_dirs, old_stps = _loaded(state.get("old_dirs")), _loaded(state.get("old_stps"))
        ro, h_diag = _loaded(state.get("ro")), _loaded(state.get("H_diag"))
        prev_flat_grad, prev_loss = _loaded(state.get("prev_flat_grad")), state.get("prev_loss")
        al = _loaded(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q[...] = fma(old_dirs[i], q.dtype.type(-al[i]), q)
                d = r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r[...] = fma(old_stps[i], r.dtype.type(al[i] - be_i), r)  # in place: d is r

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: Any, t: Any, d: np.ndarray) -> tuple[float, np.ndarray]:
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update({
            "d": _stored(d), "t": _stored(t), "old_dirs": _stored(old_dirs), "old_stps": _stored(old_stps),
            "ro": _stored(ro), "H_diag": _stored(h_diag), "prev_flat_grad": _stored(prev_flat_grad),
            "prev_loss": prev_loss,
        })
        if al is not None:
            state["al"] = _stored(al)
        return orig_loss
