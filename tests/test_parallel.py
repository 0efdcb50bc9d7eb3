"""vramlint.parallel: workers are forked only where that is safe, and a worker forks none of its own."""

from __future__ import annotations

import threading

from vramlint import parallel


def test_no_workers_from_a_worker_or_beside_other_threads(monkeypatch):
    monkeypatch.setattr(parallel, "IN_WORKER", [True])
    assert parallel.cores() == 1
    monkeypatch.setattr(parallel, "IN_WORKER", [False])
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert parallel.cores() == 1  # a fork would copy the other thread's held locks
    finally:
        stop.set()
        thread.join()
    assert 1 <= parallel.cores() <= parallel.MAX_WORKERS
