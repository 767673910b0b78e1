"""The top of an exported PyTorch script: its imports, float64 as the default dtype (the language's numbers are
float64), and the small printing helper that prints values as gradcalc does (LANGUAGE.md §1: PyTorch's repr,
shapes as tuples, dtypes and grad_fn nodes by name) -- each helper only when the script uses it."""

from __future__ import annotations

REPR = '''\
def _repr(v):
    """A value as gradcalc prints it: PyTorch's repr, with shapes as tuples and dtypes, nodes by name."""
    if isinstance(v, torch.Tensor):
        return repr(v).replace("dtype=torch.", "dtype=")
    if isinstance(v, torch.Size):
        return repr(tuple(v))
    if isinstance(v, tuple):
        return "(" + ", ".join(map(_repr, v)) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(map(_repr, v)) + "]"
    if isinstance(v, torch.dtype):
        return str(v).removeprefix("torch.")
    if hasattr(v, "next_functions"):  # a grad_fn node
        return f"<{v.name()}>"
    if type(v).__name__ == "module":
        return f"<module {v.__name__!r}>"
    if callable(v) and not isinstance(v, torch.nn.Module) and hasattr(v, "__name__"):
        own = getattr(v, "__module__", None) == __name__  # a def of this script
        return f"<function {v.__name__}>" if own else f"<built-in function {v.__name__}>"
    return repr(v)
'''

SHOW = '''\
def _show(v, call=False):
    """An expression statement: prints its value (a call's None prints nothing), which becomes _ and ans."""
    if v is None and call:
        return
    print(_repr(v))
    if v is not None:
        globals()["_"] = globals()["ans"] = v
'''

PRINT = '''\
def _print(*values):
    """gradcalc's print: the values separated by spaces, strings as they are."""
    print(*(v if isinstance(v, str) else _repr(v) for v in values))
'''

KEEP = '''\
def _keep(v):
    """What `explain T.grad` leaves behind: T.grad becomes _ and ans (unless it is None); it prints nothing."""
    if v is not None:
        globals()["_"] = globals()["ans"] = v
'''

HELPERS = {"_repr": REPR, "_show": SHOW, "_print": PRINT, "_keep": KEEP}
NEEDS = {"_show": ("_repr",), "_print": ("_repr",)}


def prelude(imports: list[str], helpers: set[str], title: str) -> list[str]:
    """The script's first lines: `title` as a comment, the imports, the default dtype, the helpers used."""
    wanted = set(helpers)
    for h in helpers:
        wanted.update(NEEDS.get(h, ()))
    lines = [f"# {line}".rstrip() for line in title.splitlines()]
    lines += imports
    lines += ["", "torch.set_default_dtype(torch.float64)  # gradcalc's numbers are float64"]
    for name in ("_repr", "_show", "_print", "_keep"):
        if name in wanted:
            lines += ["", ""] + HELPERS[name].rstrip("\n").splitlines()
    return lines + ["", ""]
