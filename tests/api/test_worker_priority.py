"""The import workers yield the CPU to the API's event loop (issue 38 item 7): nice 19 and,
where Linux offers it, the SCHED_IDLE class, seen from the worker process itself."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from api.services import workers


def _scheduling() -> tuple[int, int]:
    return os.sched_getscheduler(0), os.nice(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE is Linux's")
def test_a_worker_runs_at_the_lowest_class_and_nice_19() -> None:
    with ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=workers._init_worker,
        initargs=(os.getpid(),),
    ) as pool:
        policy, nice = pool.submit(_scheduling).result(timeout=60)
    assert policy == os.SCHED_IDLE
    assert nice == 19
    # The API's own process keeps its class.
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
