"""Work spread over the machine's cores by forked workers, for the few steps that grow with one large input.

A worker is forked: it starts with this process's state (the documents read, the tables and rules loaded) and
imports nothing again. What it makes comes back pickled. A step that cannot run in workers (one core, other
threads running, no fork, a worker that dies) runs here instead, with the same result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
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


_JOB: list[Any] = []  # (function, items, chunk bounds): set before the fork, read by the workers as their copy


def map_chunks(fn: Callable[[Sequence[Any]], list[Any]], items: Sequence[Any], min_items: int) -> list[Any] | None:
    """``fn`` of consecutive chunks of ``items`` (one per core), concatenated in order: the first chunk here, the
    others in forked workers at the same time. ``fn`` returns one result per item and must not change what the
    other chunks read. None, with nothing done, when there are fewer than ``min_items`` items or one core; None
    also when a worker failed (then ``fn`` may have run on the first chunk here: it must leave nothing behind
    but its results). The caller then runs ``fn`` on all of ``items`` itself."""
    count = min(cores(), len(items) // max(1, min_items // 2)) if len(items) >= min_items else 1
    if count < 2:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    bounds = [len(items) * k // count for k in range(count + 1)]
    _JOB[:] = [fn, items, bounds]
    try:
        # (an executor, not multiprocessing's Pool: a worker that dies, killed for its memory, fails the wait at
        # once instead of leaving it waiting for ever)
        with ProcessPoolExecutor(count - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            later = [pool.submit(_run_chunk, k) for k in range(1, count)]
            results = list(fn(items[bounds[0]:bounds[1]]))
            for job in later:
                results.extend(job.result())
    except Exception:  # noqa: BLE001 - workers that cannot run or a worker that failed: the caller runs it all
        return None
    finally:
        _JOB.clear()
    return results if len(results) == len(items) else None


def _run_chunk(k: int) -> list[Any]:
    import gc

    IN_WORKER[0] = True
    gc.disable()  # what a worker makes lives until it ends, soon after: no collection needs to walk it
    fn, items, bounds = _JOB
    return list(fn(items[bounds[k]:bounds[k + 1]]))
