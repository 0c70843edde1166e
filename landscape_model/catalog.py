"""Finds and loads the shipped (or user-supplied) landscapes, scenarios and faults."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from landscape_model.config import Fault, Scenario

DATA_DIR = Path(__file__).parent / "data"


class ConfigError(ValueError):
    """A YAML document that cannot be used; the message names the file and the field."""


# libyaml's parser where PyYAML has it: the same safe constructor and resolver (YAML 1.1
# booleans and integers, duplicate keys, tags alike; every shipped file reads the same,
# tested), an eighth of the time (the SD scenario and landscape: 60 -> 8 ms a read, read
# twice by `wlmon whatif`). A document it refuses (a %YAML 1.3 directive, an escaped lone
# surrogate) is read again by the Python parser, whose message (line and column) the
# errors quote. Not quite the same documents: libyaml also reads a tab as separation
# ('users:\t500', 'a: 1\t# note': the values YAML gives them) and nesting past Python's
# recursion limit, which the Python parser refused.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        try:
            doc = yaml.load(text, Loader=_LOADER)  # a safe loader (the C one)
        except yaml.YAMLError:
            doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return doc


def _describe(exc: ValidationError, origin: str) -> ConfigError:
    # One line (a command line's error is one line), every field named in it.
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or '(document)'}: {err['msg']}"
        for err in exc.errors()
    ]
    return ConfigError(f"{origin}: invalid configuration: {'; '.join(problems)}")


def deep_merge(base: Any, patch: Any) -> Any:
    """Merge patch over base: mappings recursively, lists of named mappings by name."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = copy.deepcopy(base)
        for key, value in patch.items():
            merged[key] = deep_merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    if (
        isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(x, dict) and "name" in x for x in base + patch)
    ):
        by_name = {x["name"]: copy.deepcopy(x) for x in base}
        for item in patch:
            by_name[item["name"]] = deep_merge(by_name.get(item["name"], {}), item)
        return list(by_name.values())
    return copy.deepcopy(patch)


def parse_setting(item: str) -> tuple[str, Any]:
    """`path=value` of --set: a dotted path and a YAML scalar (or flow list/mapping)."""
    path, sep, text = item.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ConfigError(f"--set {item!r}: expected path=value, e.g. users=3000")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {path}: value {text!r} is not valid YAML: {exc}") from exc
    return path, value


def apply_setting(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """doc with the field at a dotted path set. A list of named mappings (buffer pools,
    locks, SAP buffers) is addressed by name, any other list by index; the last part of the
    path may name a field the document leaves at its default. Errors name the path."""
    out = copy.deepcopy(doc)
    parts = path.split(".")
    node: Any = out
    for depth, part in enumerate(parts):
        here = ".".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if isinstance(node, dict):
            if part not in node and not last:
                known = ", ".join(sorted(map(str, node))) or "none"
                raise ConfigError(f"--set {path}: no field {here!r} (known here: {known})")
            if last:
                node[part] = value
            else:
                node = node[part]
        elif isinstance(node, list):
            if node and all(isinstance(x, dict) and "name" in x for x in node):
                match = [i for i, x in enumerate(node) if x["name"] == part]
                if not match:
                    known = ", ".join(str(x["name"]) for x in node)
                    raise ConfigError(f"--set {path}: no entry named {part!r} (known: {known})")
                key = match[0]
            else:
                try:
                    key = int(part)
                    node[key]  # raises IndexError past the end
                except (ValueError, IndexError):
                    raise ConfigError(
                        f"--set {path}: {here!r} is not an index of a list of {len(node)}"
                    ) from None
            if last:
                node[key] = value
            else:
                node = node[key]
        else:
            raise ConfigError(f"--set {path}: {'.'.join(parts[:depth])!r} is not a mapping")
    return out


def read_landscape(path: Path) -> dict[str, Any]:
    """A user's landscape file (the shape of data/landscapes/*.yml)."""
    if not path.is_file():
        raise ConfigError(f"--landscape {path}: no such file")
    return _read_yaml(path)


class Catalog:
    """The YAML documents under one data directory."""

    def __init__(self, data_dir: Path = DATA_DIR) -> None:
        self.data_dir = data_dir
        # Documents are read once: a running model is not changed by edits on disk.
        self._docs: dict[Path, dict[str, Any]] = {}

    def _doc(self, path: Path) -> dict[str, Any]:
        if path not in self._docs:
            self._docs[path] = _read_yaml(path)
        return copy.deepcopy(self._docs[path])

    def preload(self) -> None:
        """Read every scenario, landscape and fault now (a long-running exporter does)."""
        for kind in ("scenarios", "landscapes", "faults"):
            for name in self._names(kind):
                self._doc(self._path(kind, name))

    def _names(self, kind: str) -> list[str]:
        return sorted(p.stem for p in (self.data_dir / kind).glob("*.yml"))

    def scenarios(self) -> list[str]:
        return self._names("scenarios")

    def fault_names(self) -> list[str]:
        return self._names("faults")

    def _path(self, kind: str, name: str) -> Path:
        path = self.data_dir / kind / f"{name}.yml"
        if not path.is_file():
            known = ", ".join(self._names(kind)) or "none"
            raise ConfigError(f"unknown {kind[:-1]} {name!r} (known: {known})")
        return path

    def scenario_document(self, name: str, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
        """The scenario with its landscape read in; `base: NAME` takes every field it does
        not set from another scenario (a landscape variant of the same workload)."""
        doc = self._doc(self._path("scenarios", name))
        base = doc.pop("base", None)
        if base is not None:
            if base in (*_seen, name):
                raise ConfigError(f"scenario {name!r}: base scenarios form a loop via {base!r}")
            doc = deep_merge(self.scenario_document(base, (*_seen, name)), doc)
        landscape = doc.get("landscape")
        if isinstance(landscape, str):
            doc["landscape"] = self._doc(self._path("landscapes", landscape))
        return doc

    def fault(self, name: str) -> Fault:
        path = self._path("faults", name)
        try:
            return Fault.model_validate(self._doc(path))
        except ValidationError as exc:
            raise _describe(exc, str(path)) from exc

    def faults(self) -> list[Fault]:
        return [self.fault(n) for n in self.fault_names()]

    def scenario(
        self,
        name: str,
        faults: list[str] | tuple[str, ...] = (),
        overrides: dict | None = None,
        landscape: Path | None = None,
        settings: list[str] | tuple[str, ...] = (),
    ) -> Scenario:
        """The scenario document, then in this order (a later step wins where two set the
        same field): the landscape file if given, the named faults merged over it in order,
        the --set settings, and last the run's own changes (`overrides`, e.g. the users of a
        ramp). So `--set` can ask what a fault's setting would need, e.g. more work
        processes under too-few-work-processes (docs/model.md)."""
        doc = self.scenario_document(name)
        origin = str(self._path("scenarios", name))
        if landscape is not None:
            doc["landscape"] = read_landscape(landscape)
            origin += f" on {landscape}"
        for fault_name in faults:
            doc = deep_merge(doc, self.fault(fault_name).patch)
            origin += f" + fault {fault_name}"
        for item in settings:
            doc = apply_setting(doc, *parse_setting(item))
        if settings:
            origin += " + --set " + " ".join(settings)
        if overrides:
            doc = deep_merge(doc, overrides)
            origin += " + overrides"
        try:
            return Scenario.model_validate(doc)
        except ValidationError as exc:
            raise _describe(exc, origin) from exc
