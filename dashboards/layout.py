"""A dashboard as code: panels laid out left to right in rows of 24 columns."""

from __future__ import annotations

from dashboards.defaults import PROM

# The template variables of every dashboard: SID, instance, task type, from the ST03 steps.
VARIABLES = (
    ("sid", "label_values(sap_workload_steps_total, sid)"),
    ("sap_instance", 'label_values(sap_workload_steps_total{sid=~"$sid"}, sap_instance)'),
    ("task_type", 'label_values(sap_workload_steps_total{sid=~"$sid"}, task_type)'),
)


def _variable(name: str, query: str, hidden: bool = False) -> dict:
    extra = {"hide": 2} if hidden else {}
    return {
        "name": name,
        "label": name,
        "type": "query",
        "datasource": PROM,
        "query": {"query": query, "refId": f"{name}-var"},
        "definition": query,
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "sort": 1,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        **extra,
    }


class Dashboard:
    def __init__(
        self,
        uid: str,
        title: str,
        folder: str,
        tags: list[str],
        variables: tuple[tuple[str, str], ...] = VARIABLES,
        hidden: tuple[str, ...] = (),
    ) -> None:
        self.uid, self.title, self.folder, self.tags = uid, title, folder, tags
        # (name, query) of the template variables; a dashboard of another source names
        # its own queries for the same variables.
        self.variables = variables
        # Variables no panel of this dashboard reads: kept (links pass them on), not shown.
        self.hidden = hidden
        self.panels: list[dict] = []
        self.extra_variables: list[dict] = []
        self.annotations: list[dict] = []
        self._x = self._y = 0
        self._row_h = 0

    def add(
        self,
        kind: str,
        title: str,
        targets: list[dict],
        w: int = 12,
        h: int = 8,
        unit: str = "",
        thresholds: dict | None = None,
        show_thresholds: bool = False,
        description: str = "",
        options: dict | None = None,
        custom: dict | None = None,
        transformations: list | None = None,
        min_: float | None = None,
        max_: float | None = None,
        decimals: int | None = None,
        links: list[dict] | None = None,
        overrides: list[dict] | None = None,
        mappings: list[dict] | None = None,
    ) -> None:
        if self._x + w > 24:
            self._x, self._y = 0, self._y + self._row_h
            self._row_h = 0
        defaults: dict = {"unit": unit} if unit else {}
        if thresholds:
            defaults["thresholds"] = thresholds
        if min_ is not None:
            defaults["min"] = min_
        if max_ is not None:
            defaults["max"] = max_
        if decimals is not None:
            defaults["decimals"] = decimals
        if links:
            defaults["links"] = links
        if mappings:
            defaults["mappings"] = mappings
        cust = dict(custom or {})
        if show_thresholds:
            # Dashed lines only: shading would paint healthy data in the alarm colour.
            cust["thresholdsStyle"] = {"mode": "dashed"}
        if cust:
            defaults["custom"] = cust
        if kind in ("stat", "gauge", "bargauge", "barchart"):
            defaults.setdefault("color", {"mode": "thresholds"})
        panel = {
            "id": len(self.panels) + 1,
            "type": kind,
            "title": title,
            "description": description,
            "datasource": targets[0]["datasource"],
            "gridPos": {"x": self._x, "y": self._y, "w": w, "h": h},
            "targets": [{"refId": chr(ord("A") + i), **t} for i, t in enumerate(targets)],
            "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
            "options": options or {},
        }
        if transformations:
            panel["transformations"] = transformations
        self.panels.append(panel)
        self._x += w
        self._row_h = max(self._row_h, h)

    def json(self) -> dict:
        templating = [_variable(name, query, name in self.hidden) for name, query in self.variables]
        return {
            "uid": self.uid,
            "title": self.title,
            "tags": ["wlmon", *self.tags],
            "timezone": "browser",
            "editable": False,
            "graphTooltip": 1,
            "refresh": "30s",
            "schemaVersion": 38,
            "version": 1,
            "time": {"from": "now-1h", "to": "now"},
            "templating": {"list": templating + self.extra_variables},
            "annotations": {"list": self.annotations},
            "panels": self.panels,
        }
