"""Pinned server components and how each is built (recipes measured in STACK.md).

Each step is a bash script run with `set -euo pipefail`; `{dest}` is the component's
staging directory (renamed into the cache when every step has passed) and `{work}` a
scratch directory. The Go module cache is read-only, so a module that needs changes
before it builds is copied out of it first (`moddir`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path


def cache_root() -> Path:
    """Where built servers live, outside the repo: $WLMON_CACHE or ~/.cache/wlmon."""
    return Path(os.environ.get("WLMON_CACHE", Path.home() / ".cache" / "wlmon")).expanduser()


PRELUDE = (
    'moddir() { go mod download -json "$1"'
    " | python3 -c 'import sys,json;print(json.load(sys.stdin)[\"Dir\"])'; }\n"
    'copymod() { cp -r "$(moddir "$1")" "$2" && chmod -R u+w "$2"; }\n'
)


@dataclass(frozen=True)
class Step:
    title: str
    script: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    binaries: tuple[str, ...]  # paths relative to the component directory
    steps: tuple[Step, ...]
    # Most of its cold build is fetching packages (Perses' UI: ~410 from npm), not
    # compiling: `wlmon stack install` starts it first so the fetch overlaps the compiles.
    fetch_bound: bool = False
    # Not a server of the stack: built only when named (`wlmon stack install --only NAME`);
    # the tests that need it skip, saying how to build it, while it is absent.
    optional: bool = False
    # npm lock files its build installs from (paths in the repository): the licences of
    # the npm packages it is built with are read from them.
    npm_lockfiles: tuple[str, ...] = ()
    # The upstream release, where `version` also keys the cache by wlmon's own inputs.
    release: str = ""
    # SPDX id of the software's own licence and where it comes from (docs/licences.md).
    # Left empty it reads as unknown, which wlmon/stack/licences.py refuses as it refuses
    # AGPL, SSPL and BUSL.
    licence: str = ""
    source: str = ""

    @property
    def released(self) -> str:
        return self.release or self.version

    @property
    def directory(self) -> Path:
        return cache_root() / f"{self.name}-{self.version}"

    def path(self, binary: str) -> Path:
        return self.directory / binary


# Plugins compiled into Telegraf (a custom build keeps it small); add tags here when a
# provisioning file uses another plugin.
TELEGRAF_TAGS = ",".join(
    [
        "custom",
        "inputs.cpu", "inputs.mem", "inputs.swap", "inputs.disk", "inputs.diskio",
        "inputs.system", "inputs.net", "inputs.processes", "inputs.kernel_vmstat",
        "inputs.prometheus", "inputs.win_perf_counters",
        "outputs.influxdb", "outputs.influxdb_v2", "outputs.prometheus_client",
        "outputs.loki", "outputs.file",
        "serializers.influx", "parsers.influx", "parsers.prometheus",
        "secretstores.docker",
    ]
)  # fmt: skip

VICTORIALOGS_VERSION = "1.52.1"

SAP_HOST_EXPORTER_VERSION = "0.7.0"
SAP_HOST_EXPORTER_COMMIT = "9a0ef435c4dd576b54b19430e8e20942395e1953"
SAP_HOST_EXPORTER_MODULE = (
    "github.com/SUSE/sap_host_exporter@v0.0.0-20241220112800-" + SAP_HOST_EXPORTER_COMMIT[:12]
)

PERSES_VERSION = "0.54.0"
PERSES_COMMIT = "4c719fc19fa2"  # the v0.54.0 tag, as the module proxy reports it
PERSES_LDFLAGS = " ".join(
    f"-X github.com/prometheus/common/version.{k}={v}"
    for k, v in (("Version", PERSES_VERSION), ("Revision", PERSES_COMMIT), ("Branch", "v0.54.0"))
)
# What the perses component is built from besides the module: wlmon's UI and the plugins'
# schemas. Their digest is part of its version, so a changed UI is built again.
PERSES_INPUTS = (
    "webui/package.json",
    "webui/package-lock.json",
    "webui/build.mjs",
    "webui/index.html",
    "webui/src",
)
PERSES_INPUTS += ("webui/vendor", "provisioning/perses/plugin-schemas")


def _digest(root: Path, parts: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for part in parts:
        top = root / part
        for path in sorted([top] if top.is_file() else top.rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:10]


_REPO = Path(__file__).resolve().parents[2]

# Upstream's web UI (ui/app) needs @perses-dev/client and @perses-dev/spec, which the npm
# registry does not serve, and `make generate` fetches the plugins from GitHub: the server
# embeds wlmon's own UI instead (webui/: the @perses-dev packages from npm), where upstream's
# build puts its app (ui/app/dist, compressed and embedded by scripts/compress_assets.sh),
# and loads the plugins from archives assembled from npm (wlmon/stack/persesplugins.py).
PERSES_STEPS = (
    Step(
        "find Node.js >= 18 and npm (Debian: nodejs npm)",
        "command -v node && command -v npm\n"
        "node -e 'process.exit(+process.versions.node.split(\".\")[0] < 18 ? 1 : 0)'",
    ),
    Step(
        "copy module sources and wlmon's UI (webui/)",
        f"copymod github.com/perses/perses@v{PERSES_VERSION} {{work}}/src\n"
        "mkdir -p {work}/webui\n"
        "cd {repo}/webui && cp -r package.json package-lock.json build.mjs index.html src vendor"
        " {work}/webui/",
    ),
    Step(
        "npm ci: the @perses-dev packages and plugins from the npm registry",
        "cd {work}/webui && npm ci --no-audit --no-fund --cache {work}/npm-cache",
    ),
    Step(
        "bundle the UI (esbuild) where the server embeds its app",
        "rm -rf {work}/src/ui/app/dist\ncd {work}/webui && node build.mjs {work}/src/ui/app/dist",
    ),
    Step(
        "plugin archives: npm builds with their CUE schemas",
        "{python} -m wlmon.stack.persesplugins archives {work}/webui/node_modules"
        " {repo}/provisioning/perses/plugin-schemas {dest}/plugins-archive",
    ),
    Step(
        "embed the UI, generate the API, go build perses and percli",
        "cd {work}/src && bash scripts/compress_assets.sh >/dev/null\n"
        "go generate ./internal/api\n"
        f"go build -ldflags '-s -w {PERSES_LDFLAGS}' -o {{dest}}/perses ./cmd/perses\n"
        f"go build -ldflags '-s -w {PERSES_LDFLAGS}' -o {{dest}}/percli ./cmd/percli",
    ),
)

COMPONENTS: dict[str, Component] = {
    "prometheus": Component(
        name="prometheus",
        licence="Apache-2.0",
        source="github.com/prometheus/prometheus@v0.316.0",
        version="3.16.0",
        binaries=("prometheus", "promtool"),
        steps=(
            Step(
                "go install prometheus and promtool",
                # remove_all_sd: a service-discovery dependency is refused by the module proxy.
                "GOBIN={dest} go install -tags netgo,remove_all_sd,enable_dns_sd"
                " -ldflags '-X github.com/prometheus/common/version.Version=3.16.0'"
                " github.com/prometheus/prometheus/cmd/prometheus@v0.316.0"
                " github.com/prometheus/prometheus/cmd/promtool@v0.316.0",
            ),
        ),
    ),
    "alertmanager": Component(
        name="alertmanager",
        licence="Apache-2.0",
        source="github.com/prometheus/alertmanager@v0.34.2",
        version="0.34.2",
        binaries=("alertmanager", "amtool"),
        steps=(
            Step(
                "copy module and stub the web UI",
                # The Elm UI is not in the module zip; the API does not need it.
                "copymod github.com/prometheus/alertmanager@v0.34.2 {work}/am\n"
                "mkdir -p {work}/am/ui/app/dist\n"
                "echo '<html><body>wlmon: Alertmanager UI not built</body></html>'"
                " > {work}/am/ui/app/dist/index.html",
            ),
            Step(
                "go build alertmanager and amtool",
                "cd {work}/am && go build -o {dest}/ ./cmd/alertmanager ./cmd/amtool",
            ),
        ),
    ),
    "influxdb": Component(
        name="influxdb",
        licence="MIT",
        source="github.com/influxdata/influxdb@v1.8.10",
        version="1.8.10",
        binaries=("influxd",),
        steps=(
            Step(
                "go install influxd",
                "GOBIN={dest} go install -ldflags '-s -w -X main.version=1.8.10'"
                " github.com/influxdata/influxdb/cmd/influxd@v1.8.10",
            ),
        ),
    ),
    "telegraf": Component(
        name="telegraf",
        licence="MIT",
        source="github.com/influxdata/telegraf@v1.37.2",
        release="1.37.2",
        # The plugin set keys the cache: a build with other tags is another directory.
        version=f"1.37.2-tags{hashlib.sha256(TELEGRAF_TAGS.encode()).hexdigest()[:10]}",
        binaries=("telegraf",),
        steps=(
            Step(
                "go install telegraf (custom plugin set)",
                f"GOBIN={{dest}} go install -tags {TELEGRAF_TAGS}"
                " github.com/influxdata/telegraf/cmd/telegraf@v1.37.2",
            ),
        ),
    ),
    # The log store (Apache-2.0; Loki, which it replaces, is AGPL): one HTTP port, the Loki
    # push protocol on /insert/loki/api/v1/push, LogsQL on /select/logsql/*. cgo for gozstd.
    "victorialogs": Component(
        name="victorialogs",
        licence="Apache-2.0",
        source=f"github.com/VictoriaMetrics/VictoriaLogs@v{VICTORIALOGS_VERSION}",
        version=VICTORIALOGS_VERSION,
        binaries=("victoria-logs",),
        steps=(
            Step(
                "go install victoria-logs",
                "GOBIN={dest} go install"
                " -ldflags '-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo"
                f".Version=victoria-logs-v{VICTORIALOGS_VERSION}'"
                " github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"
                f"@v{VICTORIALOGS_VERSION}",
                env={"CGO_ENABLED": "1"},
            ),
        ),
    ),
    # The fleet profile's long-term store and global view (docs/fleet.md). v0.37+ needs a
    # capnproto dependency whose pseudo-version the module proxy refuses.
    "thanos": Component(
        name="thanos",
        licence="Apache-2.0",
        source="github.com/thanos-io/thanos@v0.36.1",
        version="0.36.1",
        binaries=("thanos",),
        steps=(
            Step(
                "copy module (its go.mod has replace lines, so `go install` refuses it)",
                "copymod github.com/thanos-io/thanos@v0.36.1 {work}/thanos",
            ),
            Step(
                "go build thanos",
                "cd {work}/thanos && go build -tags netgo"
                " -ldflags '-s -w -X github.com/prometheus/common/version.Version=0.36.1'"
                " -o {dest}/thanos ./cmd/thanos",
            ),
        ),
    ),
    # Not a server: the compose-file loader Docker Compose v2 uses, for the compose test.
    "composecheck": Component(
        name="composecheck",
        licence="Apache-2.0",
        source="github.com/compose-spec/compose-go/v2@v2.16.2 (tests/compose/composecheck)",
        version="compose-go-2.16.2",
        binaries=("composecheck",),
        steps=(
            Step(
                "go build tests/compose/composecheck",
                "cd {repo}/tests/compose/composecheck && go build -o {dest}/composecheck .",
            ),
        ),
    ),
    # SUSE's SAPControl exporter, a third-party client the model's sapstartsrv is tested
    # against (tests/integration/test_sap_host_exporter.py). Its tags (0.7.0) are not Go
    # semver, so it is pinned by the pseudo-version of 0.7.0's commit. Restricted module
    # mirrors refuse that pseudo-version (403): then the same commit is taken from a git
    # clone named by WLMON_SAP_HOST_EXPORTER_GIT. Its dependencies come from the module
    # proxy either way. Cold build 2.5 min on 2 shared cores, 12.9 MB.
    "sap_host_exporter": Component(
        name="sap_host_exporter",
        licence="Apache-2.0",
        source="github.com/SUSE/sap_host_exporter (commit 9a0ef435c4dd)",
        version=SAP_HOST_EXPORTER_VERSION,
        binaries=("sap_host_exporter",),
        optional=True,
        steps=(
            Step(
                f"fetch sap_host_exporter {SAP_HOST_EXPORTER_VERSION} (commit"
                f" {SAP_HOST_EXPORTER_COMMIT[:12]})",
                f"if ! copymod {SAP_HOST_EXPORTER_MODULE} {{work}}/src; then\n"
                '  git_dir="${{WLMON_SAP_HOST_EXPORTER_GIT:-}}"\n'
                '  if [ -z "$git_dir" ]; then\n'
                "    echo 'the module proxy refuses sap_host_exporter; set"
                " WLMON_SAP_HOST_EXPORTER_GIT to a git clone of"
                " https://github.com/SUSE/sap_host_exporter' >&2\n"
                "    exit 1\n"
                "  fi\n"
                "  rm -rf {work}/src && mkdir -p {work}/src\n"
                f'  git -C "$git_dir" archive {SAP_HOST_EXPORTER_COMMIT} | tar x -C {{work}}/src\n'
                "fi\n"
                "grep -q '^module github.com/SUSE/sap_host_exporter$' {work}/src/go.mod",
            ),
            Step(
                "go build sap_host_exporter",
                "cd {work}/src && go build"
                f" -ldflags '-s -w -X main.version={SAP_HOST_EXPORTER_VERSION}'"
                " -o {dest}/sap_host_exporter .",
            ),
        ),
    ),
    # The dashboards' web UI (wlmon/stack/perses.py): Perses' server with wlmon's UI
    # embedded and its plugins as archives it extracts at start.
    "perses": Component(
        name="perses",
        licence="Apache-2.0",
        source="github.com/perses/perses@v0.54.0 (UI: webui/, @perses-dev 0.52.0 from npm)",
        release=PERSES_VERSION,
        npm_lockfiles=("webui/package-lock.json",),
        version=f"{PERSES_VERSION}-ui{_digest(_REPO, PERSES_INPUTS)}",
        binaries=("perses", "percli", "plugins-archive/Prometheus-0.53.4.tar.gz"),
        steps=PERSES_STEPS,
        fetch_bound=True,
    ),
}
