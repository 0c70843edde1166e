"""Pinned server components and how each is built (recipes measured in STACK.md).

Each step is a bash script run with `set -euo pipefail`; `{dest}` is the component's
staging directory (renamed into the cache when every step has passed) and `{work}` a
scratch directory. The Go module cache is read-only, so a module that needs changes
before it builds is copied out of it first (`moddir`).
"""

from __future__ import annotations

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
    # Most of its cold build is fetching packages (Grafana's UI: ~3,200 from npm), not
    # compiling: `wlmon stack install` starts it first so the fetch overlaps the compiles.
    fetch_bound: bool = False
    # Not a server of the stack: built only when named (`wlmon stack install --only NAME`);
    # the tests that need it skip, saying how to build it, while it is absent.
    optional: bool = False

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
    ]
)  # fmt: skip

# A served 2023 main commit, about 10.1; the proxy refuses Grafana's tags.
GRAFANA_MODULE = "github.com/grafana/grafana@v1.9.2-0.20230609164553-81d85ce8028d"
GRAFANA_COMMIT = "81d85ce8028d"
GRAFANA_VERSION = "10.1.0-pre.20230609"
YARN = "node .yarn/releases/yarn-3.4.1.cjs"

VICTORIALOGS_VERSION = "1.52.1"

SAP_HOST_EXPORTER_VERSION = "0.7.0"
SAP_HOST_EXPORTER_COMMIT = "9a0ef435c4dd576b54b19430e8e20942395e1953"
SAP_HOST_EXPORTER_MODULE = (
    "github.com/SUSE/sap_host_exporter@v0.0.0-20241220112800-" + SAP_HOST_EXPORTER_COMMIT[:12]
)

FRONTEND_STEPS = (
    Step(
        "find Node.js >= 18, npm and curl (Debian: nodejs npm curl)",
        "command -v node && command -v npm && command -v curl\n"
        "node -e 'process.exit(+process.versions.node.split(\".\")[0] < 18 ? 1 : 0)'",
    ),
    Step(
        "copy module sources, pin xlsx to the registry's 0.18.5, set the version",
        f"copymod {GRAFANA_MODULE} {{work}}/src\n"
        "{python} -m wlmon.stack.frontend pin-xlsx {work}/src/package.json\n"
        "{python} -m wlmon.stack.frontend set-version {work}/src/package.json"
        f" {GRAFANA_VERSION}",
    ),
    Step(
        "yarn install from the npm registry (no browser downloads)",
        # Yarn's global folder (and its mirror) inside the scratch directory: nothing lands
        # in ~. The mirror stays on: without it Yarn 3 looks for git packages (tether-drop,
        # shipped in .yarn/cache) under another file name and tries to clone them.
        f"export YARN_GLOBAL_FOLDER={{work}}/yarn-global\ncd {{work}}/src && {YARN} install",
        env={
            "CYPRESS_INSTALL_BINARY": "0",
            "PUPPETEER_SKIP_DOWNLOAD": "1",
            "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
            "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
            "YARN_ENABLE_IMMUTABLE_INSTALLS": "false",  # package.json's xlsx changed
            "YARN_ENABLE_TELEMETRY": "0",
            "YARN_ENABLE_PROGRESS_BARS": "false",
        },
    ),
    Step(
        "patch Yarn 3.4.1's .pnp.loader.mjs for Node 20 (yarnpkg/berry#5677)",
        "{python} -m wlmon.stack.frontend patch-pnp-loader {work}/src/.pnp.loader.mjs",
    ),
    Step(
        "fill public/vendor: flot and bootstrap-tagsinput from npm, bootstrap from Maven Central",
        "mkdir -p {work}/dl/flot {work}/dl/bootstrap-tagsinput && cd {work}/dl\n"
        "npm pack --silent --cache {work}/npm-cache flot@0.8.3 bootstrap-tagsinput@0.7.1\n"
        "tar xzf flot-0.8.3.tgz -C flot\n"
        "tar xzf bootstrap-tagsinput-0.7.1.tgz -C bootstrap-tagsinput\n"
        "curl -fsSL -o bootstrap.jar"
        " https://repo1.maven.org/maven2/org/webjars/bootstrap/2.3.2/bootstrap-2.3.2.jar\n"
        "{python} -m wlmon.stack.frontend fill-vendor {work}/src/public {work}/dl",
    ),
    Step(
        "yarn build (webpack, production), then delete webpack's cache",
        f"cd {{work}}/src && {YARN} build\n"
        "rm -rf {work}/src/.yarn/.cache {work}/src/node_modules/.cache",
        env={"NODE_OPTIONS": "--max-old-space-size=8192", "YARN_ENABLE_TELEMETRY": "0"},
    ),
    Step(
        "copy public/ (without source maps) into the cache",
        "find {work}/src/public/build -name '*.map' -delete\ncp -r {work}/src/public {dest}/public",
    ),
)

COMPONENTS: dict[str, Component] = {
    "prometheus": Component(
        name="prometheus",
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
        version="1.37.2",
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
    "grafana": Component(
        name="grafana",
        version=GRAFANA_VERSION,
        # version.txt: written with the version ldflags, so a build without them is redone.
        binaries=("grafana", "home/conf/defaults.ini", "version.txt"),
        steps=(
            Step(
                "copy module (it is also Grafana's home path)",
                f"copymod {GRAFANA_MODULE} {{dest}}/home",
            ),
            Step(
                "generate wire_gen.go",
                # wire < 0.7 fails on Go 1.26.
                "GOBIN={work}/bin go install github.com/google/wire/cmd/wire@v0.7.0\n"
                "cd {dest}/home && {work}/bin/wire gen -tags oss ./pkg/server",
            ),
            Step(
                "go build grafana (cgo)",
                # The version the UI and /api/health report is the one built (else 9.2.0).
                "cd {dest}/home && go build -o {dest}/grafana"
                f" -ldflags '-X main.version={GRAFANA_VERSION} -X main.commit={GRAFANA_COMMIT}'"
                " ./pkg/cmd/grafana\n"
                f"echo {GRAFANA_VERSION} > {{dest}}/version.txt",
                env={"CGO_ENABLED": "1"},
            ),
        ),
    ),
    # The web UI of the same commit (wlmon/stack/frontend.py says why each step is there).
    "grafana-ui": Component(
        name="grafana-ui",
        fetch_bound=True,
        version=GRAFANA_VERSION,
        # Both generated by `yarn build` (the module has only their templates).
        binaries=("public/views/index.html", "public/views/error.html"),
        steps=FRONTEND_STEPS,
    ),
}
