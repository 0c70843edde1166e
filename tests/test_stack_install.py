"""The installer: idempotent, atomic, and a failure names the component and the step."""

from __future__ import annotations

from pathlib import Path

import pytest

from wlmon.stack.components import Component, Step
from wlmon.stack.install import InstallError, install, select, status


def _component(script: str, name: str = "demo") -> Component:
    return Component(
        name=name, version="1.0", binaries=("tool",), steps=(Step("make the tool", script),)
    )


def test_builds_once_and_reuses_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "cache"))
    runs = tmp_path / "runs"
    comp = _component(f"echo run >> {runs}; printf '#!/bin/sh\\n' > {{dest}}/tool")
    assert not status(comp).installed
    first = install(comp)
    again = install(comp)
    assert first.installed and again.installed
    assert runs.read_text().count("run") == 1
    assert (tmp_path / "cache" / "demo-1.0" / "tool").is_file()


def test_a_failed_step_names_component_and_step_and_leaves_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "cache"))
    comp = _component("touch {dest}/tool.partial; exit 3", name="broken")
    with pytest.raises(InstallError, match=r"broken 1.0: step 'make the tool' failed \(exit 3\)"):
        install(comp)
    assert not status(comp).installed
    leftovers = [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".log")]
    assert leftovers == []


def test_a_step_that_forgets_a_binary_is_an_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "cache"))
    with pytest.raises(InstallError, match="demo: step 'check binaries': missing tool"):
        install(_component("true"))


def _timed_component(
    name: str, log: Path, *, fails: bool = False, fetch_bound: bool = False
) -> Component:
    """A component whose one step notes when it started and ended (and may fail)."""
    script = (
        f"echo start {name} $(date +%s.%N) >> {log}\nsleep 0.5\n"
        + ("exit 3\n" if fails else "")
        + f"echo end {name} $(date +%s.%N) >> {log}\ntouch {{dest}}/bin"
    )
    return Component(name, "1", ("bin",), (Step("work", script),), fetch_bound=fetch_bound)


def test_install_builds_two_at_once_fetch_bound_first(tmp_path, monkeypatch) -> None:
    """The fetch-bound component starts first and overlaps another build; a failed one is
    named at the end without stopping the others, whose results stay in the cache."""
    import typer

    from wlmon.cli.stack import _build

    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "log"
    comps = [
        _timed_component("first", log),
        _timed_component("broken", log, fails=True),
        _timed_component("ui", log, fetch_bound=True),
    ]
    with pytest.raises(typer.Exit):
        _build(comps, jobs=2)
    events = [line.split() for line in log.read_text().splitlines()]
    when = {(kind, name): float(t) for kind, name, t in events}
    # The fetch-bound one is in the first pair of builds: the two workers take "ui" and
    # "first" at the same moment (which of them writes its line first is a race), and
    # "broken", queued behind them, waits for one of them to end.
    assert {name for _, name, _ in events[:2]} == {"ui", "first"}
    assert when[("start", "broken")] >= min(when[("end", "ui")], when[("end", "first")])
    # Two ran at once: the second started before the first ended.
    assert when[("start", "first")] < when[("end", "ui")]
    assert ("end", "broken") not in when
    assert (tmp_path / "cache" / "first-1" / "bin").is_file()
    assert (tmp_path / "cache" / "ui-1" / "bin").is_file()
    assert not (tmp_path / "cache" / "broken-1").exists()


def test_optional_components_are_built_only_when_named() -> None:
    """sap_host_exporter (a third-party client for a test) is not part of `wlmon stack
    install`: a cold CI run does not build it; `--only sap_host_exporter` does."""

    default = {c.name for c in select([])}
    assert "sap_host_exporter" not in default and "prometheus" in default
    assert [c.name for c in select(["sap_host_exporter"])] == ["sap_host_exporter"]
