"""The live views (`agent play --view`, the farm's page) answer only to loopback names
and serve only loopback pages (issue 26): a web site open in the same browser must not
read the phone's screen through a name that resolves to 127.0.0.1 (DNS rebinding), nor
script the view from its own origin."""

from __future__ import annotations

import http.client

import numpy as np
import pytest

from agent.farm.view import FarmView
from agent.play.view import LiveView


def get(url: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    host, port = url.split("//")[1].rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}
    finally:
        conn.close()


@pytest.mark.parametrize("which", ["play", "farm"])
def test_foreign_hosts_and_origins_are_refused_and_loopback_pages_served(which):
    view = LiveView() if which == "play" else FarmView()
    with view:
        if isinstance(view, LiveView):
            view.captured(np.zeros((80, 40, 3), np.uint8), 1)
        port = view.url.rstrip("/").rsplit(":", 1)[1]
        ok = {"Host": f"127.0.0.1:{port}"}
        status, headers = get(view.url, "/", ok)
        assert status == 200 and "access-control-allow-origin" not in headers  # no page asked: no CORS grant
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
            assert get(view.url, "/", {"Host": host})[0] == 403, host
        assert get(view.url, "/", {})[0] == 403  # (no Host at all)
        for origin in ("http://evil.example", "https://127.0.0.1:9", "null", "http://localhost.evil.example:80",
                       "http://127.0.0.1:9/path"):  # fmt: skip
            assert get(view.url, "/", {**ok, "Origin": origin})[0] == 403, origin
        for origin in ("http://127.0.0.1:8123", "http://localhost:9000"):  # the farm's page on another port
            status, headers = get(view.url, "/", {**ok, "Origin": origin})
            assert status == 200 and headers.get("access-control-allow-origin") == origin
        assert get(view.url, "/", {"Host": f"localhost:{port}"})[0] == 200
