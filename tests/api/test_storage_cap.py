"""One store, one cap (issue 38): every process that writes the runs database (the API, its
worker processes, the CLI) opens it with WLMON_API_DB_MAX_BYTES; a write past the cap or onto
a full disk is a 507 or one CLI line with exit 2 naming the limit, stores nothing of the
request, and is counted where the API's /healthz and write_failures_total see it, whichever
process met it. Before: with a 1 MiB cap, imports through the API (workers) and the CLI's
imports and fast runs were all accepted and the file grew to 5.7 MB."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.main import create_app
from api.store import Store
from tests.api.test_health import _payload
from wlmon.cli import app as cli

ROOT = Path(__file__).resolve().parents[2]
PERFMON = ROOT / "tests" / "fixtures" / "perfmon" / "relog-two-hosts.csv"
CAP = 1024 * 1024
AUTH = {"Authorization": "Bearer t"}
runner = CliRunner()


@pytest.fixture(autouse=True)
def _settings_read_afresh():
    """The CLI reads WLMON_API_* once per process (get_settings is cached): each test's
    database and cap, not the previous test's."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def fill(store: Store) -> int:
    """Notifications, then finished run rows (label 'filler'), until the database refuses
    one (its cap or the disk): full to the page in both tables; how many rows went in."""
    n = 0
    with contextlib.suppress(sqlite3.OperationalError):
        while n < 100_000:
            store.add_notifications("filler", "g", [_alert(n)])
            n += 1
    now = datetime.now(UTC)
    with contextlib.suppress(sqlite3.OperationalError):
        while n < 200_000:
            store._conn.execute(
                "INSERT INTO runs (id, kind, status, scenario, label, start, end, ramp_up_s,"
                " spec, created_at) VALUES (?, 'simulated', 'finished', 's', 'filler', ?, ?,"
                " 0, '{}', ?)",
                (f"filler{n}", now.isoformat(), now.isoformat(), now.isoformat()),
            )
            n += 1
    return n


def _alert(n: int) -> dict:
    alert = _payload(n)["alerts"][0]
    return {**alert, "starts_at": alert["startsAt"], "labels": alert["labels"]}


def _db_bytes(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return conn.execute("PRAGMA page_count").fetchone()[0] * 4096


def _runs(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def _capped(db: Path, **more) -> Settings:
    return Settings(db_path=db, token="t", db_max_bytes=CAP, min_free_bytes=0, **more)


def _refused_by_the_cap(r) -> None:
    assert r.status_code == 507, r.text
    detail = r.json()["detail"]
    assert f"its size cap of {CAP} bytes is reached (WLMON_API_DB_MAX_BYTES" in detail
    assert "nothing of this request was stored" in detail


def _degraded(client: TestClient, failures: int) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "degraded", health
    assert any("WLMON_API_DB_MAX_BYTES" in r or "disk is full" in r for r in health["reasons"])
    metrics = client.get("/metrics/").text
    assert f"wlmon_api_storage_write_failures_total {float(failures)}" in metrics


def test_imports_through_the_api_stop_at_the_cap_in_the_worker(tmp_path) -> None:
    """The import is stored by a worker process: it opens the database with the cap too."""
    db = tmp_path / "db.sqlite"
    body = PERFMON.read_bytes()
    with TestClient(create_app(_capped(db))) as client:
        codes = []
        for _ in range(40):
            r = client.post("/imports/perfmon", content=body, headers=AUTH)
            codes.append(r.status_code)
            if r.status_code != 201:
                break
        assert codes[-1] == 507 and codes.count(201) >= 2, codes
        _refused_by_the_cap(r)
        stored = _runs(db)
        assert stored == codes.count(201)  # the refused import left nothing
        assert client.post("/imports/perfmon", content=body, headers=AUTH).status_code == 507
        assert _runs(db) == stored
        _degraded(client, failures=2)
    assert _db_bytes(db) <= CAP


def test_a_fast_run_and_the_webhook_past_the_cap_are_507(tmp_path) -> None:
    db = tmp_path / "db.sqlite"
    fill(Store(db, CAP))
    before = _runs(db)
    with TestClient(create_app(_capped(db, max_fast_run_s=600))) as client:
        r = client.post("/runs", json={"mode": "fast", "duration_s": 300}, headers=AUTH)
        _refused_by_the_cap(r)
        r = client.post("/alerts/webhook", json=_payload(10**6), headers=AUTH)
        _refused_by_the_cap(r)
        assert _runs(db) == before
        _degraded(client, failures=2)
    assert _db_bytes(db) <= CAP


def test_the_cli_stops_at_the_cap_and_the_api_hears_of_it(tmp_path) -> None:
    """`wlmon import` (another process) and `wlmon run --fast` opened the database without
    the cap. Refused, each prints one line naming the cap and exits 2; the API's /healthz
    and counter see the refusals they met."""
    db = tmp_path / "db.sqlite"
    fill(Store(db, CAP))
    before = _runs(db)
    env = os.environ | {"WLMON_API_DB_PATH": str(db), "WLMON_API_DB_MAX_BYTES": str(CAP)}
    proc = subprocess.run(
        [sys.executable, "-m", "wlmon", "import", "perfmon", str(PERFMON)],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "WLMON_API_DB_MAX_BYTES" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    fast = runner.invoke(
        cli,
        ["run", "--fast", "--duration", "5m"],
        env={"WLMON_API_DB_PATH": str(db), "WLMON_API_DB_MAX_BYTES": str(CAP)},
    )
    assert fast.exit_code == 2, fast.output
    assert f"its size cap of {CAP} bytes is reached (WLMON_API_DB_MAX_BYTES" in fast.output
    assert _runs(db) == before
    with TestClient(create_app(_capped(db))) as client:
        _degraded(client, failures=2)
    assert _db_bytes(db) <= CAP


@contextlib.contextmanager
def small_filesystem(tmp_path: Path, size: str = "8m") -> Iterator[Path]:
    """A tmpfs of `size` mounted for the test (root only): a disk that really fills."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def ballast(where: Path) -> Path:
    """A file that takes every free byte of the filesystem."""
    path = where / "ballast"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * chunk)
    finally:
        os.close(fd)
    return path


def test_a_full_disk_is_a_507_a_cli_line_and_degraded(tmp_path) -> None:
    with small_filesystem(tmp_path) as mnt:
        db = mnt / "db.sqlite"
        settings = Settings(db_path=db, token="t", min_free_bytes=0)
        body = PERFMON.read_bytes()
        with TestClient(create_app(settings)) as client:
            first = client.post("/imports/perfmon", content=body, headers=AUTH)
            assert first.status_code == 201, first.text
            ballast(mnt)
            r = client.post("/imports/perfmon", content=body, headers=AUTH)
            assert r.status_code == 507, r.text
            assert "cannot grow: the disk is full" in r.json()["detail"]
            cli_import = runner.invoke(
                cli, ["import", "perfmon", str(PERFMON)], env={"WLMON_API_DB_PATH": str(db)}
            )
            assert cli_import.exit_code == 2, cli_import.output
            assert "the disk is full" in cli_import.output
            assert [run["id"] for run in client.get("/runs").json()] == [first.json()["id"]]
            _degraded(client, failures=2)
        with contextlib.closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@contextlib.contextmanager
def prometheus(tmp_path: Path, target: str) -> Iterator[str]:
    """A real Prometheus on a free port scraping `target` (host:port) every second."""
    import time

    import httpx

    from tests.api.live_api import free_port
    from wlmon.stack.components import COMPONENTS

    binary = COMPONENTS["prometheus"].path("prometheus")
    if not binary.is_file():
        pytest.skip(f"{binary} missing: run `wlmon stack install --only prometheus`")
    conf = tmp_path / "prometheus.yml"
    conf.write_text(
        "global: {scrape_interval: 1s}\n"
        f"scrape_configs: [{{job_name: sap, static_configs: [{{targets: ['{target}']}}]}}]\n"
    )
    port = free_port()
    with (tmp_path / "prometheus.log").open("wb") as log:
        proc = subprocess.Popen(
            [
                str(binary),
                f"--config.file={conf}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "Prometheus did not start"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_real_time_run_past_the_cap_is_a_507_and_touches_nothing(tmp_path) -> None:
    """Its row is stored before the driver starts: refused, the run does not start, the
    exporter is not told anything, nothing is stored."""
    from tests.api.test_realtime_runs import EXPORTER_TOKEN, _exporter_on

    exporter = _exporter_on()
    try:
        with prometheus(tmp_path, f"127.0.0.1:{exporter.port}") as prom:
            db = tmp_path / "db.sqlite"
            fill(Store(db, CAP))
            before = _runs(db)
            settings = _capped(
                db,
                exporter_url=f"http://127.0.0.1:{exporter.port}",
                exporter_token=EXPORTER_TOKEN,
                prometheus_url=prom,
            )
            with TestClient(create_app(settings)) as client:
                r = client.post("/runs", json={"mode": "realtime", "duration_s": 600}, headers=AUTH)
                _refused_by_the_cap(r)
                assert _runs(db) == before
                _degraded(client, failures=1)
        assert exporter.live.run_id == "" and exporter.sim.faults == ()
    finally:
        exporter.stop()
