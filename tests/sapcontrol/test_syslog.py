"""ABAPReadSyslog (SM21, issue 31 item 2b): new entries counted by severity and allow-listed
message id, never the text as a label; the text in the log store (a real VictoriaLogs, by
the Loki push protocol); asked once per SYSLOG_INTERVAL_S; the twin's short dumps in it."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sinks.loki import LokiSink
from exporters.sources.sapcontrol import SAPControlScraper
from exporters.sources.sapcontrol_syslog import SyslogReader
from landscape_model.engine import Simulation
from tests.sapcontrol.conftest import PASSWORD, USER, RecordedSystem, recorded
from tests.victorialogs import victorialogs

R, Y, G = "SAPControl-RED", "SAPControl-YELLOW", "SAPControl-GREEN"


def _entry(time: str, mno: str, text: str, sev: str, user: str = "JDOE") -> dict:
    return {
        "Time": time,
        "Typ": "",
        "Client": "100",
        "User": user,
        "Tcode": "VA01",
        "MNo": mno,
        "Text": text,
        "Severity": sev,
    }


class Lines:
    def __init__(self) -> None:
        self.lines: list[tuple[dict, str]] = []

    def emit(self, labels, line, ts_ns=None) -> None:
        self.lines.append((labels, line))


START = _entry("2024 03 20 09:12:01", "Q0Q", "Start SAP System", G, user="")
DUMP = _entry("2024 03 20 09:40:11", "AB0", 'Run-time error "CONVT_NO_NUMBER" occurred', R)
DUMP2 = _entry("2024 03 20 09:40:12", "AB0", 'Run-time error "CONVT_NO_NUMBER" occurred', R)
ODD = _entry("2024 03 20 09:41:00", "ZZ9", "Our own message about customer 4711", Y)


def test_first_answer_is_the_baseline_then_only_new_entries_count() -> None:
    sink = Lines()
    reader = SyslogReader(["AB0", "AB1"], sink)
    labels = {"source": "sapcontrol_syslog", "sid": "PRD", "sap_instance": "app1_D00"}
    assert reader.counts("PRD/app1_D00") is None
    reader.read("PRD/app1_D00", labels, [START, DUMP])
    counts = reader.counts("PRD/app1_D00")
    assert set(counts.values()) == {0} and ("red", "AB0") in counts and ("red", "other") in counts
    assert sink.lines == []  # history is not news: nothing counted, nothing sent
    # The same line twice in one answer is two entries; START rolled out of the buffer.
    reader.read("PRD/app1_D00", labels, [DUMP, DUMP2, DUMP2, ODD])
    counts = reader.counts("PRD/app1_D00")
    assert counts[("red", "AB0")] == 2
    assert counts[("yellow", "other")] == 1  # ZZ9 is not allow-listed
    assert sum(counts.values()) == 3
    reader.read("PRD/app1_D00", labels, [DUMP, DUMP2, DUMP2, ODD])  # nothing new
    assert sum(reader.counts("PRD/app1_D00").values()) == 3
    assert len(sink.lines) == 3
    sent_labels, line = sink.lines[-1]
    assert sent_labels == {**labels, "severity": "yellow"}  # no text, no id in a label
    assert json.loads(line)["Text"] == "Our own message about customer 4711"
    assert json.loads(line)["MNo"] == "ZZ9"


@pytest.mark.parametrize("ids", ["AB0,XY", "AB0,A-1", "ABCD"])
def test_bad_message_ids_are_refused_naming_the_setting(monkeypatch, ids: str) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS", ids)
    with pytest.raises(ValueError, match="WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS"):
        SAPControlSettings()


def test_message_ids_setting_is_read_upper_case(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS", "ab0, r49")
    assert SAPControlSettings().syslog_message_ids == ["AB0", "R49"]


class Growing(RecordedSystem):
    """The recorded system whose syslog gains the entries in `more` after the first call."""

    def __init__(self) -> None:
        super().__init__()
        self.more: list[bytes] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        response = super().__call__(request)
        if b"ABAPReadSyslog" in request.content and response.status_code == 200:
            body = response.content
            for item in self.more:
                body = body.replace(b"</log>", item + b"</log>")
            return httpx.Response(200, content=body)
        return response


def _samples(text: str, name: str) -> dict[tuple, float]:
    return {
        (s.labels["sap_instance"], s.labels["severity"], s.labels["message_id"]): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == name
    }


def test_scraper_asks_once_per_interval_and_counts_new_entries() -> None:
    system = Growing()
    sink = Lines()
    settings = SAPControlSettings(
        endpoints=["http://sapapp1:50013/"],
        username=USER,
        password=PASSWORD,
        syslog_interval_s=0.2,
    )

    def make(endpoint: Endpoint, auth) -> SAPControlClient:
        return SAPControlClient(endpoint, auth=auth, transport=httpx.MockTransport(system))

    scraper = SAPControlScraper(settings, client_factory=make, log_sink=sink)
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    try:
        generate_latest(registry)  # the baseline: the 4 recorded entries
        system.more.append(
            b"<item><Time>2024 03 20 09:50:00</Time><Typ></Typ><Client>100</Client><User>X"
            b"</User><Tcode></Tcode><MNo>AB1</MNo><Text>&gt; Short dump generated</Text>"
            b"<Severity>SAPControl-YELLOW</Severity></item>"
        )
        generate_latest(registry)  # within the interval: not asked
        asked = [op for _, op, _ in system.calls if op == "ABAPReadSyslog"]
        assert len(asked) == 1
        time.sleep(0.25)
        text = generate_latest(registry).decode()
        assert len([op for _, op, _ in system.calls if op == "ABAPReadSyslog"]) == 2
    finally:
        scraper.close()
    counts = _samples(text, "sap_syslog_entries_total")
    assert counts[("sapapp1_D00", "yellow", "AB1")] == 1.0
    assert sum(counts.values()) == 1.0
    assert 'reason="interval"' in text and 'method="ABAPReadSyslog"' in text
    assert [labels["sap_instance"] for labels, _ in sink.lines] == ["sapapp1_D00"]


def test_entries_reach_a_real_victorialogs_by_the_loki_protocol(tmp_path) -> None:
    with victorialogs(tmp_path) as store:
        sink = LokiSink(store.url, access=store.access).start()
        try:
            reader = SyslogReader(["AB0"], sink)
            labels = {"source": "sapcontrol_syslog", "sid": "PRD", "sap_instance": "app1_D00"}
            reader.read("PRD/app1_D00", labels, [START])
            reader.read("PRD/app1_D00", labels, [START, DUMP, ODD])
            assert sink.flush(10)
        finally:
            sink.stop()
        rows = store.rows('{source="sapcontrol_syslog",sid="PRD"} | unpack_json')
    assert sorted(r["MNo"] for r in rows) == ["AB0", "ZZ9"]
    assert {r["severity"] for r in rows} == {"red", "yellow"}
    assert any(r["Text"] == 'Run-time error "CONVT_NO_NUMBER" occurred' for r in rows)


def test_recorded_syslog_decodes_with_the_wsdl_fields() -> None:
    client = SAPControlClient(
        Endpoint("http://sapapp1:50013/"),
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, content=recorded("ABAPReadSyslog.xml"))
        ),
    )
    rows = client.call("ABAPReadSyslog")
    assert [r["MNo"] for r in rows] == ["Q0Q", "AB0", "AB1", "R49"]
    assert rows[1]["Text"] == 'Run-time error "CONVT_NO_NUMBER" occurred'
    assert rows[1]["Severity"] == R


def test_twin_writes_a_short_dump_storm_into_its_syslog() -> None:
    from alerts.thresholds import load_thresholds
    from exporters.sapstartsrv.landscape import ModelLandscape

    sim = Simulation("sd-benchmark-2003", faults=("short-dump-storm",), seed=3)
    # No snapshot cache: the model runs faster than the cache's wall-clock 0.1 s here.
    land = ModelLandscape(
        sim.snapshot, lambda: sim.scenario, load_thresholds(), 120, snapshot_ttl_s=0.0
    )
    sim.run(60)
    inst = land.instance("penguin2_D00")
    land.syslog(inst)  # the baseline of steps
    steps0 = float(sim.snapshot().totals.steps[inst.index, 0].sum())
    sim.run(30)
    rows = land.syslog(inst)
    steps = float(sim.snapshot().totals.steps[inst.index, 0].sum()) - steps0
    ab0 = [r for r in rows if r["MNo"] == "AB0"]
    assert all(r["Severity"] == R for r in ab0)
    assert len(ab0) == pytest.approx(0.02 * steps, abs=1.0)
    assert len([r for r in rows if r["MNo"] == "AB1"]) == len(ab0)
