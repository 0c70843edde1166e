"""Compile the discrete-event loop ahead of its first run: `python -m landscape_model.compile_des`.

`make install` runs this, so the first `wlmon up`, `wlmon exporter` or integration fixture
of a fresh clone loads the loop's machine code (about 0.5 s) instead of compiling it
(7-8 s of CPU, more on a loaded machine) inside a readiness timeout. It runs the engine
for a few simulated seconds of the SD benchmark, which calls every function Python calls
with the argument types every run uses; numba writes them to its cache (des_loop.py's
docstring: the `__pycache__` beside des_loop.py, or numba's per-user cache directory when
that one is not writable). Idempotent: a second call finds them cached and only loads
them. Exit 1 when a function the engine calls was not compiled (the list below no longer
matching des_loop) or numba could not write its cache.
"""

from __future__ import annotations

import os
import sys
import time

from landscape_model import des_loop
from landscape_model.engines import make_simulation

# The loop's functions Python calls (des.py, des_draws.py); the others are compiled into
# these as their callees.
CALLED_FROM_PYTHON = ("advance", "push_events", "work_done", "count_records", "binomial", "poisson")


def main() -> int:
    cpu, wall = time.process_time(), time.monotonic()
    sim = make_simulation("des", "sd-benchmark-2003", seed=1)
    for _ in range(3):
        sim.step()
    sim.snapshot()
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    kernels = {name: getattr(des_loop, name) for name in CALLED_FROM_PYTHON}
    missing = [name for name, f in kernels.items() if not getattr(f, "signatures", None)]
    if missing:
        print(f"error: des_loop: not compiled by a run: {', '.join(missing)}", file=sys.stderr)
        return 1
    # numba counts, per signature, a load from its cache (hit) or a compile (miss), and
    # saves what it compiles; a miss that left no index file means it could not save.
    misses = sum(sum(f.stats.cache_misses.values()) for f in kernels.values())
    where = kernels["advance"]._cache._cache_path
    unsaved = [
        n for n, f in kernels.items() if not os.path.exists(f._cache._cache_file._index_path)
    ]
    if unsaved:
        print(f"error: des_loop: numba did not cache {', '.join(unsaved)}", file=sys.stderr)
        return 1
    what = "compiled into" if misses else "loaded from"
    print(f"discrete-event loop {what} {where} ({cpu:.1f} s CPU, {wall:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
