"""Reusing arrays nobody else holds, as NumPy's own temporary elision does.

A forward operator may write its result into a dying temporary operand (`ops/core.dying`), and the
backward walk may add a gradient into a buffer's array in place (`engine._sum`), when CPython's reference
count proves that nothing else holds the array. The counts are those of the CPython this was measured on
(3.11, the project's); other versions count stack references differently (3.14 borrows them), so there
the reuse is simply off: results are the same, only memory and time differ.
"""

from __future__ import annotations

import sys

REUSE_TEMPORARIES = sys.version_info[:2] == (3, 11)
# Below this many elements a new array costs less than proving that an old one may be reused.
REUSE_MIN_SIZE = 1024
