"""What licence each part of the stack is under, and which ones wlmon may not use.

The servers' licences are declared beside their recipes (`Component.licence`); the Python
packages' come from their installed metadata (PEP 639 `License-Expression`, else the
`License` field when it is a short name, else the trove classifiers); npm packages' from the
`license` fields of a lock file a component keeps. Anything that resolves to none of the
known families is *unknown*, which fails as a forbidden one does: a licence nobody has read
is not a licence anybody may rely on.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from wlmon.stack.components import COMPONENTS
from wlmon.stack.settings import REPO_DIR


class Verdict(StrEnum):
    allowed = "allowed"
    forbidden = "forbidden"
    unknown = "unknown"


# Network copyleft and source-available licences: the registry lists here mark servers
# under them not to be used (Grafana and Loki: AGPL), and SSPL/BUSL/Elastic/Commons Clause
# restrict use rather than grant it.
FORBIDDEN = re.compile(
    r"\b(AGPL|Affero|SSPL|Server Side Public|BUSL|Business Source|Elastic-2\.0|Elastic License"
    r"|Commons Clause|Confluent Community)\b",
    re.IGNORECASE,
)

# Permissive and weak-copyleft families, by SPDX id (a prefix match, so BSD-3-Clause,
# LGPL-3.0-only and MPL-2.0 are covered) or by the words of trove classifiers and the free
# `License` field. LGPL: Python imports it as a separate library (psycopg), which the LGPL
# permits without extending to wlmon.
_ALLOWED_IDS = (
    "MIT", "MIT-0", "MIT-CMU", "BSD", "0BSD", "Apache", "ISC", "Zlib", "PSF", "Python-2.0",
    "MPL-2.0", "LGPL", "CC0", "Unlicense", "BlueOak", "CC-BY-4.0", "Artistic-2.0",
    "LLVM-exception", "HPND",
)  # fmt: skip
_ALLOWED_WORDS = re.compile(
    r"\b(MIT|BSD|Apache|ISC|Python Software Foundation|PSF|Mozilla Public License 2\.0"
    r"|MPL 2\.0|GNU Lesser General Public|LGPL|Public Domain|Unlicense|zlib|Historical"
    r" Permission)\b",
    re.IGNORECASE,
)
# A classifier that names no licence ("OSI Approved" alone) says nothing.
_EMPTY_CLASSIFIERS = {"License :: OSI Approved", "License :: Other/Proprietary License"}


# Packages whose metadata declares no licence, read by hand: (ecosystem, name) -> (SPDX id,
# where it was read). Used only where the declaration is empty: a declared licence is never
# overridden. A new version of one of these is read again (the entry names the versions).
_PERSES_PLUGINS = (
    "bar-chart-plugin", "gauge-chart-plugin", "loki-plugin", "markdown-plugin",
    "prometheus-plugin", "stat-chart-plugin", "table-plugin", "timeseries-chart-plugin",
)  # fmt: skip
_PERSES_PLUGINS = (
    "bar-chart-plugin", "gauge-chart-plugin", "loki-plugin", "markdown-plugin",
    "prometheus-plugin", "stat-chart-plugin", "table-plugin", "timeseries-chart-plugin",
)  # fmt: skip
REVIEWED: dict[tuple[str, str], tuple[str, str]] = {
    **{
        ("npm", f"@perses-dev/{plugin}"): (
            "Apache-2.0",
            "package/LICENSE of the npm tarball (Apache License 2.0), perses/plugins",
        )
        for plugin in _PERSES_PLUGINS
    },
    ("npm", "typed-function"): ("MIT", "package/LICENSE of the npm tarball 2.1.0 (MIT)"),
}


@dataclass(frozen=True)
class Licence:
    kind: str  # "server", "python", "npm"
    name: str
    version: str
    licence: str  # as declared (SPDX expression, short name or classifier words)
    verdict: Verdict
    source: str  # where the declaration was read


def judge(declared: str) -> Verdict:
    """Forbidden if any part names a forbidden licence; allowed if every part of an SPDX
    expression (or the free text) names an allowed family; unknown otherwise."""
    text = declared.strip()
    if not text:
        return Verdict.unknown
    if FORBIDDEN.search(text):
        return Verdict.forbidden
    # "A OR B": the user may pick either, so one allowed alternative is enough; "A AND B"
    # and "A WITH exception": every part must be allowed.
    alternatives = re.split(r"\s+OR\s+", text.strip("() "))
    for alternative in alternatives:
        parts = [p.strip("() ") for p in re.split(r"\s+(?:AND|WITH)\s+", alternative)]
        if all(_allowed_part(p) for p in parts if p):
            return Verdict.allowed
    return Verdict.unknown


def _allowed_part(part: str) -> bool:
    if any(part.upper().startswith(prefix.upper()) for prefix in _ALLOWED_IDS):
        return True
    return bool(_ALLOWED_WORDS.search(part))


def python_licence(dist: metadata.Distribution) -> tuple[str, str]:
    """(declared licence, which metadata field said it) of an installed distribution."""
    meta = dist.metadata
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return expression, "License-Expression"
    classifiers = [
        c
        for c in (meta.get_all("Classifier") or [])
        if c.startswith("License ::") and c not in _EMPTY_CLASSIFIERS
    ]
    free = (meta.get("License") or "").strip()
    # The free field often holds a whole licence text; its first line is read only when it
    # is short enough to be a name, else the classifiers decide.
    if free and "\n" not in free and len(free) <= 60:
        return free, "License"
    if classifiers:
        return " OR ".join(c.rsplit("::", 1)[-1].strip() for c in classifiers), "Classifier"
    if free:
        return free.splitlines()[0][:80], "License (first line)"
    return "", "none"


def python_packages(distributions: Iterable[metadata.Distribution] | None = None) -> list[Licence]:
    seen: dict[str, Licence] = {}
    for dist in distributions if distributions is not None else metadata.distributions():
        name = dist.metadata.get("Name") or "?"
        declared, field = python_licence(dist)
        seen[name.lower()] = Licence(
            "python", name, dist.version, declared, judge(declared), f"PyPI metadata: {field}"
        )
    return sorted(seen.values(), key=lambda r: r.name.lower())


def servers() -> list[Licence]:
    return [
        Licence("server", c.name, c.released, c.licence, judge(c.licence), f"recipe: {c.source}")
        for c in COMPONENTS.values()
    ]


def npm_lockfile(path: Path) -> Iterator[Licence]:
    """Every package of an npm lock file (v2/v3: `packages`, keyed by node_modules path)."""
    lock = json.loads(path.read_text(encoding="utf-8"))
    for key, entry in (lock.get("packages") or {}).items():
        if not key:  # the root project itself
            continue
        name = entry.get("name") or key.rsplit("node_modules/", 1)[-1]
        declared = entry.get("license") or ""
        if isinstance(declared, dict):  # the old {"type": ...} form
            declared = declared.get("type", "")
        source = str(path)
        if not declared and ("npm", name) in REVIEWED:
            declared, source = REVIEWED[("npm", name)]
        yield Licence("npm", name, entry.get("version", "?"), declared, judge(declared), source)


def npm_packages() -> list[Licence]:
    """The npm packages every component is built with, from the lock files it installs from."""
    rows: dict[tuple[str, str], Licence] = {}
    for component in COMPONENTS.values():
        for relative in component.npm_lockfiles:
            for row in npm_lockfile(REPO_DIR / relative):
                rows.setdefault((row.name, row.version), row)
    return sorted(rows.values(), key=lambda r: (r.name, r.version))


def everything() -> list[Licence]:
    return servers() + python_packages() + npm_packages()
