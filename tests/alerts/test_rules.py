"""Alert rules: what the builder writes, promtool checks and unit tests, house style, and
one source of thresholds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from alerts import build
from alerts.settings import DEFAULT_RUNBOOK_BASE_URL, MonitoringConfig
from alerts.thresholds import load_thresholds
from exporters.thresholds import Thresholds
from exporters.vocabulary import CAUSES, INDICATOR_BY_ALERT
from tests.alerts import cases
from tests.model import indicators
from tests.promtool import promtool_path

ALERTS = Path(__file__).resolve().parents[2] / "alerts"
HERE = Path(__file__).parent
RULE_FILES = sorted(ALERTS.glob("*.rules.yml"))


def _rules() -> list[dict]:
    return [
        r for f in RULE_FILES for g in yaml.safe_load(f.read_text())["groups"] for r in g["rules"]
    ]


ALERT_RULES = [r for r in _rules() if "alert" in r]


def _config(**changed: float) -> MonitoringConfig:
    """The shipped thresholds with `changed` over them (not validated: a test may put a
    page level below its warning to see the rule move), at the default runbook base."""
    return MonitoringConfig.model_construct(
        thresholds=load_thresholds().model_copy(update=changed),
        runbook_base_url=DEFAULT_RUNBOOK_BASE_URL,
    )


def test_committed_rule_files_are_what_the_builder_writes() -> None:
    built = build.build(_config())
    assert set(built) == set(RULE_FILES), "run `python -m alerts.build`"
    for path, text in built.items():
        assert path.read_text() == text, f"{path.name} differs: run `python -m alerts.build`"


def test_check_exits_1_when_a_rule_file_was_edited_by_hand(tmp_path, monkeypatch) -> None:
    for path in RULE_FILES:
        (tmp_path / path.name).write_text(path.read_text())
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.delenv("WLMON_RUNBOOK_BASE_URL", raising=False)
    assert build.main(["--check"]) == 0
    edited = tmp_path / "workload.rules.yml"
    edited.write_text(edited.read_text().replace("> 100", "> 110", 1))
    assert build.main(["--check"]) == 1
    assert build.main([]) == 0 and build.main(["--check"]) == 0


def test_promtool_check_rules_is_clean() -> None:
    result = subprocess.run(
        [promtool_path(), "check", "rules", *map(str, RULE_FILES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_committed_unit_tests_match_their_builder() -> None:
    built = cases.build()
    committed = {p.name: p.read_text() for p in HERE.glob("*.test.yml")}
    assert committed == built, (
        "run `python -m tests.alerts.cases` to rewrite tests/alerts/*.test.yml"
    )


@pytest.mark.parametrize("test_file", sorted(p.name for p in HERE.glob("*.test.yml")))
def test_promtool_unit_tests_pass(test_file: str) -> None:
    result = subprocess.run(
        [promtool_path(), "test", "rules", test_file],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_firing_and_silent_unit_tests() -> None:
    tested: dict[str, set[bool]] = {}
    # The sapcontrol rules' cases are written by hand beside their tests (tests/sapcontrol).
    for path in [*HERE.glob("*.test.yml"), *(HERE.parent / "sapcontrol" / "rules").glob("*.yml")]:
        for case in yaml.safe_load(path.read_text())["tests"]:
            for art in case.get("alert_rule_test", []):
                tested.setdefault(art["alertname"], set()).add(bool(art["exp_alerts"]))
    for name in {r["alert"] for r in ALERT_RULES}:
        assert tested.get(name) == {True, False}, f"{name}: needs a firing and a silent test"


@pytest.mark.parametrize(
    "rule", ALERT_RULES, ids=lambda r: f"{r['alert']}-{r['labels']['severity']}"
)
def test_alert_follows_house_style(rule: dict) -> None:
    assert re.fullmatch(r"SAP[A-Z][A-Za-z0-9]+", rule["alert"])
    assert rule.get("for"), "every alert needs for:"
    assert rule["labels"]["severity"] in {"critical", "warning", "info"}
    ann = rule["annotations"]
    assert set(ann) == {"summary", "description", "diagnosis", "runbook_url"}
    assert ann["summary"].endswith(".") and "{{" not in ann["summary"]
    assert "{{" in ann["description"]
    url = urlsplit(ann["runbook_url"])
    assert url.scheme in {"http", "https"} and url.netloc, "runbook_url must be absolute"
    assert url.fragment == rule["alert"].lower()


# Seed 000 section 4.3.5.1, the SD benchmark bound of its section 2 and the buffer hit
# ratio of 4.3.1 (FACTS.md section 1).
PAPER_FIGURES = {
    "dispatcher_wait_seconds": 0.050,
    "db_request_seconds": 0.400,
    "enqueue_seconds": 0.005,
    "roll_seconds": 0.020,
    "dialog_response_seconds": 2.0,
    "sap_buffer_hit_ratio_min": 0.98,
}


@pytest.mark.parametrize(("key", "figure"), PAPER_FIGURES.items())
def test_thresholds_are_the_papers_figures(key: str, figure: float) -> None:
    assert getattr(load_thresholds(), key) == pytest.approx(figure)


def test_the_model_judges_its_runs_by_the_same_thresholds() -> None:
    """The model's tests (tests/model/indicators.py) judge by the thresholds alerts/ reads and
    hands them."""
    paper_ms = {"dispatcher_wait": 50.0, "db_request": 400.0, "enqueue": 5.0, "roll": 20.0}
    model_ms = indicators.thresholds_ms(load_thresholds())
    assert model_ms == pytest.approx(paper_ms)


def test_thresholds_file_holds_only_numbers() -> None:
    doc = yaml.safe_load((ALERTS / "thresholds.yml").read_text())
    assert all(isinstance(v, int | float) for v in doc.values()), doc


@pytest.mark.parametrize("key", sorted(Thresholds.model_fields))
def test_every_threshold_shapes_the_rules(key: str) -> None:
    """A number in thresholds.yml that no rule reads would be a knob that does nothing."""
    base = build.build(_config())
    tuned = build.build(_config(**{key: getattr(load_thresholds(), key) * 0.9}))
    assert tuned != base


@pytest.mark.parametrize("alert", sorted(INDICATOR_BY_ALERT))
def test_each_indicator_has_one_page_at_its_page_level(alert: str) -> None:
    """One alert per indicator, one severity (no warning twin that could be sent as news
    when a page resolves), firing at thresholds.yml's page level: tuning it moves the page."""
    indicator = INDICATOR_BY_ALERT[alert]
    config = _config(**{str(indicator.page_key): 0.07})
    text = build.build(config)[ALERTS / "workload.rules.yml"]
    (rule,) = [
        r for g in yaml.safe_load(text)["groups"] for r in g["rules"] if r.get("alert") == alert
    ]
    assert rule["labels"] == {"severity": "critical", "cause": indicator.cause}
    # The first branch is the page's own condition; the second holds it (resolve_together).
    assert (
        rule["expr"]
        .splitlines()[1]
        .endswith(":mean1m{" + 'task_type="dialog",source!="sapcontrol"} > 70')
    )
    assert (rule["for"], rule["keep_firing_for"]) == ("30s", "40s")


def test_a_cause_s_alerts_are_held_by_each_other_s_conditions() -> None:
    """Roll-in and roll-out (one message, cause roll-area) stay firing while either's own
    condition holds on the SID, so they resolve at one evaluation; a page of another cause
    is not among the conditions."""
    text = build.build(_config())[ALERTS / "workload.rules.yml"]
    rules = {r["alert"]: r for g in yaml.safe_load(text)["groups"] for r in g["rules"]}
    roll_in = rules["SAPRollInTimeHigh"]["expr"]
    held = roll_in.partition("\nor\n")[2]
    assert 'ALERTS{alertname="SAPRollInTimeHigh", alertstate="firing"}' in held
    assert "roll_in_seconds_per_step:mean1m" in held and "roll_out_seconds_per_step:mean1m" in held
    assert "db_request" not in held


def test_alerts_resolving_together_must_keep_firing_alike() -> None:
    """Two alerts of one message that kept firing for different times would resolve at
    different evaluations: the group's update would again say "firing" after the fix."""
    from alerts.rules import alert, resolve_together

    def one(name: str, keep: str) -> dict:
        return alert(
            name,
            "x > 1",
            severity="warning",
            summary="s",
            description="d",
            diagnosis="g",
            labels={"cause": "roll-area"},
            keep_firing_for=keep,
            held_value="x",
        )

    with pytest.raises(ValueError, match="SAPA, SAPB"):
        resolve_together([one("SAPA", "40s"), one("SAPB", "1m")])
    (a, b) = resolve_together([one("SAPA", "40s"), one("SAPB", "40s")])
    assert a["expr"] != b["expr"]  # each holds on its own ALERTS
    assert "_held_value" not in a and a["expr"].count("x > 1") == 3


def test_every_alert_on_a_cause_names_one_the_vocabulary_knows() -> None:
    """Alertmanager groups by cause: a misspelt cause would be a message of its own."""
    known = {*CAUSES, "dialog-response", "throughput"}
    causes = {r["labels"]["cause"] for r in ALERT_RULES if "cause" in r["labels"]}
    assert causes == known


def test_the_levels_are_recorded_for_the_dashboards() -> None:
    """sap_workload_threshold_seconds carries each indicator's warning and page level from
    thresholds.yml, so a dashboard draws what the alert reads."""
    recording = yaml.safe_load((ALERTS / "recording.rules.yml").read_text())
    levels = {
        (r["labels"]["component"], r["labels"]["level"]): float(r["expr"][len("vector(") : -1])
        for g in recording["groups"]
        for r in g["rules"]
        if r.get("record") == "sap_workload_threshold_seconds"
    }
    t = load_thresholds()
    for indicator in INDICATOR_BY_ALERT.values():
        assert levels[(indicator.component, "warning")] == pytest.approx(t.seconds(indicator))
        assert levels[(indicator.component, "page")] == pytest.approx(t.page_seconds(indicator))
    assert levels[("response", "warning")] == pytest.approx(2.0)
