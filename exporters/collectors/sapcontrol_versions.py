"""What GetVersionInfo and ABAPGetComponentList say an instance runs, read into typed rows.

GetVersionInfo lists the instance's executables, each with SAP's version text, e.g.
`753, patch 1100, changelist 2117385, RKS compatibility level 1, optU (Jan 10 2024,
21:10:06), linuxx86_64` (the same text `disp+work -v` prints as kernel release and patch
number). Only the release and the patch are read: the rest (build, platform) is free text.
A text that does not start with a release and a patch is not guessed at: it is counted as
unread, so a new format shows as a number, not as a wrong version.

Executables are labelled by a fixed vocabulary (the kernel's programs sapstartsrv starts and
the database library), never by the file name as given: the path names the SID and
instance, and other files (libraries, tools) would grow the label without bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from exporters.sapcontrol.schema import Record

# A kernel release (753, 789, 46D, 722_EXT) and its patch number, at the start of the text.
VERSION = re.compile(
    r"^\s*(?P<release>[0-9]{2,3}[A-Z]?(?:_[A-Z]+)?)\s*,\s*patch\s+(?P<patch>[0-9]+)\b"
)
# The kernel programs an instance runs (file name without directory and .exe, lower case).
EXECUTABLES = frozenset(
    {
        "sapstartsrv",
        "disp+work",
        "gwrd",
        "icman",
        "msg_server",
        "enserver",
        "enq_server",
        "enrepserver",
        "enq_replicator",
        "jstart",
        "igswd_mt",
        "sapwebdisp",
    }
)
# The database interface library (dbdb6slib.so, dbhdbslib.so, dboraslib.dll): one label.
DBSL = re.compile(r"^db[a-z0-9]+slib\.(?:so|dll|sl|o)$")
# CVERS component names: letters, digits, _ / - (SAP_BASIS, S4CORE, /SAPAPO/..., ST-PI).
COMPONENT = re.compile(r"^[A-Z0-9_/-]{1,30}$")
# A system's CVERS holds tens to a few hundred rows; past this many the rest is only counted.
MAX_COMPONENTS = 300


@dataclass(frozen=True)
class KernelFile:
    executable: str  # from EXECUTABLES, or "dbsl"
    release: str
    patch: int


@dataclass(frozen=True)
class KernelVersions:
    files: tuple[KernelFile, ...]
    unread: int  # kernel executables whose version text did not read


@dataclass(frozen=True)
class Component:
    component: str
    release: str
    support_package: str


def executable(filename: str) -> str | None:
    """The executable's label from GetVersionInfo's Filename (a Unix or Windows path)."""
    name = re.split(r"[\\/]", filename.strip())[-1].lower()
    if DBSL.match(name):
        return "dbsl"
    name = name.removesuffix(".exe")
    return name if name in EXECUTABLES else None


def kernel_versions(rows: list[Record]) -> KernelVersions:
    """GetVersionInfo's rows: each known executable's release and patch (the first row of
    an executable listed twice); unknown files are left out, unreadable texts counted."""
    files: dict[str, KernelFile] = {}
    unread = 0
    for row in rows:
        name = executable(str(row.get("Filename") or ""))
        if name is None or name in files:
            continue
        match = VERSION.match(str(row.get("VersionInfo") or ""))
        if match is None:
            unread += 1
            continue
        files[name] = KernelFile(name, match["release"], int(match["patch"]))
    return KernelVersions(tuple(files[k] for k in sorted(files)), unread)


def components(rows: list[Record]) -> tuple[list[Component], int]:
    """ABAPGetComponentList's rows as components (at most MAX_COMPONENTS, by name), and
    how many rows the answer had. The support package level keeps SAP's digits ("0045")."""
    out: dict[str, Component] = {}
    for row in rows:
        name = str(row.get("component") or "").strip().upper()
        release = str(row.get("release") or "").strip()
        if not COMPONENT.match(name) or not release or len(release) > 10:
            continue
        level = str(row.get("patchlevel") or "").strip()[:10]
        out.setdefault(name, Component(name, release, level))
    kept = [out[k] for k in sorted(out)][:MAX_COMPONENTS]
    return kept, len(rows)
