"""Where the tests find promtool: the wlmon stack cache first, then PATH."""

from __future__ import annotations

import shutil

from wlmon.stack.components import COMPONENTS, cache_root


def promtool_path() -> str:
    comp = COMPONENTS["prometheus"]
    candidate = cache_root() / f"{comp.name}-{comp.version}" / "promtool"
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("promtool")
    if found:
        return found
    raise FileNotFoundError(
        f"promtool not found in {candidate} nor on PATH: "
        "run `wlmon stack install --only prometheus`"
    )
