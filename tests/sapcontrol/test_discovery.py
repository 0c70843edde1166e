"""Discovery of a system from GetSystemInstanceList: one deadline for discovery and
instances, backoff while it fails, several discovery URLs, the last good list kept (and
persisted), the discovery URL's scheme for the instances, and the Unix socket."""

from __future__ import annotations

import time

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from exporters.collectors.base import ExporterCollector
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.schema import decode_request, encode_response
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.conftest import PASSWORD, USER, RecordedSystem


class Hanging(RecordedSystem):
    """The recorded system where `hung` hosts accept and never answer: the client's read
    timeout runs out (as with a hung sapstartsrv), and hosts in `down` refuse."""

    def __init__(self) -> None:
        super().__init__()
        self.hung: set[str] = set()
        self.asked: list[tuple[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        operation, _ = decode_request(request.content)
        self.asked.append((request.url.host, operation))
        if request.url.host in self.hung:
            time.sleep(request.extensions["timeout"]["read"])
            raise httpx.ReadTimeout("timed out", request=request)
        return super().__call__(request)


def _settings(**over) -> SAPControlSettings:
    """Discovery at sapapp1 with the monitoring user, a 1 s deadline, and `over`."""
    return SAPControlSettings(
        **{
            "discover": "http://sapapp1:50013/",
            "username": USER,
            "password": PASSWORD,
            "timeout_s": 1.0,
            **over,
        }
    )


def _factory(system):
    def make(endpoint: Endpoint, auth) -> SAPControlClient:
        return SAPControlClient(endpoint, auth=auth, transport=httpx.MockTransport(system))

    return make


def _up(text: str) -> dict[str, float]:
    return {
        s.labels["sap_instance"]: s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "sap_up" and "sap_instance" in s.labels
    }


def _scrape(registry) -> tuple[str, float]:
    start = time.perf_counter()
    text = generate_latest(registry).decode()
    return text, time.perf_counter() - start


def _registry(scraper) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    return registry


def test_a_hung_discovery_instance_costs_one_deadline_and_is_retried_with_backoff() -> None:
    system = Hanging()
    settings = _settings(
        discovery_interval_s=0.01,  # due at every scrape while it answers
        discovery_retry_s=60.0,
    )
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    registry = _registry(scraper)
    _, healthy_s = _scrape(registry)
    system.hung.add("sapapp1")
    text, hung_s = _scrape(registry)
    time.sleep(0.3)  # the discovery in flight gives up at the deadline
    again, again_s = _scrape(registry)
    scraper.close()
    print(
        f"scrape: healthy {healthy_s:.2f} s, discovery instance hung {hung_s:.2f} s, "
        f"next {again_s:.2f} s, deadline 1.0 s"
    )
    assert hung_s < 1.0 + 0.5
    assert again_s < 1.0 + 0.5
    for exposition in (text, again):
        up = _up(exposition)
        assert up["sapapp1_D00"] == 0.0
        assert up["sapapp2_D00"] == 1.0 and up["sapascs_ASCS01"] == 1.0
    # One failed GetSystemInstanceList, then it waits for the backoff.
    tries = [c for c in system.asked if c == ("sapapp1", "GetSystemInstanceList")]
    assert len(tries) == 2  # the healthy one and one while hung
    assert "sap_sapcontrol_discovery_success 0.0" in again


def test_several_discovery_urls_are_tried_in_turn() -> None:
    system = Hanging()
    system.down.add("sapapp1")
    settings = _settings(discover="http://sapapp1:50013/,http://sapapp2:50013/")
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    up = _up(_scrape(_registry(scraper))[0])
    scraper.close()
    assert up == {
        "sapapp1_D00": 0.0,
        "sapapp2_D00": 1.0,
        "sapascs_ASCS01": 1.0,
        "sapers_ERS02": 0.0,
    }


def test_discovery_down_at_startup_reads_the_persisted_list(tmp_path) -> None:
    state = tmp_path / "instances.json"
    system = Hanging()
    settings = _settings(state_file=state)
    first = SAPControlScraper(settings, client_factory=_factory(system))
    _scrape(_registry(first))
    first.close()
    assert state.is_file()

    system.down.add("sapapp1")  # the exporter restarts while the discovery instance is down
    restarted = SAPControlScraper(settings, client_factory=_factory(system))
    up = _up(_scrape(_registry(restarted))[0])
    restarted.close()
    assert up["sapapp2_D00"] == 1.0 and up["sapascs_ASCS01"] == 1.0
    assert up["sapapp1_D00"] == 0.0


def test_discovery_down_with_no_list_reads_down_and_fails_the_collector() -> None:
    system = Hanging()
    system.down |= {"sapapp1", "sapapp2"}
    settings = SAPControlSettings(
        discover="http://sapapp1:50013/,http://sapapp2:50013/", timeout_s=1.0
    )
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    registry = CollectorRegistry()
    registry.register(
        ExporterCollector(_Sid(), {"sapcontrol": SAPControlCollector(scraper)}, clock=lambda: 0.0)
    )
    text = generate_latest(registry).decode()
    scraper.close()
    assert _up(text) == {"http://sapapp1:50013/": 0.0, "http://sapapp2:50013/": 0.0}
    assert 'sap_scrape_collector_success{collector="sapcontrol"} 0.0' in text
    assert "sap_sapcontrol_discovery_success 0.0" in text


class _Sid:
    def sid(self) -> str:
        return "EPP"


class _ListedSystem(Hanging):
    """Serves its own instance list (`rows`) and answers `localhost` (the Unix socket) as
    the instance `local`."""

    def __init__(self, rows, local: str = "sapapp1") -> None:
        super().__init__()
        self.rows = rows
        self.local = local

    def __call__(self, request: httpx.Request) -> httpx.Response:
        operation, _ = decode_request(request.content)
        if request.url.host == "localhost":
            request.url = request.url.copy_with(host=self.local)
        if operation == "GetSystemInstanceList":
            self.calls.append((request.url.host, operation, None))
            return httpx.Response(200, content=encode_response(operation, self.rows))
        return super().__call__(request)


def _row(host: str, nr: int, http: int, https: int, features: str) -> dict:
    return {
        "hostname": host,
        "instanceNr": nr,
        "httpPort": http,
        "httpsPort": https,
        "startPriority": "3",
        "features": features,
        "dispstatus": "SAPControl-GREEN",
    }


ROWS = [
    _row("sapapp1", 0, 50013, 50014, "ABAP|GATEWAY|ICMAN|IGS"),
    _row("sapapp2", 0, 50013, 0, "ABAP|GATEWAY|ICMAN|IGS"),  # no HTTPS listed
    _row("sapascs", 1, 50113, 50114, "MESSAGESERVER|ENQUE"),
]


def test_https_discovery_keeps_https_and_never_sends_credentials_over_http() -> None:
    system = _ListedSystem(ROWS)
    settings = _settings(discover="https://sapapp1:50014/")
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    urls = {t.endpoint.url for t in scraper.targets()}
    assert urls == {"https://sapapp1:50014/", "http://sapapp2:50013/", "https://sapascs:50114/"}
    _scrape(_registry(scraper))
    scraper.close()
    auth = {(host, a is not None) for host, _, a in system.calls}
    assert ("sapapp2", True) not in auth  # plain HTTP: no Authorization header at all
    assert ("sapapp1", True) in auth and ("sapascs", True) in auth


def test_unix_socket_discovery_reads_the_local_instance_through_the_socket() -> None:
    system = _ListedSystem(ROWS)
    settings = _settings(discover="unix:/tmp/.sapstream50013")
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    targets = {t.hostname: t.endpoint for t in scraper.targets()}
    assert targets["sapapp1"] == Endpoint("http://localhost/", uds="/tmp/.sapstream50013")
    assert targets["sapapp2"].url == "http://sapapp2:50013/"
    up = _up(_scrape(_registry(scraper))[0])
    scraper.close()
    assert up == {"sapapp1_D00": 1.0, "sapapp2_D00": 1.0, "sapascs_ASCS01": 1.0}


@pytest.mark.parametrize(
    "value", ["unix:", "ftp://sapapp1:50013/", "sapapp1:50013", "http://:50013/"]
)
def test_a_bad_discovery_or_endpoint_url_is_a_settings_error(value) -> None:
    for field in ("discover", "endpoints"):
        with pytest.raises(ValidationError, match=f"WLMON_SAPCONTROL_{field.upper()}"):
            SAPControlSettings(**{field: value})


def test_a_hung_discovery_at_startup_costs_one_deadline_and_reads_down() -> None:
    system = Hanging()
    system.hung.add("sapapp1")
    settings = SAPControlSettings(discover="http://sapapp1:50013/", timeout_s=0.5)
    scraper = SAPControlScraper(settings, client_factory=_factory(system))
    text, elapsed = _scrape(_registry(scraper))
    scraper.close()
    assert elapsed < 0.5 + 0.5
    assert _up(text) == {"http://sapapp1:50013/": 0.0}
    assert "sap_sapcontrol_discovery_success 0.0" in text
    assert 'sap_scrape_collector_success{collector="sapcontrol"} 0.0' in text
