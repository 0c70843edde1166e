"""Kernel and component versions through SAPControl (issue 31 item 2): GetVersionInfo's text
read as SAP writes it, ABAPGetComponentList's CVERS rows per SID, both asked at most every
VERSION_INTERVAL_S, and the twin's kernel-patch-drift fault leaving one instance behind.

The version texts below are SAP's, as recorded in trento-project/agent's sapcontrol gatherer
tests (an ERS10 of NWP) and SAP's own kernel numbering (722_EXT, 46D); the expected figures
are written out by hand from those texts, not computed by the parser under test."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.collectors.sapcontrol_versions import (
    Component,
    KernelFile,
    components,
    executable,
    kernel_versions,
)
from exporters.sapcontrol.client import Endpoint, SAPControlClient, SAPControlFault
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.twins import faultable_twin

FAULT = "kernel-patch-drift"
LAGGING = "penguin5_D01"


def test_sap_version_texts_read_release_and_patch() -> None:
    rows = [
        {
            "Filename": "/usr/sap/NWP/ERS10/exe/sapstartsrv",
            "VersionInfo": "753, patch 900, changelist 2094654, RKS compatibility level 1, "
            "optU (Oct 16 2021, 00:03:15), linuxx86_64",
            "Time": "2021 10 16 00:03:15",
        },
        {
            "Filename": "/usr/sap/NWP/ERS10/exe/enq_server",
            "VersionInfo": "755, patch 905, changelist 2094660, RKS compatibility level 2, "
            "optU (Oct 16 2021, 00:03:15), arch",
            "Time": "",
        },
        # Windows: backslashes, .EXE; an older kernel's release with a letter and _EXT.
        {"Filename": r"E:\usr\sap\PRD\D00\exe\disp+work.EXE", "VersionInfo": "722_EXT, patch 1000"},
        {"Filename": "/usr/sap/OLD/DVEBMGS00/exe/gwrd", "VersionInfo": "46D, patch 2225"},
        {"Filename": "/usr/sap/NWP/D00/exe/dbhdbslib.so", "VersionInfo": "753, patch 900"},
        # Not a kernel program: left out. A text not starting with release and patch: unread.
        {"Filename": "/usr/sap/NWP/D00/exe/libicuuc.so.50", "VersionInfo": "50, patch 1"},
        {"Filename": "/usr/sap/NWP/D00/exe/icman", "VersionInfo": "kernel 753 PL 900"},
    ]
    read = kernel_versions(rows)
    assert read.files == (
        KernelFile("dbsl", "753", 900),
        KernelFile("disp+work", "722_EXT", 1000),
        KernelFile("enq_server", "755", 905),
        KernelFile("gwrd", "46D", 2225),
        KernelFile("sapstartsrv", "753", 900),
    )
    assert read.unread == 1
    assert executable("C:\\usr\\sap\\X\\D00\\exe\\dboraslib.dll") == "dbsl"
    assert executable("/usr/sap/X/D00/exe/R3trans") is None


def test_component_rows_keep_sap_digits_and_drop_what_is_no_component_name() -> None:
    rows = [
        {"component": "SAP_BASIS", "release": "753", "patchlevel": "0006", "componenttype": "S"},
        {"component": "ST-PI", "release": "740", "patchlevel": "0021"},
        {"component": "/SAPAPO/", "release": "1", "patchlevel": ""},
        {"component": "bad name; drop table", "release": "1", "patchlevel": "1"},
        {"component": "S4CORE", "release": "", "patchlevel": "0000"},
    ]
    kept, total = components(rows)
    assert total == 5
    assert kept == [
        Component("/SAPAPO/", "1", ""),
        Component("SAP_BASIS", "753", "0006"),
        Component("ST-PI", "740", "0021"),
    ]


@pytest.fixture(scope="module")
def twin():
    with faultable_twin(FAULT, load_thresholds()) as t:
        yield t


def _collector(
    fleet, interval_s: float = 900.0, budget: int = 120
) -> tuple[CollectorRegistry, SAPControlScraper]:
    settings = SAPControlSettings(
        discover=fleet.url("penguin2_D00"),
        hosts={"*": "127.0.0.1"},
        username="bmkadm",
        password="pw",
        timeout_s=10,
        version_interval_s=interval_s,
        call_budget_per_minute=budget,
    )
    scraper = SAPControlScraper(settings)
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    return registry, scraper


def _samples(registry: CollectorRegistry) -> list:
    return [
        s
        for f in text_string_to_metric_families(generate_latest(registry).decode())
        for s in f.samples
    ]


def _patches(samples) -> dict[tuple[str, str], float]:
    return {
        (s.labels["sap_instance"], s.labels["executable"]): s.value
        for s in samples
        if s.name == "sap_kernel_patch"
    }


def test_the_twin_answers_in_sap_format_and_components_only_on_abap(twin) -> None:
    fleet, software = twin.fleet, twin.scenario.landscape.software
    with SAPControlClient(Endpoint(fleet.url("penguin2_D00")), auth=("bmkadm", "pw")) as c:
        versions = c.call("GetVersionInfo")
        cvers = c.call("ABAPGetComponentList")
    text = versions[0]["VersionInfo"]
    assert text.startswith(f"{software.kernel_release}, patch {software.kernel_patch}, ")
    assert "RKS compatibility level" in text
    assert [r["component"] for r in cvers] == [c.component for c in software.components]
    ascs = SAPControlClient(Endpoint(fleet.url("penguin1_ASCS01")), auth=("bmkadm", "pw"))
    with ascs, pytest.raises(SAPControlFault):
        ascs.call("ABAPGetComponentList")


def test_exporter_reads_versions_once_per_interval_and_the_fault_shows_one_instance_behind(
    twin,
) -> None:
    fleet, software = twin.fleet, twin.scenario.landscape.software
    registry, scraper = _collector(fleet)
    try:
        first = _samples(registry)
        patches = _patches(first)
        # 30 dialog instances (disp+work), each on the landscape's patch; the ASCS's enserver.
        assert sum(1 for (_, exe) in patches if exe == "disp+work") == 30
        assert set(patches.values()) == {float(software.kernel_patch)}
        assert patches[("penguin1_ASCS01", "enserver")] == software.kernel_patch
        info = {
            (s.labels["component"], s.labels["release"], s.labels["support_package"])
            for s in first
            if s.name == "sap_software_component_info"
        }
        assert info == {(c.component, c.release, c.patchlevel) for c in software.components}
        count = [s for s in first if s.name == "sap_software_components"]
        assert [(s.labels["sid"], s.value) for s in count] == [("BMK", len(software.components))]
        # Within the interval the answers stand, and the methods are not asked again.
        twin.fault = FAULT
        again = _samples(registry)
        assert _patches(again) == patches
        calls = {
            s.labels["outcome"]: s.value
            for s in again
            if s.name == "sap_sapcontrol_calls_total"
            and s.labels["sap_instance"] == LAGGING
            and s.labels["method"] == "GetVersionInfo"
        }
        assert calls == {"ok": 1.0}
    finally:
        twin.fault = ""
        scraper.close()
    # A fresh exporter (interval over) under the fault: that instance alone is behind.
    registry, scraper = _collector(fleet, interval_s=0.001)
    twin.fault = FAULT
    try:
        patches = _patches(_samples(registry))
    finally:
        twin.fault = ""
        scraper.close()
    behind = {k: v for k, v in patches.items() if v != software.kernel_patch}
    assert set(behind) == {
        (LAGGING, exe) for exe in ("disp+work", "gwrd", "icman", "dbsl", "sapstartsrv")
    }
    assert set(behind.values()) == {float(software.lagging_patch)}


def test_a_version_answer_stands_when_the_budget_runs_out_before_it(twin) -> None:
    """GetVersionInfo comes last in a scrape: when the instance's call budget (or the
    deadline) runs out before it, its last answer stands, so the series do not come and go
    (and SAPKernelPatchMismatch's for: is not reset). Budget 18 a minute: a dialog
    instance's first scrape makes 11 calls, its second reaches the budget before
    GetVersionInfo although that is due again."""
    fleet = twin.fleet
    registry, scraper = _collector(fleet, interval_s=0.001, budget=18)
    try:
        first = _patches(_samples(registry))
        second_samples = _samples(registry)
    finally:
        scraper.close()
    skipped = {
        s.labels["sap_instance"]
        for s in second_samples
        if s.name == "sap_sapcontrol_calls_skipped_total"
        and s.labels["method"] == "GetVersionInfo"
        and s.labels["reason"] == "budget"
        and s.value > 0
    }
    assert "penguin2_D00" in skipped
    second = _patches(second_samples)
    assert {k: v for k, v in second.items() if k[0] in skipped} == {
        k: v for k, v in first.items() if k[0] in skipped
    }
    assert ("penguin2_D00", "disp+work") in second
