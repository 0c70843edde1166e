"""docker-compose's variable substitution, for configs of servers that cannot expand
environment variables themselves (Alertmanager).

`${NAME:-default}` when NAME is unset or empty, `${NAME-default}` when it is unset,
`${NAME:?message}` and `${NAME?message}` an error saying message, `$$` a literal `$`.
Stricter than compose in one point: `${NAME}` with NAME unset is an error naming it and
the file (compose would warn and leave it empty).

Kept instead of a library: string.Template knows none of the `:-`/`:?` forms, and the
envsubst-style packages follow bash (`$$` is the pid, backslash escapes, `:=` assigns),
which would change what a template means next to docker-compose.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_VAR = re.compile(r"\$(?:\$|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\})")


class TemplateError(ValueError):
    pass


def expand(text: str, values: Mapping[str, str], origin: str) -> str:
    missing: list[str] = []
    required: list[str] = []

    def sub(match: re.Match) -> str:
        name, op, arg = match["name"], match["op"] or "", match["arg"]
        if name is None:
            return "$"
        value = values.get(name)
        # The colon forms treat an empty value as unset.
        if value is not None and not (value == "" and op.startswith(":")):
            return value
        if op.endswith("-"):
            return arg
        if op.endswith("?"):
            required.append(f"{name}: {arg or 'required'}")
        else:
            missing.append(name)
        return ""

    out = _VAR.sub(sub, text)
    problems = [f"set {', '.join(sorted(set(missing)))} (no default)"] if missing else []
    problems += dict.fromkeys(required)
    if problems:
        raise TemplateError(f"{origin}: {'; '.join(problems)}")
    return out
