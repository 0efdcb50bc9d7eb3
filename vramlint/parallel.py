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
