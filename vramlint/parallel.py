"""Whether work can be spread over the machine's cores by forked workers (the scan's pool of files, the pieces
of a large stream), and the flag a worker sets so that it forks none of its own.

A worker is forked: it starts with this process's state (the documents read, the tables and rules loaded) and
imports nothing again. What it makes comes back pickled. A step that cannot run in workers (one core, other
threads running, no fork, a worker that dies) runs in this process instead, with the same result.

Not spread: KServe's join of thousands of InferenceServices. Measured at 11,000 (a 5 MB stream) it saved 0.65 of
2.4 s while the worker, forked from a process holding every document, peaked 52 MB above the whole serial run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

MAX_WORKERS = 8
IN_WORKER = [False]  # in a forked worker: it forks no workers of its own


def cores() -> int:
    """The cores this process may run on (1 when workers cannot be forked: in a worker, with other threads
    running, whose held locks a fork would copy, or on a system without fork)."""
    if IN_WORKER[0] or not hasattr(os, "fork"):
        return 1
    import threading

    if threading.active_count() > 1:
        return 1
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    return max(1, min(count, MAX_WORKERS))


# What the workers of `shared_out` compute: set before the fork, read by each worker as its own copy
_SHARED_OUT: list[Any] = []


def shared_out(function: Callable[[Any], Any], items: list[Any], least: int = 2) -> list[Any]:
    """``[function(item) for item in items]``, the items dealt out in turn to this process and to forked workers
    (one a core) that compute at the same time: items that each take milliseconds (a GPU requirement is a budget
    on every catalog GPU) and are independent of one another. The items and ``function`` are not pickled (the
    workers are forked with them); the results are, and must be picklable. Computed here alone when fewer than
    ``least`` items or one core, and when the workers cannot run (no fork, a worker that dies): the same results.
    ``function`` must not raise (a worker's exception would be lost): it returns what says the failure."""
    workers = cores() if len(items) >= least else 1
    if workers <= 1:
        return [function(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    shares = [items[k::workers] for k in range(workers)]
    _SHARED_OUT[:] = [function, shares]
    try:
        with ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            later = [pool.submit(_shared_out_job, k) for k in range(1, workers)]
            parts = [[function(item) for item in shares[0]]] + [job.result() for job in later]
    except Exception:  # noqa: BLE001 - a pool that cannot run: computed here, as with one core
        return [function(item) for item in items]
    finally:
        _SHARED_OUT.clear()
    out: list[Any] = [None] * len(items)
    for k, part in enumerate(parts):
        out[k::workers] = part
    return out


def _shared_out_job(k: int) -> list[Any]:
    IN_WORKER[0] = True
    function, shares = _SHARED_OUT
    return [function(item) for item in shares[k]]
