"""Grafana exports checked against Grafana's published schema, `@grafana/schema` (npm,
Apache-2.0): the TypeScript types Grafana generates from its CUE kinds. Each dashboard
becomes a TypeScript module whose object literals are typed by those types (the dashboard,
and each panel's options and custom field config by its panel kind's types), and the
TypeScript compiler checks it: an unknown field, a wrong type or an enum value Grafana does
not know fails, naming file, line and field.

The packages are installed once, pinned, into ~/.cache/wlmon (or $WLMON_CACHE); without npm
the check is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

SCHEMA_VERSION = "11.6.16"  # @grafana/schema for Grafana 11.6, the SDK's schema line
TYPESCRIPT_VERSION = "5.9.3"
CACHE = Path(os.environ.get("WLMON_CACHE", Path.home() / ".cache" / "wlmon"))
HOME = CACHE / f"npm-grafana-schema-{SCHEMA_VERSION}"
RAW = "@grafana/schema/dist/esm/raw/composable"
# The dashboard kind's types as generated from its CUE schema (the package's index exports
# a hand-tuned "veneer" of them for Grafana's frontend instead).
DASHBOARD = "@grafana/schema/dist/esm/raw/dashboard/x/dashboard_types.gen"
LOKI = "loki/dataquery/x/LokiDataQuery_types.gen"
# Panel type -> (module, options type, field config type or None).
KINDS = {
    "stat": ("stat/panelcfg/x/StatPanelCfg_types.gen", "Options", None),
    "timeseries": ("timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen", "Options", "FieldConfig"),
    "table": ("table/panelcfg/x/TablePanelCfg_types.gen", "Options", "FieldConfig"),
    "bargauge": ("bargauge/panelcfg/x/BarGaugePanelCfg_types.gen", "Options", None),
    "logs": ("logs/panelcfg/x/LogsPanelCfg_types.gen", "Options", None),
    "heatmap": ("heatmap/panelcfg/x/HeatmapPanelCfg_types.gen", "Options", "FieldConfig"),
    "text": ("text/panelcfg/x/TextPanelCfg_types.gen", "Options", None),
}
# Grafana's enums are TypeScript string enums, which a JSON string literal cannot be
# assigned to: Loose<T> is T with each enum replaced by the union of its values (an
# unknown value still fails), recursively; unknown fields still fail on the literals.
PRELUDE = """\
type Loose<T> = T extends string
  ? `${T}`
  : T extends Array<infer U>
    ? Array<Loose<U>>
    : T extends object
      ? { [K in keyof T]: Loose<T[K]> }
      : T;
// Options and field config: Grafana fills what is left out from the panel's defaults.
type LoosePartial<T> = T extends string
  ? `${T}`
  : T extends Array<infer U>
    ? Array<LoosePartial<U>>
    : T extends object
      ? { [K in keyof T]?: LoosePartial<T[K]> }
      : T;
// An annotation's target is its data source's query, as a panel's targets are
// (Array<Record<string, unknown>> in the schema); the built-in tags query keeps its type.
type Checked = Omit<Dashboard, "annotations"> & {
  annotations?: {
    list?: Array<
      Omit<AnnotationQuery, "target"> & { target?: AnnotationTarget | Record<string, unknown> }
    >;
  };
};
"""


class Unavailable(Exception):
    """npm is missing or the packages could not be installed (the reason)."""


def install() -> Path:
    """The pinned packages' node_modules, installed once."""
    tsc = HOME / "node_modules" / "typescript" / "bin" / "tsc"
    schema = HOME / "node_modules" / "@grafana" / "schema" / "package.json"
    if tsc.is_file() and schema.is_file():
        return HOME / "node_modules"
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        raise Unavailable("npm/node not found: cannot install @grafana/schema to check against")
    HOME.mkdir(parents=True, exist_ok=True)
    (HOME / "package.json").write_text('{"name": "wlmon-grafana-schema-check", "private": true}\n')
    cmd = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--save-exact",
        f"@grafana/schema@{SCHEMA_VERSION}",
        f"typescript@{TYPESCRIPT_VERSION}",
    ]
    done = subprocess.run(cmd, cwd=HOME, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise Unavailable(f"npm install failed: {done.stderr.strip()[-500:]}")
    return HOME / "node_modules"


def module(name: str, export: dict) -> str:
    """A TypeScript module typing one Grafana export by @grafana/schema."""
    model = {k: v for k, v in export.items() if not k.startswith("__")}
    lines = [
        f"import type {{ AnnotationQuery, AnnotationTarget, Dashboard }} from '{DASHBOARD}';",
        PRELUDE,
    ]
    used = {p["type"] for p in _panels(model)}
    unknown = used - set(KINDS) - {"row"}
    if unknown:
        raise ValueError(f"{name}: no schema known for panel type(s) {sorted(unknown)}")
    for kind in sorted(used - {"row"}):
        path, options, field = KINDS[kind]
        names = f"{options} as {kind}Options" + (f", {field} as {kind}Field" if field else "")
        lines.append(f"import type {{ {names} }} from '{RAW}/{path}';")
    lines.append(f"export const dashboard: Loose<Checked> = {json.dumps(model, indent=1)};")
    loki = [
        t for p in _panels(model) for t in p.get("targets", []) if t["datasource"]["type"] == "loki"
    ]
    if loki:
        # Loki's query type is published too: its targets are checked against it.
        lines.append(f"import type {{ LokiDataQuery }} from '{RAW}/{LOKI}';")
        lines += [
            f"export const loki{k}: LoosePartial<LokiDataQuery> = {json.dumps(t, indent=1)};"
            for k, t in enumerate(loki)
        ]
    for n, p in enumerate(_panels(model)):
        if p["type"] == "row":
            continue
        lines.append(
            f"// {p['title']}\nexport const options{n}: LoosePartial<{p['type']}Options> = "
            f"{json.dumps(p.get('options', {}), indent=1)};"
        )
        if KINDS[p["type"]][2]:
            custom = p.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
            typed = f"LoosePartial<{p['type']}Field>"
            lines.append(f"export const custom{n}: {typed} = {json.dumps(custom, indent=1)};")
    return "\n".join(lines) + "\n"


def _panels(model: dict) -> list[dict]:
    out = []
    for p in model.get("panels", []):
        out.append(p)
        out += p.get("panels", []) if p.get("type") == "row" else []
    return out


def check(exports: dict[str, dict], workdir: Path) -> tuple[int, str]:
    """tsc's exit code and output over one module per export."""
    modules = install()
    files = []
    for name, export in exports.items():
        path = workdir / f"{name}.ts"
        path.write_text(module(name, export))
        files.append(path.name)
    config = {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "module": "commonjs",
            "moduleResolution": "node10",
            "ignoreDeprecations": "5.0",
            "target": "es2022",
            "skipLibCheck": True,
            "typeRoots": [],
            "baseUrl": ".",
            "paths": {"@grafana/schema/*": [str(modules / "@grafana/schema/*")]},
        },
        "files": files,
    }
    (workdir / "tsconfig.json").write_text(json.dumps(config, indent=2))
    done = subprocess.run(
        ["node", str(modules / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr
