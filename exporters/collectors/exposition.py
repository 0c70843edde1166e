"""/metrics in the Prometheus text format, byte for byte what prometheus_client's
`generate_latest` writes, several times faster for our families.

`generate_latest` escapes and sorts every label of every sample on every scrape (4,110
series: most of a scrape's time). Our series keep their label sets from scrape to scrape,
so the rendered `name{labels}` prefix of each is kept, keyed by the sample's name and
label items, and only the value is formatted each time. The cache is bounded: a source
whose label values churn cannot grow it without limit.

OpenMetrics (what Prometheus asks for first), `name[]` filters and other formats are left
to prometheus_client's own WSGI app.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable, Iterable
from urllib.parse import parse_qs

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder, generate_latest
from prometheus_client.exposition import gzip_accepted as _gzip_accepted
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics import exposition as om

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


def _name(name: str) -> str:
    return om.escape_metric_name(name, om.UNDERSCORES)


class TextWriter:
    """Serializes metric families as `generate_latest(..., escaping=underscores)` does."""

    def __init__(self, max_prefixes: int = MAX_CACHED_PREFIXES) -> None:
        self._prefixes: dict[tuple, str] = {}
        self._headers: dict[tuple[str, str, str], str] = {}
        self.max_prefixes = max_prefixes

    def _prefix(self, name: str, labels: dict[str, str]) -> str:
        if not labels:
            prefix = _name(name)
        else:
            body = ",".join(
                f'{om.escape_label_name(k, om.UNDERSCORES)}="{om._escape(v, om.ALLOWUTF8, False)}"'
                for k, v in sorted(labels.items())
            )
            prefix = f"{_name(name)}{{{body}}}"
        if len(self._prefixes) >= self.max_prefixes:
            self._prefixes.clear()
        return prefix

    def _header(self, name: str, mtype: str, documentation: str) -> str:
        key = (name, mtype, documentation)
        header = self._headers.get(key)
        if header is None:
            escaped = _name(name)
            header = f"# HELP {escaped} {_doc(documentation)}\n# TYPE {escaped} {mtype}\n"
            self._headers[key] = header
        return header

    def write(self, families: Iterable[Metric]) -> bytes:
        out: list[str] = []
        append = out.append
        prefixes = self._prefixes
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
                labels = s.labels
                key = (s.name, *labels.items())
                prefix = prefixes.get(key)
                if prefix is None:
                    prefix = self._prefix(s.name, labels)
                    prefixes[key] = prefix
                if s.timestamp is None:
                    line = f"{prefix} {_go_float(s.value)}\n"
                else:
                    line = f"{prefix} {_go_float(s.value)} {int(float(s.timestamp) * 1000):d}\n"
                suffix = special.get(s.name)
                if suffix is None:
                    append(line)
                else:  # OpenMetrics-only samples: a gauge of their own after the family
                    om_lines.setdefault(suffix, []).append(line)
            for suffix, lines in sorted(om_lines.items()):
                append(self._header(metric.name + suffix, "gauge", metric.documentation))
                out.extend(lines)
        return "".join(out).encode("utf-8")


def make_metrics_app(registry: CollectorRegistry, collect: Callable[[], Iterable[Metric]]):
    """A WSGI app for /metrics: the text format (what a plain `curl` or an older scraper
    asks for) from `collect()` through TextWriter; anything else from prometheus_client."""
    fallback = make_wsgi_app(registry)
    writer = TextWriter()

    def app(environ, start_response) -> list[bytes]:
        encoder, _ = choose_encoder(environ.get("HTTP_ACCEPT") or "")
        if (
            encoder is not generate_latest
            or environ["REQUEST_METHOD"] != "GET"
            or "name[]" in parse_qs(environ.get("QUERY_STRING", ""))
        ):
            return fallback(environ, start_response)
        output = writer.write(collect())
        headers = [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4)]
        if _gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING")):
            # Level 1: on loopback the bytes saved by level 9 cost more time than they save.
            output = gzip.compress(output, compresslevel=1)
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [output]

    return app
