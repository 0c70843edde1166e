"""`${NAME}` / `${NAME:-default}` substitution for configs of servers that cannot expand
environment variables themselves (Alertmanager). A missing variable without a default is
an error naming it and the file."""

from __future__ import annotations

import re
from collections.abc import Mapping

_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}")


class TemplateError(ValueError):
    pass


def expand(text: str, values: Mapping[str, str], origin: str) -> str:
    missing: list[str] = []

    def sub(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in values and values[name] != "":
            return values[name]
        if default is not None:
            return default
        missing.append(name)
        return ""

    out = _VAR.sub(sub, text)
    if missing:
        raise TemplateError(f"{origin}: set {', '.join(sorted(set(missing)))} (no default)")
    return out
