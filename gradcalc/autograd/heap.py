"""Keeping freed memory in the process between training steps (glibc's malloc only).

A training step allocates and frees MBs of arrays (activations, gradients, a convolution's columns), many of
them larger than glibc's mmap threshold: glibc hands each out by mmap and unmaps it at free, or, once its
threshold has adapted, trims the top of the heap back to the system when the backward pass frees the graph's
arrays all at once. Either way the next step takes every page again from the kernel, one page fault each:
about 5,000 a step, 10 ms, on the tutorial's CNN (more than a third of what PyTorch takes for the whole step);
1,500 a step, 2 ms of 10, on a 784-512-512-10 MLP in float32 (NumPy by hand, freeing as it goes, takes 200).

`keep_freed_memory()` raises both thresholds once, with `mallopt`: arrays up to 32 MB (glibc's own ceiling for
its adaptive threshold) come from the heap, and up to 64 MB of freed heap stays in the process for the next
step. That is the price: a process that trains may keep up to 64 MB more than it uses. It is called by the
first backward pass and the first convolution, not at import, so that a program that only computes values is
untouched. Elsewhere (not glibc: macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import sys

MMAP_THRESHOLD = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit, the largest it accepts
TRIM_THRESHOLD = 64 * 2**20  # more than the freed memory of one step of the tutorial's CNN (48 MB is not)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # malloc.h

# whether keep_freed_memory() has run: callers on hot paths test it before calling
KEPT = [False]


def keep_freed_memory() -> None:
    """Once per process: ask glibc's malloc to serve arrays up to 32 MB from its heap and keep up to 64 MB of
    freed heap, rather than returning memory that the next step takes back with page faults."""
    if KEPT[0]:
        return
    KEPT[0] = True
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here, not at the top: off the start-up path (only a process with convolutions loads it)

    try:
        libc = ctypes.CDLL("libc.so.6")
        if not hasattr(libc, "gnu_get_libc_version"):  # another libc under that name: leave it alone
            return
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    except (OSError, AttributeError):  # no glibc (musl's libc has another name and no mallopt)
        return
