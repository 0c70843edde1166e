"""docs/dashboards.md: a small PNG of each dashboard as the browser test saw it (during the
db-bottleneck fault), and what each panel answers (its description in the builder).

`make dashboard-docs` runs the browser test (tests/integration/test_browser.py), which
saves full-size PNGs under tests/artifacts/dashboards/, then this module:
`python -m dashboards.docs [--shots DIR]` shrinks them into docs/dashboards/ and writes
the page. It refuses to write a page with a dashboard missing its screenshot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image

from alerts.settings import MonitoringConfig, load_monitoring_config
from dashboards import perses
from dashboards.build import dashboards
from dashboards.model import Dashboard

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "tests" / "artifacts" / "dashboards"
OUT = REPO / "docs" / "dashboards"
PAGE = REPO / "docs" / "dashboards.md"
WIDTH = 960  # half of the 1920 px the test renders at: small, still legible

HEAD = """# The dashboards, as a NOC operator sees them

Screenshots taken by the browser test (`tests/integration/test_browser.py`: Debian's
Chromium at 1920 px wide, logged in through Perses' sign-in form) while a real-time run
holds the **db-bottleneck** fault: the DB request light is red (it pages); every light
and cell reads the one-minute mean its alert pages on, orange from the paper's threshold and
red from the page level of `alerts/thresholds.yml`, so the dispatcher wait the slow
database causes downstream may show orange.
That run is at 10 times real speed, so the throughput figures (steps/s, SAPS) read ten
times what the landscape does at real speed (about 460 steps/s and 28,000 SAPS).
The fleet overview is the same single-SID stack's (a fleet, `wlmon up --profile fleet`,
has a row per SID; `tests/integration/test_fleet_thanos.py` reads its queries through
Thanos query).
Rebuilt by one command, `make dashboard-docs` (about 5 minutes on 2 cores; it needs the
stack built by `wlmon stack install`). Click a picture for the full-size file.

"""


ALERTS = """## Alerts in Alertmanager

[![Alerts in Alertmanager](dashboards/alerts.png)](dashboards/alerts.png)

The UI's `/alerts` page (linked from the home page and beside every dashboard's title) lists
what wlmon's Alertmanager holds now, read every 15 s: the **active** alerts (notified), the
**inhibited** ones (muted by a cause alert, provisioning/alertmanager/alertmanager.yml) and
the **silenced** ones, each with its severity, SID, instance, since when (local time and how
long ago), summary, receivers and a link to its runbook. The heartbeat (SAPWatchdog) is set
apart on top: missing, it says that Prometheus does not reach Alertmanager. The page reads
Alertmanager through Perses' proxy (the global datasource `alertmanager`, GET of
/api/v2/alerts and /api/v2/status only), so the browser never holds Alertmanager's password
and a viewer cannot silence through it; silences are made in Alertmanager's own UI or with
amtool. (The official Perses image docker-compose runs has upstream's UI, without this page.)

"""


IMPORT = """## Into your own Grafana

Every dashboard above is also written as a Grafana export (Grafana 11.x, schema checked
against `@grafana/schema` 11.6 by `tests/dashboards/test_schemas.py`), one file per
dashboard under `dashboards/grafana/<folder>/<name>.json` (folders `noc`, `sap`,
`database`, `hosts`, `forensics`), built from the same definitions as wlmon's own Perses
dashboards (`dashboards/perses/<name>.json`) by `python -m dashboards.build` with
grafana-foundation-sdk (Apache-2.0).

Data sources first, in your Grafana (Connections → Data sources):

| input the file asks for | plugin | point it at |
|---|---|---|
| `DS_PROMETHEUS` | Prometheus (built in) | the Prometheus that scrapes wlmon's exporters, or Thanos query for a fleet (`wlmon up --profile fleet`): every query is PromQL over `sap_*` series and wlmon's recording rules (`alerts/`) |
| `DS_LOGS` | VictoriaLogs (`victoriametrics-logs-datasource`, Apache-2.0, installed with `grafana-cli plugins install victoriametrics-logs-datasource`) | the VictoriaLogs wlmon's log sink writes to; the logs panels and the forensics annotations are LogsQL |
| `DS_INFLUXDB` | InfluxDB (built in), query language **Flux** | the InfluxDB Telegraf writes to, bucket `wlmon/autogen` (OS counters' "This host" panels, the forensics run picker and tables) |

Then Dashboards → New → Import → Upload dashboard JSON file, one file at a time, pick the
folder and the data source for each input; or with the HTTP API (Grafana fills the inputs
the file's `__inputs` names from the values given):

```sh
for f in dashboards/grafana/*/*.json; do
  jq '{dashboard: ., overwrite: true, inputs: [
        {name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus", value: "<your prometheus uid>"},
        {name: "DS_LOGS", type: "datasource", pluginId: "victoriametrics-logs-datasource", value: "<your victorialogs uid>"},
        {name: "DS_INFLUXDB", type: "datasource", pluginId: "influxdb", value: "<your influxdb uid>"}]}' "$f" |
  curl -sf -u admin:"$GRAFANA_PASSWORD" -H 'Content-Type: application/json' \
       -X POST http://your-grafana:3000/api/dashboards/import -d @-
done
```

A file asks only for the inputs it uses (`__inputs`). The dashboards link to each other by
uid (`/d/wlmon-noc`, ...), so import all eight.

With Loki instead of VictoriaLogs as the log store (wlmon's sink speaks the Loki push
protocol to either), write the exports whose logs panels and annotations read Loki in
LogQL (each log query is defined in both languages), and import those:

```sh
.venv/bin/python -m dashboards.build --grafana-loki /tmp/wlmon-grafana-loki
```

`DS_LOGS` then asks for a Loki data source (plugin `loki`); everything else is the same.
"""


def shrink(src: Path, dst: Path, width: int = WIDTH) -> None:
    with Image.open(src) as img:
        height = round(img.height * width / img.width)
        small = img.convert("RGB").resize((width, height), Image.LANCZOS)
    dst.parent.mkdir(parents=True, exist_ok=True)
    # 256 colours are plenty for a dark UI and cut the file to about a third.
    small.quantize(256, dither=Image.Dither.NONE).save(dst, optimize=True)


def section(model: Dashboard, picture: str) -> str:
    lines = [f"## {model.title}", "", f"[![{model.title}]({picture})]({picture})", ""]
    lines += ["| panel | what it answers |", "|---|---|"]
    for panel in model.panels:
        answer = " ".join(panel.description.split()) or "—"
        lines.append(f"| {panel.title} | {answer.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write(config: MonitoringConfig, shots: Path, out: Path = OUT, page: Path = PAGE) -> list[str]:
    """The page and its pictures; the dashboards that have no screenshot (nothing written)."""
    models = dashboards(config)
    # The browser test saves each as the Perses resource it opened (`<name>.png`).
    names = {m.uid: perses.dashboard(m)["metadata"]["name"] for m in models}
    missing = [names[m.uid] for m in models if not (shots / f"{names[m.uid]}.png").is_file()]
    if missing:
        return missing
    parts = [HEAD]
    for model in models:
        name = f"{names[model.uid]}.png"
        shrink(shots / name, out / name)
        parts.append(section(model, f"{out.name}/{name}"))
    if (shots / "alerts.png").is_file():
        shrink(shots / "alerts.png", out / "alerts.png")
        parts.append(ALERTS)
    parts.append(IMPORT)
    page.write_text("\n".join(parts))
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboards.docs", description=__doc__)
    parser.add_argument("--shots", type=Path, default=SHOTS, help="the browser test's PNGs")
    args = parser.parse_args(argv)
    missing = write(load_monitoring_config(), args.shots)
    if missing:
        print(
            f"error: no screenshot of {', '.join(missing)} in {args.shots}; "
            "run the browser test first (make dashboard-docs)",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {PAGE.relative_to(REPO)} and {OUT.relative_to(REPO)}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
