"""The Loki-protocol sink against a real VictoriaLogs (HTTPS + basic auth, as `wlmon up` runs
it): lines read back in LogsQL with wlmon's labels as stream fields, refusals without
credentials or without TLS, no loss through an outage, no duplicate from a push retried
after a stall, and lines outside the retention refused."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from exporters.sinks.loki import LogStoreAccess, LokiPusher, LokiSink
from tests.victorialogs import victorialogs


@pytest.fixture
def store(tmp_path):
    with victorialogs(tmp_path) as running:
        yield running


def _wait(check, timeout_s: float = 30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    return check()


def test_lines_come_back_whole_with_wlmons_labels_as_stream_fields(store) -> None:
    marker = uuid.uuid4().hex
    sink = LokiSink(store.url, access=store.access, flush_interval_s=0.05).start()
    st05 = f'statement=ab12 table=VBAP sql="SELECT * FROM VBAP" marker={marker}'
    event = f'{{"event": "run_started", "marker": "{marker}", "run_id": "r-1"}}'
    try:
        sink.emit({"sid": "BMK", "sap_instance": "penguin_BMK_00", "source": "st05"}, st05)
        sink.emit({"sid": "BMK", "source": "run_events", "run_id": "r-1"}, event)
        assert sink.flush(10)
    finally:
        sink.stop()
    # A stream selector on each label: they are stream fields, not only fields.
    (row,) = store.rows(f'{{source="st05", sap_instance="penguin_BMK_00"}} "{marker}"')
    assert row["_msg"] == st05  # logfmt kept as sent
    assert row["_stream"] == '{sap_instance="penguin_BMK_00",sid="BMK",source="st05"}'
    (row,) = store.rows(f'{{source="run_events", run_id="r-1"}} "{marker}"')
    # A JSON line stays one line (disable_message_parsing), split only when asked.
    assert row["_msg"] == event
    (row,) = store.rows(f'{{run_id="r-1"}} "{marker}" | unpack_json | fields event')
    assert row == {"event": "run_started"}


def test_a_push_without_credentials_is_refused_and_stores_nothing(store) -> None:
    marker = uuid.uuid4().hex
    anonymous = LogStoreAccess(ca_file=store.access.ca_file)
    wrong = LogStoreAccess(ca_file=store.access.ca_file, username="wlmon-logs", password="x")
    for access in (anonymous, wrong):
        pusher = LokiPusher(store.url, access=access)
        with pytest.raises(httpx.HTTPStatusError) as refused:
            pusher.push([({"source": "intruder"}, time.time_ns(), marker)])
        pusher.close()
        assert refused.value.response.status_code == 401
    # Every other endpoint too: reading, /metrics, Loki's ready path.
    with httpx.Client(verify=anonymous.context(), base_url=store.url) as c:
        for path in ("/select/logsql/query?query=*", "/metrics", "/insert/loki/ready"):
            assert c.get(path).status_code == 401, path
    assert store.count(f'"{marker}"') == 0


def test_plain_http_to_the_tls_port_is_refused_and_stores_nothing(store) -> None:
    marker = uuid.uuid4().hex
    plain = store.url.replace("https://", "http://")
    body = {
        "streams": [{"stream": {"source": "intruder"}, "values": [[str(time.time_ns()), marker]]}]
    }
    # Go's TLS server answers 400 and closes; a client still sending its body may see the
    # close as a reset instead. Either way nothing is taken.
    try:
        r = httpx.post(
            plain + "/insert/loki/api/v1/push",
            json=body,
            auth=("wlmon-logs", "test-logs-password"),
        )
        assert r.status_code == 400
    except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
        pass
    bare = httpx.get(plain + "/health")
    assert bare.status_code == 400
    assert "HTTP request to an HTTPS server" in bare.text
    assert store.count(f'"{marker}"') == 0


def test_the_store_keeps_duplicates_so_the_pusher_asks_after_a_stall(store) -> None:
    """VictoriaLogs keeps every copy of a line pushed twice (Loki kept one): the same push
    sent twice by hand is stored twice. A push that timed out while the store was frozen
    (SIGSTOP) and is retried after the thaw is stored once: the pusher asks first."""
    marker = uuid.uuid4().hex
    line = ({"source": "dup", "sid": "BMK"}, time.time_ns(), f"by hand {marker}")
    blunt = LokiPusher(store.url, access=store.access)
    blunt.push([line])
    blunt.push([line])
    blunt.close()
    assert store.count(f'"by hand {marker}"') == 2

    # settle_s 5 (its default is 2): on a loaded 2-core machine the thawed store may take
    # longer than 2 s to take the request it held; CI run 42 failed this test once (its
    # message was not kept) where CI run 41 and three runs beside it passed.
    pusher = LokiPusher(store.url, access=store.access, timeout_s=1.0, settle_s=5.0)
    # Its connection is up (kept alive, as a sink's is): the stalled request is sent whole.
    pusher.push([({"source": "dup", "sid": "BMK"}, time.time_ns(), f"warm {marker}")])
    now = time.time_ns()
    # Another writer's lines in the same nanoseconds' range (the live stack's ST05 summaries):
    # the question must be about the batch's own streams, not crowded out by these.
    other = [({"source": "st05", "sap_instance": f"i{k % 31}"}, now + k, "x") for k in range(600)]
    pusher.push(other)
    lines = [
        ({"source": "dup", "sid": "BMK"}, now + 12 * k + 1, f"stalled {marker} {k}")
        for k in range(50)
    ]
    store.freeze()
    try:
        with pytest.raises(httpx.ReadTimeout):
            pusher.push(lines)
    finally:
        store.thaw()
    pusher.push(lines)  # the retry a sink makes with its put-back batch
    pusher.close()
    assert pusher.skipped == 50  # the frozen store took the timed-out push after all
    assert store.count(f'"stalled {marker}"') == 50


def test_no_line_is_lost_through_an_outage(tmp_path) -> None:
    """The store stopped while lines arrive, started again on the same data and port:
    every line arrives once."""
    marker = uuid.uuid4().hex
    with victorialogs(tmp_path) as first:
        url, access = first.url, first.access
        sink = LokiSink(url, access=access, flush_interval_s=0.05, max_backoff_s=0.5).start()
        for k in range(20):
            sink.emit({"source": "outage", "sid": "BMK"}, f"{marker} before {k}")
        assert sink.flush(10)
    # Down: the sink keeps what arrives and backs off.
    for k in range(20):
        sink.emit({"source": "outage", "sid": "BMK"}, f"{marker} during {k}")
    time.sleep(1.5)
    assert sink.pending == 20 and sink.failures >= 1
    port = url.rsplit(":", 1)[1]
    with victorialogs(tmp_path, port=int(port)) as again:
        assert _wait(lambda: sink.pending == 0 and sink.flush(1))
        sink.stop()
        assert again.count(f'"{marker}"') == 40
        assert again.count(f'"{marker} during"') == 20


def test_a_line_older_than_the_retention_is_not_stored(tmp_path) -> None:
    marker = uuid.uuid4().hex
    with victorialogs(tmp_path, retention="1d") as store:
        old = time.time_ns() - 3 * 86_400 * 10**9
        pusher = LokiPusher(store.url, access=store.access)
        pusher.push(
            [
                ({"source": "old"}, old, f"{marker} old"),
                ({"source": "old"}, time.time_ns(), f"{marker} new"),
            ]
        )
        pusher.close()
        assert store.count(f'"{marker}"') == 1
        assert store.count(f'"{marker} new"') == 1
