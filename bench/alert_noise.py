"""How close a healthy landscape's noise comes to the cause alerts' thresholds, per engine.

The live exporter's engine decides what Prometheus sees second by second; a healthy
landscape must not fire a cause alert. This samples the model as a 15 s scrape would and
computes, per instance, the dialog means the alerts read (alerts/recording.rules.yml:
increase of the seconds over increase of the steps, over 1 and 5 minutes), sliding by one
scrape, for both engines in the same run, and prints each mean's maximum over all full
windows beside the threshold it is judged by (alerts/thresholds.yml; the critical 1-minute
rules fire at a multiple of it, exporters/vocabulary.py). The 1-minute means are the noisy
ones.

    .venv/bin/python bench/alert_noise.py [--minutes 25] [--seed 1] [--scenario ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from alerts.thresholds import load_thresholds
from landscape_model.engines import ENGINES, make_simulation
from landscape_model.terms import COMPONENTS, TASK_TYPES

SCRAPE_S = 15
DIALOG = TASK_TYPES.index("dialog")
# Component -> the threshold (alerts/thresholds.yml) its alert judges a dialog mean by.
JUDGED = {
    "db_request": "db_request_seconds",
    "dispatcher_wait": "dispatcher_wait_seconds",
    "enqueue": "enqueue_seconds",
}


def scrape(engine: str, scenario: str, seed: int, minutes: int) -> tuple[np.ndarray, ...]:
    """Per scrape: dialog steps [instance] and seconds [instance, component]; CPU used."""
    sim = make_simulation(engine, scenario, seed=seed)
    steps, seconds = [], []
    cpu = time.process_time()
    for second in range(minutes * 60 + 1):
        if second % SCRAPE_S == 0:
            t = sim.snapshot().totals
            steps.append(t.steps[:, DIALOG].sum(axis=-1))
            seconds.append(t.seconds[:, DIALOG].sum(axis=-2))
        sim.step()
    return np.array(steps), np.array(seconds), time.process_time() - cpu


def window_means(steps: np.ndarray, seconds: np.ndarray, window_s: int) -> np.ndarray:
    """Every full window's mean per dialog step: [window, instance, component]."""
    k = window_s // SCRAPE_S
    dn = steps[k:] - steps[:-k]
    ds = seconds[k:] - seconds[:-k]
    return ds / np.maximum(dn, 1)[..., None]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="sd-benchmark-2003")
    ap.add_argument("--minutes", type=int, default=25)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    limits = load_thresholds()
    print(f"{args.scenario}, healthy, {args.minutes} simulated min, seed {args.seed}")
    for engine in ENGINES:
        steps, seconds, cpu = scrape(engine, args.scenario, args.seed, args.minutes)
        print(f"{engine}: {cpu:.1f} s CPU")
        for window_s in (60, 300):
            means = window_means(steps, seconds, window_s)
            for component, key in JUDGED.items():
                m = means[..., COMPONENTS.index(component)] * 1000
                per_instance = m.max(axis=0)
                print(
                    f"  {window_s // 60}-min {component:16s} max {m.max():7.1f} ms "
                    f"(per instance {per_instance.min():.1f}-{per_instance.max():.1f}, "
                    f"median window {np.median(m):.1f}; threshold "
                    f"{getattr(limits, key) * 1000:.0f} ms, {len(m)} windows)"
                )


if __name__ == "__main__":
    main()
