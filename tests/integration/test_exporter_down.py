"""SAPExporterDown names the system that went blind: `up` carries the target's sid."""

from __future__ import annotations

import httpx
import pytest

from tests.integration.conftest import url
from tests.integration.helpers import eventually
from wlmon.stack.runtime import Stack

pytestmark = pytest.mark.integration


def _firing(stack: Stack, alertname: str) -> list[dict]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    return [
        a
        for a in r.json()["data"]["alerts"]
        if a["labels"]["alertname"] == alertname and a["state"] == "firing"
    ]


def test_an_exporter_outage_fires_sapexporterdown_with_the_sid(stack: Stack) -> None:
    assert stack.stop_service("exporter")
    try:
        # for: 2m scaled by 0.1, every 2 s: firing within a minute.
        alerts = eventually(lambda: _firing(stack, "SAPExporterDown"), timeout=90, every=2)
    finally:
        stack.up(only=["exporter"])
    print("SAPExporterDown labels:", alerts[0]["labels"])
    assert alerts[0]["labels"]["sid"] == stack.settings.sid
    assert stack.settings.sid in alerts[0]["annotations"]["description"]
    # The exporter's own series keep their sid (honor_labels), not exported_sid.
    r = httpx.get(
        f"{url(stack, 'prometheus')}/api/v1/series",
        params={"match[]": "sap_up"},
        timeout=10,
    )
    assert r.json()["data"] and all("exported_sid" not in s for s in r.json()["data"])
