"""A running server whose rendered configuration changed is reloaded, and what it runs is
checked against what was rendered (issue 38 item 4).

Before, a `wlmon up` with a new watchdog URL rewrote alertmanager.yml and left the running
Alertmanager on the old one. Now every service's record holds a fingerprint of what it was
started with (argv, environment, its rendered config folder); `up` compares:
- Alertmanager: POST /-/reload (behind its basic auth; answers 500 naming a bad config);
- Prometheus: SIGHUP (its /-/reload needs --web.enable-lifecycle, which would let anyone on
  the host stop it: services.yml), then its reload-success metric;
- the others, which read their config only at start: restarted.
Then the loaded configuration is compared with the rendered file, whatever happened:
Alertmanager's /api/v2/status config.original and Prometheus's /api/v1/status/config (both
re-serialised: defaults added, secrets masked) must hold every value of the file. A
difference is an error naming the server and the first differing key.
"""

from __future__ import annotations

import hashlib
import json
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml

from exporters.durations import parse_duration

# Servers that reload in place; every other changed service is restarted.
RELOADABLE = ("alertmanager", "prometheus")
RELOAD_TIMEOUT_S = 20.0


class ReloadError(RuntimeError):
    """The running configuration is not the rendered one; the message says where."""


def fingerprint(argv: list[str], env: dict[str, str], config_dir: Path) -> str:
    """What a service was started with, as one digest (secrets in env go in hashed only)."""
    h = hashlib.sha256(json.dumps([argv, sorted(env.items())]).encode())
    if config_dir.is_dir():
        for path in sorted(p for p in config_dir.rglob("*") if p.is_file()):
            h.update(str(path.relative_to(config_dir)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def reload_alertmanager(url: str, auth: tuple[str, str]) -> None:
    r = httpx.post(f"{url}/-/reload", auth=auth, timeout=30)
    if r.status_code != 200:
        raise ReloadError(f"alertmanager: /-/reload answered {r.status_code}: {r.text.strip()}")


def _metric(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def reload_prometheus(pid: int, url: str) -> None:
    """SIGHUP, then wait for a successful reload newer than the signal."""
    sent = time.time()
    psutil.Process(pid).send_signal(signal.SIGHUP)
    deadline = time.monotonic() + RELOAD_TIMEOUT_S
    while time.monotonic() < deadline:
        with_text = httpx.get(f"{url}/metrics", timeout=10).text
        ok = _metric(with_text, "prometheus_config_last_reload_successful")
        at = _metric(with_text, "prometheus_config_last_reload_success_timestamp_seconds")
        if ok == 0:
            raise ReloadError(
                "prometheus: the reload failed (prometheus_config_last_reload_successful 0); "
                "its log says why"
            )
        if at is not None and at >= int(sent):
            return
        time.sleep(0.25)
    raise ReloadError(f"prometheus: no reload within {RELOAD_TIMEOUT_S:.0f} s of SIGHUP")


def verify_alertmanager(url: str, auth: tuple[str, str], rendered: Path) -> None:
    r = httpx.get(f"{url}/api/v2/status", auth=auth, timeout=10)
    r.raise_for_status()
    # Re-serialised by Alertmanager (defaults added, secrets as <secret>): value by value.
    loaded = yaml.safe_load(r.json()["config"]["original"])
    first = _first_difference(loaded, yaml.safe_load(rendered.read_text()), subset=True)
    if first is not None:
        raise ReloadError(
            f"alertmanager: runs another configuration than {rendered} (first difference at "
            f"{first}); its log says why the reload did not take"
        )


def verify_prometheus(url: str, rendered: Path) -> None:
    r = httpx.get(f"{url}/api/v1/status/config", timeout=10)
    r.raise_for_status()
    loaded = yaml.safe_load(r.json()["data"]["yaml"])
    missing = _first_difference(loaded, yaml.safe_load(rendered.read_text()), subset=True)
    if missing is not None:
        raise ReloadError(
            f"prometheus: runs another configuration than {rendered} (first difference at "
            f"{missing}); its log says why the reload did not take"
        )


def _same_scalar(loaded: Any, rendered: Any) -> bool:
    if loaded == rendered or loaded == "<secret>":
        return True
    if isinstance(loaded, str) and isinstance(rendered, str):
        try:  # Prometheus writes 60s back as 1m
            return parse_duration(loaded, allow_zero=True) == parse_duration(
                rendered, allow_zero=True
            )
        except ValueError:
            return False
    return False


def _first_difference(loaded: Any, rendered: Any, subset: bool = False, at: str = "") -> str | None:
    """The path of the first value of `rendered` that `loaded` does not hold (None: same).
    subset: `loaded` may hold more keys (Prometheus adds its defaults)."""
    if isinstance(rendered, dict):
        if not isinstance(loaded, dict):
            return at or "/"
        if not subset and set(loaded) != set(rendered):
            return f"{at}/{sorted(set(loaded) ^ set(rendered))[0]}"
        for key, value in rendered.items():
            if key not in loaded:
                # Written back without its empty values (Go's omitempty): '', null, [], false.
                if subset and value in (None, "", [], {}, False):
                    continue
                return f"{at}/{key}"
            found = _first_difference(loaded[key], value, subset, f"{at}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(rendered, list):
        if not isinstance(loaded, list) or len(loaded) != len(rendered):
            return at or "/"
        for i, (a, b) in enumerate(zip(loaded, rendered, strict=True)):
            found = _first_difference(a, b, subset, f"{at}[{i}]")
            if found is not None:
                return found
        return None
    return None if _same_scalar(loaded, rendered) else (at or "/")
