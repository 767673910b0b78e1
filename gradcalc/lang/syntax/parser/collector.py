"""The cyclic garbage collector while parsing: `no_gc` pauses it around a parse (both paths, and the
interpreter's compiling), which allocates many objects and frees none."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Above this many objects made inside `no_gc`, they go straight to the oldest generation (see there).
PROMOTE_AT = 50_000


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing and compiling allocate many objects and free none, and a
    collection every few hundred allocations would scan them all again (it halves parsing time).

    On the way out, when the block made many objects (a long script), they go straight to the oldest
    generation (gc.freeze, then gc.unfreeze, which moves the frozen objects there): a program lives as long
    as it runs, and left in the youngest generation its hundreds of thousands of objects would be scanned by
    the next collection of each generation in turn (a third of the time to parse and compile a long script).
    A small block (a REPL input) leaves them to the collector's usual course, whose bookkeeping decides when
    to look for cycles among old objects. Skipped if the process froze objects itself (unfreezing would thaw
    those).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_count()[0] >= PROMOTE_AT and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
