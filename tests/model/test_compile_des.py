"""`python -m landscape_model.compile_des` (run by `make install`) leaves the discrete-event
loop in numba's cache, so the next process, the live exporter's, loads it."""

from __future__ import annotations

import subprocess
import sys


def _compile() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "landscape_model.compile_des"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_second_process_loads_the_loop_from_the_cache() -> None:
    first = _compile()  # compiles, or loads what `make install` compiled
    assert first.returncode == 0, first.stderr
    second = _compile()
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("discrete-event loop loaded from "), second.stdout
