"""The sapcontrol source against sapstartsrvs that misbehave (tests/sapcontrol/misbehaving.py:
real HTTP servers on 127.0.0.1 answering SOAP, counting every call): a slow method, an
answer trickled byte by byte, 401, 500, a SOAP fault with disp+work down, a truncated
answer, an ASCS failover, the call budget, and TLS to SAP's host names mapped by HOSTS.

Before this change (same server, untouched code; docs/sapcontrol.md keeps the figures):
the slow method made the instance sap_up 0 and dropped its lights; one trickling instance
held a worker per scrape until all 4 were held and every instance read sap_up 0; a wrong
password cost 88 failed logins in 8 scrapes; GetAlertTree answering 500 and the ABAP
methods faulting on a GRAY disp+work were called every scrape; the failover was not
followed within 12 s.
"""

from __future__ import annotations

import logging
import time

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.misbehaving import Instance, System, ascs_d00_d01, tls_pair, wait_until

D00 = "misapp1_D00"
ABAP = ("ABAPGetWPTable", "GetQueueStatistic", "GetAlertTree")


@pytest.fixture
def make():
    """(system, scraper, scrape) for a misbehaving system; closed after the test."""
    made = []

    def build(system: System, **settings):
        base = dict(
            discover=system.local_url("ASCS01"),
            hosts={"*": "127.0.0.1"},
            username=system.user,
            password=system.password,
            timeout_s=2.0,
            max_parallel=4,
            backoff_jitter=0.0,
        )
        scraper = SAPControlScraper(SAPControlSettings(**{**base, **settings}))
        registry = CollectorRegistry()
        registry.register(SAPControlCollector(scraper))
        made.append((system, scraper))

        def scrape() -> dict:
            text = generate_latest(registry).decode()
            out: dict = {}
            for fam in text_string_to_metric_families(text):
                for s in fam.samples:
                    out.setdefault(s.name, []).append((s.labels, s.value))
            return out

        return scraper, scrape

    yield build
    for system, scraper in made:
        scraper.close()
        system.stop()


def up(m: dict) -> dict[str, float]:
    return {lab["sap_instance"]: v for lab, v in m["sap_up"]}


def value(m: dict, name: str, **labels) -> float | None:
    found = [v for lab, v in m.get(name, []) if all(lab.get(k) == w for k, w in labels.items())]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


def lights(m: dict, inst: str) -> set[str]:
    return {
        lab["process"] for lab, _ in m.get("sap_process_status", []) if lab["sap_instance"] == inst
    }


def test_a_slow_method_fails_alone(make) -> None:
    system = System(ascs_d00_d01(), slow_s=5.0)
    system.instance("D00").behave["ABAPGetWPTable"] = "slow"
    _, scrape = make(system)
    start = time.perf_counter()
    m = scrape()
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0 + 1.0  # the deadline, not the 5 s the method takes
    assert up(m) == {"misascs_ASCS01": 1.0, D00: 1.0, "misapp2_D02": 1.0}
    assert lights(m, D00) == {"disp+work", "igswd_mt"}  # what it read before stays
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 0
    )
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="GetProcessList") == 1
    )
    assert (
        value(
            m,
            "sap_sapcontrol_calls_total",
            sap_instance=D00,
            method="ABAPGetWPTable",
            outcome="timeout",
        )
        == 1
    )
    assert value(m, "sap_sapcontrol_method_failing", sap_instance=D00, method="ABAPGetWPTable") == 1
    assert (
        value(m, "sap_sapcontrol_backoff_seconds", sap_instance=D00, method="ABAPGetWPTable") > 20
    )
    # Backed off: the next scrapes do not ask it again, and are quick.
    start = time.perf_counter()
    for _ in range(3):
        m = scrape()
    assert time.perf_counter() - start < 2.0
    assert system.count("D00", "ABAPGetWPTable") == 1
    assert (
        value(
            m,
            "sap_sapcontrol_calls_skipped_total",
            sap_instance=D00,
            method="ABAPGetWPTable",
            reason="backoff",
        )
        == 3
    )


def test_a_trickled_answer_frees_its_worker_at_the_deadline(make) -> None:
    """One byte every 50 ms of a ~700-byte answer: 35 s if read to the end. The call ends
    at its 2 s deadline, the exporter hangs up (the server sees it), and two workers keep
    reading the other instances scrape after scrape."""
    system = System(ascs_d00_d01(), trickle_s=0.05)
    system.instance("D00").behave["GetProcessList"] = "trickle"
    _, scrape = make(system, max_parallel=2, backoff_s=0.001)
    for _ in range(4):
        start = time.perf_counter()
        m = scrape()
        assert time.perf_counter() - start < 2.0 + 1.0
        assert up(m)["misascs_ASCS01"] == 1.0 and up(m)["misapp2_D02"] == 1.0
        assert wait_until(lambda: system.active == 0, 1.0), "a trickled answer is still read"
    assert system.most_active <= 2
    assert (
        value(
            m,
            "sap_sapcontrol_calls_total",
            sap_instance=D00,
            method="GetProcessList",
            outcome="timeout",
        )
        == 4
    )


def test_a_refused_user_costs_one_login_per_period_not_per_scrape(make, caplog) -> None:
    system = System(ascs_d00_d01())
    given = system.password
    system.password = "changed-by-the-basis-team"  # sapstartsrv's OS user, not wlmon's
    _, scrape = make(system, password=given, auth_backoff_s=1.0)
    with caplog.at_level(logging.INFO):
        for _ in range(8):
            m = scrape()
    # One failed login per instance (the first protected method), then held back.
    assert system.count(answer="401") == 3
    assert {v for _, v in m["sap_up"]} == {1.0}  # sapstartsrv answers; lights stay
    assert lights(m, D00) == {"disp+work", "igswd_mt"}
    assert value(m, "sap_sapcontrol_auth_refused", sap_instance=D00) == 1
    assert (
        value(
            m,
            "sap_sapcontrol_calls_skipped_total",
            sap_instance=D00,
            method="GetAlertTree",
            reason="auth",
        )
        == 8
    )
    assert given not in caplog.text
    # After the hold (1 s, doubled: 2 s), one try per instance; the user works again.
    time.sleep(1.1)
    scrape()
    assert system.count(answer="401") == 6
    system.password = given
    time.sleep(2.3)
    m = scrape()
    assert system.count(answer="401") == 6
    assert value(m, "sap_sapcontrol_auth_refused", sap_instance=D00) == 0
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 1
    )


def test_a_method_answering_500_is_backed_off_exponentially(make) -> None:
    system = System(ascs_d00_d01())
    system.instance("D00").behave["GetAlertTree"] = "500"
    _, scrape = make(system, backoff_s=0.4, backoff_max_s=10)
    end = time.monotonic() + 3.2
    scrapes = 0
    while time.monotonic() < end:
        m = scrape()
        scrapes += 1
        time.sleep(0.05)
    # Called at about 0, 0.4, 1.2 and 2.8 s: four calls, against one per scrape before.
    calls = system.count("D00", "GetAlertTree")
    assert scrapes >= 8 and 3 <= calls <= 5, (scrapes, calls)
    assert (
        value(
            m,
            "sap_sapcontrol_calls_total",
            sap_instance=D00,
            method="GetAlertTree",
            outcome="server_error",
        )
        == calls
    )
    assert up(m)[D00] == 1.0
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 1
    )


def test_no_abap_method_while_disp_work_is_down(make) -> None:
    system = System(ascs_d00_d01())
    d00 = system.instance("D00")
    d00.disp_work = "SAPControl-GRAY"
    for method in ABAP:
        d00.behave[method] = "fault"  # what sapstartsrv answers: DpAttachStartService failed
    _, scrape = make(system)
    for _ in range(5):
        m = scrape()
    assert sum(system.count("D00", method) for method in ABAP) == 0
    assert up(m)[D00] == 1.0
    for method in ABAP:
        assert (
            value(
                m,
                "sap_sapcontrol_calls_skipped_total",
                sap_instance=D00,
                method=method,
                reason="state",
            )
            == 5
        )
    # disp+work back: the ABAP methods are called again.
    d00.disp_work = "SAPControl-GREEN"
    d00.behave.clear()
    scrape()
    m = scrape()
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 1
    )


def test_a_truncated_process_list_is_a_failing_method_not_a_silent_gap(make) -> None:
    system = System(ascs_d00_d01())
    system.instance("D00").behave["GetProcessList"] = "truncated"
    _, scrape = make(system)
    m = scrape()
    assert up(m)[D00] == 1.0
    assert (
        value(
            m,
            "sap_sapcontrol_calls_total",
            sap_instance=D00,
            method="GetProcessList",
            outcome="invalid",
        )
        == 1
    )
    assert value(m, "sap_sapcontrol_method_failing", sap_instance=D00, method="GetProcessList") == 1
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 1
    )
    assert any(lab["sap_instance"] == D00 for lab, _ in m["sap_work_processes"])


def test_an_ascs_failover_is_followed_within_seconds(make, caplog) -> None:
    insts = [*ascs_d00_d01(), Instance("misascs2", 1, "MESSAGESERVER|ENQUE", "ASCS01")]
    system = System(insts)
    system.listing = insts[:3]
    _, scrape = make(system, discover=system.local_url("D00"), discovery_interval_s=150)
    m = scrape()
    assert set(up(m)) == {"misascs_ASCS01", D00, "misapp2_D02"}
    assert value(m, "sap_sapcontrol_failovers_total", instance_name="ASCS01") == 0
    # The cluster moves ASCS01 to misascs2: the old node's sapstartsrv is gone.
    system.stop_instance("misascs_ASCS01")
    system.listing = [insts[3], insts[1], insts[2]]
    start = time.monotonic()
    with caplog.at_level(logging.WARNING):
        seen_down = 0
        for _ in range(10):
            m = scrape()
            seen_down += up(m).get("misascs_ASCS01") == 0.0
            if up(m).get("misascs2_ASCS01") == 1.0:
                break
            time.sleep(0.5)
    took = time.monotonic() - start
    assert up(m) == {"misascs2_ASCS01": 1.0, D00: 1.0, "misapp2_D02": 1.0}, up(m)
    assert took < 5.0 and seen_down <= 2
    assert value(m, "sap_sapcontrol_failovers_total", sid="MIS", instance_name="ASCS01") == 1
    assert "failover: MIS ASCS01 moved from misascs to misascs2" in caplog.text


def test_the_call_budget_caps_calls_per_instance(make) -> None:
    system = System(ascs_d00_d01())
    _, scrape = make(system, call_budget_per_minute=10)
    for _ in range(3):
        m = scrape()
    # D00 makes 7 calls in its first scrape (its properties once, then 6 methods), 10 in
    # the minute, the rest waits; the process list first.
    assert sum(n for (i, _, _), n in system.calls.items() if i == D00) == 10
    assert system.count("D00", "GetProcessList") == 2
    assert value(m, "sap_sapcontrol_call_budget_exhausted_total", sap_instance=D00) == 1
    assert value(m, "sap_sapcontrol_call_budget_remaining", sap_instance=D00) == 0
    assert up(m)[D00] == 1.0


def test_plain_http_with_a_password_warns_in_the_log_and_a_metric(make, caplog) -> None:
    system = System(ascs_d00_d01())
    _, scrape = make(system)
    with caplog.at_level(logging.WARNING):
        m = scrape()
        scrape()
    assert value(m, "sap_sapcontrol_insecure", sap_instance=D00, reason="basic_auth_over_http") == 1
    warned = [r for r in caplog.records if "basic auth over plain HTTP" in r.getMessage()]
    assert len(warned) == 3  # once per instance, not per scrape
    assert system.password not in caplog.text


def test_tls_checks_sap_host_names_while_connecting_to_mapped_addresses(make, tmp_path) -> None:
    """sapstartsrv's certificate names SAP's host names only. HOSTS maps them to 127.0.0.1:
    the handshake sends the host name (SNI) and the certificate is checked against it."""
    names = ["sapci.example.test", "misascs", "misapp1", "misapp2"]
    ca_file, server = tls_pair(tmp_path, names)
    system = System(ascs_d00_d01(), tls=server)
    hosts = {"sapci.example.test": "127.0.0.1", "*": "127.0.0.1"}
    discover = f"https://sapci.example.test:{system.port('ASCS01')}/"
    _, scrape = make(system, discover=discover, hosts=hosts, ca_file=ca_file)
    m = scrape()
    assert up(m) == {"misascs_ASCS01": 1.0, D00: 1.0, "misapp2_D02": 1.0}
    assert (
        value(m, "sap_sapcontrol_request_success", sap_instance=D00, method="ABAPGetWPTable") == 1
    )
    assert not m.get("sap_sapcontrol_insecure")


def test_tls_refuses_a_certificate_for_another_name(make, tmp_path, caplog) -> None:
    ca_file, server = tls_pair(tmp_path, ["someone-else.example.test"])
    system = System(ascs_d00_d01(), tls=server)
    discover = f"https://sapci.example.test:{system.port('ASCS01')}/"
    _, scrape = make(
        system, discover=discover, hosts={"sapci.example.test": "127.0.0.1"}, ca_file=ca_file
    )
    with caplog.at_level(logging.WARNING):
        m = scrape()
    assert value(m, "sap_sapcontrol_discovery_success") == 0
    assert "CERTIFICATE_VERIFY_FAILED" in caplog.text or "certificate" in caplog.text.lower()
    assert system.count() == 0  # nothing was asked over a connection it did not trust
