"""What the commands read at the edge for the services that judge runs: the alerts'
thresholds, the API's settings and its runs database (configuration is read here and
passed down). Apart from `wlmon.cli.common` so that the commands that need none of it
(`wlmon whatif`, `simulate`) do not import pydantic-settings, httpx and the API's store
(about 0.1 s of a what-if's start)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import ValidationError

from alerts.thresholds import ThresholdsError, load_thresholds
from api.config import get_settings
from api.services.storage import is_full, refusal
from api.store import Store
from exporters.thresholds import Thresholds
from wlmon.cli.common import fail


def thresholds() -> Thresholds:
    """alerts/thresholds.yml, read here at the edge for the services that judge runs by it,
    or exit 2 naming the file and the key that is wrong."""
    try:
        return load_thresholds()
    except ThresholdsError as exc:
        fail(str(exc))


def report_options() -> dict[str, float]:
    """The reports' settings beside the thresholds (WLMON_API_APDEX_T_S when set), read here
    at the edge as the API reads them in its routes."""
    t = get_settings().apdex_t_s
    return {} if t is None else {"apdex_t_s": t}


def runs_store() -> Store:
    """The runs database the API uses (WLMON_API_DB_PATH), opened with its cap
    (WLMON_API_DB_MAX_BYTES) as the API opens it, or exit 2 naming what is wrong."""
    try:
        settings = get_settings()
        return Store(settings.db_path, settings.db_max_bytes)
    except ValidationError as exc:
        fail(f"the WLMON_API_ settings are wrong: {exc.errors()[0]['msg']}")
    except (OSError, sqlite3.Error) as exc:
        fail(f"cannot open the API's database {get_settings().db_path}: {exc}")


@contextmanager
def storing(store: Store) -> Iterator[None]:
    """A write to the runs database. Refused (its cap, a full disk, an I/O error): one line
    naming the cap and its setting, exit 2, and the refusal recorded beside the database,
    where the API's /healthz and write_failures_total see it. The write's transaction was
    rolled back: nothing of it is stored."""
    try:
        yield
    except sqlite3.Error as exc:
        fail(_refused(store, exc))
    except OSError as exc:
        if not is_full(exc):
            raise
        fail(_refused(store, exc))
    store.failures.ok()


def _refused(store: Store, exc: BaseException) -> str:
    message = refusal(store.path, store.max_bytes, exc)
    store.failures.record(message)
    return message
