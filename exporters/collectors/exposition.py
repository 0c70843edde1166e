"""/metrics in the Prometheus text format, byte for byte what prometheus_client's
`generate_latest` writes, several times faster for our families; and OpenMetrics likewise.

`generate_latest` escapes and sorts every label of every sample on every scrape (4,110
series: most of a scrape's time). Our series keep their label sets from scrape to scrape,
so the rendered `name{labels}` prefix of each is kept, keyed by the sample's name and
label items, and only the value is formatted each time. The cache is bounded: a source
whose label values churn cannot grow it without limit.

The same for OpenMetrics (what Prometheus asks for first). `name[]` filters, other formats
and samples with exemplars or native histograms are left to prometheus_client's own app.
"""

from __future__ import annotations

import gzip
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.exposition import gzip_accepted as _gzip_accepted
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as om

log = logging.getLogger(__name__)


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """The exporters' HTTP server (the model's and the monitor-only one): a thread per
    request, so a slow scrape never holds /healthz."""

    daemon_threads = True
    allow_reuse_address = True


class QuietHandler(WSGIRequestHandler):
    """Access lines at debug level: every scrape is a request."""

    def log_message(self, format, *args) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


MAX_CACHED_PREFIXES = 200_000
_OM_SUFFIXES = ("_created", "_gsum", "_gcount")
_INF, _MINUS_INF = math.inf, -math.inf


def _go_float(value: float) -> str:
    """prometheus_client.utils.floatToGoString, with the common case first."""
    d = float(value)
    if d != d:
        return "NaN"
    if d == _INF:
        return "+Inf"
    if d == _MINUS_INF:
        return "-Inf"
    s = repr(d)
    dot = s.find(".")
    # Go switches to exponents sooner than Python.
    if d > 0 and dot > 6:
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1 :]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return s


def _doc(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n")


class _Writer(ABC):
    """What both formats share: a bounded cache of rendered series prefixes."""

    def __init__(self, escaping: str, max_prefixes: int) -> None:
        self.escaping = escaping
        self.max_prefixes = max_prefixes
        self._prefixes: dict[tuple, str] = {}
        self._headers: dict[tuple, str] = {}

    @abstractmethod
    def _render_prefix(self, name: str, labels: dict[str, str]) -> str:
        """`name{labels}` as the format writes it."""

    def prefix(self, name: str, labels: dict[str, str]) -> str:
        key = (name, *labels.items())
        prefix = self._prefixes.get(key)
        if prefix is None:
            if len(self._prefixes) >= self.max_prefixes:
                self._prefixes.clear()
            prefix = self._prefixes[key] = self._render_prefix(name, labels)
        return prefix


class TextWriter(_Writer):
    """Serializes metric families as prometheus_client's `generate_latest` does."""

    def __init__(
        self, escaping: str = om.UNDERSCORES, max_prefixes: int = MAX_CACHED_PREFIXES
    ) -> None:
        super().__init__(escaping, max_prefixes)

    def _render_prefix(self, name: str, labels: dict[str, str]) -> str:
        esc = self.escaping
        labelstr = ",".join(
            f'{om.escape_label_name(k, esc)}="{om._escape(v, om.ALLOWUTF8, False)}"'
            for k, v in sorted(labels.items())
        )
        if esc != om.ALLOWUTF8 or om._is_valid_legacy_metric_name(name):
            return om.escape_metric_name(name, esc) + (f"{{{labelstr}}}" if labelstr else "")
        return f"{{{om.escape_metric_name(name, esc)}{',' if labelstr else ''}{labelstr}}}"

    def _header(self, name: str, mtype: str, documentation: str) -> str:
        key = (name, mtype, documentation)
        header = self._headers.get(key)
        if header is None:
            escaped = om.escape_metric_name(name, self.escaping)
            header = f"# HELP {escaped} {_doc(documentation)}\n# TYPE {escaped} {mtype}\n"
            self._headers[key] = header
        return header

    def write(self, families: Iterable[Metric]) -> bytes:
        out: list[str] = []
        append = out.append
        prefix = self.prefix
        for metric in families:
            mname, mtype = metric.name, metric.type
            # The same munging from OpenMetrics names into the Prometheus format.
            if mtype == "counter":
                mname += "_total"
            elif mtype == "info":
                mname, mtype = mname + "_info", "gauge"
            elif mtype == "stateset":
                mtype = "gauge"
            elif mtype == "gaugehistogram":
                mtype = "histogram"
            elif mtype == "unknown":
                mtype = "untyped"
            append(self._header(mname, mtype, metric.documentation))
            om_lines: dict[str, list[str]] = {}
            special = {metric.name + suffix: suffix for suffix in _OM_SUFFIXES}
            for s in metric.samples:
                head = prefix(s.name, s.labels)
                if s.timestamp is None:
                    line = f"{head} {_go_float(s.value)}\n"
                else:
                    line = f"{head} {_go_float(s.value)} {int(float(s.timestamp) * 1000):d}\n"
                suffix = special.get(s.name)
                if suffix is None:
                    append(line)
                else:  # OpenMetrics-only samples: a gauge of their own after the family
                    om_lines.setdefault(suffix, []).append(line)
            for suffix, lines in sorted(om_lines.items()):
                append(self._header(metric.name + suffix, "gauge", metric.documentation))
                out.extend(lines)
        return "".join(out).encode("utf-8")


class OpenMetricsWriter(_Writer):
    """Serializes metric families as prometheus_client's `openmetrics.generate_latest`
    does, for samples without exemplars or native histograms (ours have none; a family
    with one makes `write` return None, and the caller falls back)."""

    def __init__(
        self, escaping: str = om.UNDERSCORES, max_prefixes: int = MAX_CACHED_PREFIXES
    ) -> None:
        super().__init__(escaping, max_prefixes)

    def _render_prefix(self, name: str, labels: dict[str, str]) -> str:
        esc, rune = self.escaping, om._is_legacy_labelname_rune
        if esc == om.ALLOWUTF8 and not om._is_valid_legacy_metric_name(name):
            labelstr = om.escape_metric_name(name, esc) + ("," if labels else "")
            bare = True
        else:
            labelstr, bare = "", False
        if labels:
            labelstr += ",".join(
                f'{om.escape_label_name(k, esc)}="{om._escape(v, om.ALLOWUTF8, rune)}"'
                for k, v in sorted(labels.items())
            )
        if labelstr:
            labelstr = "{" + labelstr + "}"
        if bare:
            return labelstr
        return om._escape(name, esc, rune) + labelstr

    def _header(self, metric: Metric) -> str:
        key = (metric.name, metric.type, metric.documentation, metric.unit)
        header = self._headers.get(key)
        if header is None:
            name = om.escape_metric_name(metric.name, self.escaping)
            doc = om._escape(metric.documentation, om.ALLOWUTF8, om._is_legacy_labelname_rune)
            header = f"# HELP {name} {doc}\n# TYPE {name} {metric.type}\n"
            if metric.unit:
                header += f"# UNIT {name} {metric.unit}\n"
            self._headers[key] = header
        return header

    def write(self, families: Iterable[Metric]) -> bytes | None:
        out: list[str] = []
        append = out.append
        prefix = self.prefix
        for metric in families:
            append(self._header(metric))
            for s in metric.samples:
                if s.exemplar or s.native_histogram:
                    return None
                value = "" if s.value is None else _go_float(s.value)
                timestamp = "" if s.timestamp is None else f" {s.timestamp}"
                append(f"{prefix(s.name, s.labels)} {value}{timestamp}\n")
        append("# EOF\n")
        return "".join(out).encode("utf-8")


def make_metrics_app(registry: CollectorRegistry, collect: Callable[[], Iterable[Metric]]):
    """A WSGI app for /metrics: the text and OpenMetrics formats from `collect()` through
    the writers above; `name[]` filters, other methods and any family the writers do not
    cover through prometheus_client's own app."""
    fallback = make_wsgi_app(registry)
    writers: dict[tuple, TextWriter | OpenMetricsWriter] = {}

    def writer_for(encoder) -> TextWriter | OpenMetricsWriter | None:
        func = getattr(encoder, "func", encoder)
        keywords = getattr(encoder, "keywords", {})
        escaping = keywords.get("escaping", om.UNDERSCORES)
        if func is generate_latest:
            kind = TextWriter
        elif func is om.generate_latest and keywords.get("version", "1.0.0") == "1.0.0":
            kind = OpenMetricsWriter
        else:
            return None
        key = (kind, escaping)
        if key not in writers:
            writers[key] = kind(escaping)
        return writers[key]

    def app(environ, start_response) -> list[bytes]:
        encoder, content_type = choose_encoder(environ.get("HTTP_ACCEPT") or "")
        writer = writer_for(encoder)
        if (
            writer is None
            or environ["REQUEST_METHOD"] != "GET"
            or "name[]" in parse_qs(environ.get("QUERY_STRING", ""))
        ):
            return fallback(environ, start_response)
        output = writer.write(collect())
        if output is None:
            return fallback(environ, start_response)
        headers = [("Content-Type", content_type)]
        if _gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING")):
            # Level 1: on loopback the bytes saved by level 9 cost more time than they save.
            output = gzip.compress(output, compresslevel=1)
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [output]

    return app
