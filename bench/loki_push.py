"""CPU per push of the Loki protocol: one pooled client per sink against a client per push
(issue 26).

A loopback HTTP server (in this process, so its CPU counts in both variants) answers
like Loki's push API (204); each variant pushes the same one-line batches `--pushes`
times and the process CPU per push is printed with the ratio.
The baseline is what exporters/sinks/loki.py did before: `httpx.post()` per push, which
builds a client and an SSL context loading the CA bundle each time.

A second round measures HTTPS with basic auth (the log store's only mode under `wlmon up`:
VictoriaLogs): the same server behind TLS with a certificate of a CA made here
(wlmon/stack/pki.py), pushed to by the pooled client trusting that CA and logging in (the
sink as it is), against plain HTTP (the same pooled client, the first round's figure) and
against a client built per push (a full handshake each time).

    python bench/loki_push.py [--pushes 400]
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exporters.sinks.loki import LogStoreAccess, LokiPusher
from wlmon.stack import pki


class _Loki(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _lines(k: int) -> list[tuple[dict[str, str], int, str]]:
    return [({"source": "alertmanager", "sid": "BMK"}, 1_000_000 + k, json.dumps({"id": k}))]


def per_push_cpu_ms(push, n: int) -> float:
    push(_lines(-1))  # warm up (imports, the first connection)
    t0 = time.process_time()
    for k in range(n):
        push(_lines(k))
    return (time.process_time() - t0) / n * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pushes", type=int, default=400)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Loki)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"

    def per_call(lines) -> None:  # the old exporters/sinks/loki.push
        streams = [{"stream": lines[0][0], "values": [[str(lines[0][1]), lines[0][2]]]}]
        httpx.post(
            url + "/loki/api/v1/push",
            content=json.dumps({"streams": streams}),
            headers={"Content-Type": "application/json"},
            timeout=5,
        ).raise_for_status()

    pusher = LokiPusher(url)
    try:
        before = per_push_cpu_ms(per_call, args.pushes)
        after = per_push_cpu_ms(pusher.push, args.pushes)
    finally:
        pusher.close()
        server.shutdown()
    print(f"client per push (before): {before:6.2f} ms CPU per push (baseline)")
    print(f"pooled client (now):      {after:6.2f} ms CPU per push")
    print(
        f"ratio now/before: {after / before:.3f}; at 200 pushes/s: "
        f"{before * 0.2:.2f} -> {after * 0.2:.2f} cores"
    )
    tls_round(args.pushes, plain=after)


def tls_round(pushes: int, plain: float) -> None:
    with tempfile.TemporaryDirectory(prefix="wlmon-bench-tls-") as tmp:
        made, _ = pki.ensure(Path(tmp))
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Loki)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(made.cert("server")), str(made.key("server")))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"https://127.0.0.1:{server.server_port}"
        access = LogStoreAccess(ca_file=made.ca, username="wlmon-logs", password="bench")

        def per_call(lines) -> None:  # a client (and handshake) per push
            p = LokiPusher(url, access=access)
            try:
                p.push(lines)
            finally:
                p.close()

        pusher = LokiPusher(url, access=access)
        try:
            pooled = per_push_cpu_ms(pusher.push, pushes)
            fresh = per_push_cpu_ms(per_call, max(pushes // 4, 10))
        finally:
            pusher.close()
            server.shutdown()
    print(f"HTTPS + basic auth, pooled client:   {pooled:6.2f} ms CPU per push (now)")
    print(f"HTTPS + basic auth, client per push: {fresh:6.2f} ms CPU per push")
    print(
        f"ratio TLS pooled / plain pooled: {pooled / plain:.3f}; at 200 pushes/s: "
        f"{plain * 0.2:.2f} -> {pooled * 0.2:.2f} cores (per-push clients: {fresh * 0.2:.2f})"
    )


if __name__ == "__main__":
    main()
