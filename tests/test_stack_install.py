"""The installer: idempotent, atomic, and a failure names the component and the step."""

from __future__ import annotations

import pytest

from wlmon.stack.components import Component, Step
from wlmon.stack.install import InstallError, install, status


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
