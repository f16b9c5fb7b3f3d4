"""The farm's live view (`agent farm --view`): an index page on 127.0.0.1 with one panel
per device, each showing that device's latest frame and numbers, read straight from the
device's own live view (`agent.play.view`, one per worker process, on its own port), and
the farm table's row for it.

The controller only stores what it knows (`add` a device's view as its worker reports it,
`rows` for the table on every tick); the page reads `/farm.json` and follows each
device's view itself, so a frame never passes through the controller.
"""

from __future__ import annotations

import json
import time
from html import escape
from types import TracebackType
from typing import Any

from agent.play.view import (
    HOST, STYLE, WATCH_JS, QuietHandler, ServerThread, bind_server, check_host, check_port, numbers_table,
)  # fmt: skip

# How often the page asks the controller for the table and for new devices.
FARM_POLL_MS = 500

# The farm table's columns the page shows under each device, in this order.
ROW_FIELDS = ("state", "moves", "target", "confirmed", "score", "fps", "elapsed_s", "runs", "failures", "last_error")


class FarmView:
    """The farm's index page. `start()` serves it and returns its URL; `close()` (or the
    end of a `with` block) stops it."""

    def __init__(self, port: int = 0, host: str = HOST, title: str = "agent farm") -> None:
        self.host, self.port, self.title = check_host(host), check_port(port), title
        self._views: dict[str, str] = {}  # device (its key) -> its live view's URL
        self._rows: list[dict[str, Any]] = []
        self._totals: dict[str, Any] = {}
        self._server: ServerThread | None = None
        self._polled_at = 0.0  # monotonic time a page last read farm.json

    def add(self, serial: str, url: str) -> None:
        """A device's live view, as its worker reported it (a restarted worker's new one
        replaces the old)."""
        if not url.startswith(f"http://{HOST}:"):
            raise ValueError(f"a device's live view must be on {HOST}, not {url!r}")
        self._views = {**self._views, serial: url if url.endswith("/") else url + "/"}

    def rows(self, table: list[dict[str, Any]], totals: dict[str, Any] | None = None) -> None:
        """The farm table's rows (a row names its device by `key`, else `serial`), and the
        farm's totals (elapsed time, target) when given."""
        self._rows = list(table)
        if totals is not None:
            self._totals = dict(totals)

    def sync(self, farm: Any) -> None:
        """Everything from the farm controller (`agent.farm.controller.Farm`) on one of its
        ticks: each device's view as its worker reported it, its table row, and the farm's
        elapsed time and target."""
        target = farm.options.moves
        for row in farm.rows.values():
            url = getattr(row, "view_url", "")  # set by its worker's "view" event
            if url and self._views.get(row.key) != url:
                self.add(row.key, url)
        self.rows([{**row.as_dict(), "key": row.key, "target": target} for row in farm.rows.values()],
                  {"elapsed_s": round(time.time() - farm.started), "target": target})  # fmt: skip

    def state(self) -> dict[str, Any]:
        by_name = {str(r.get("key") or r.get("serial")): r for r in self._rows}
        views = self._views
        devices = [{"name": name, "url": views.get(name), "row": by_name.get(name, {})}
                   for name in dict.fromkeys([*views, *by_name])]  # fmt: skip
        closing = self._server is None or self._server.closing.is_set()
        return {"title": self.title, "devices": devices, "totals": self._totals, "stopped": closing}

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the farm view is not started")
        return self._server.url

    def start(self) -> str:
        if self._server is None:
            self._server = ServerThread(bind_server(_handler_for(self), self.host, self.port), "farm-view")
            self._server.start()
        return self._server.url

    def close(self) -> None:
        """Stop serving. A page that was reading the farm is given one more look, which
        says the farm stopped, so that it stops asking (and its browser logs no refused
        connection)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.closing.set()
        now = time.monotonic()
        if now - self._polled_at < 4 * FARM_POLL_MS / 1000:
            deadline = now + 2 * FARM_POLL_MS / 1000
            while self._polled_at < now and time.monotonic() < deadline:
                time.sleep(0.02)
        server.close()

    def __enter__(self) -> "FarmView":
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


def _handler_for(view: FarmView) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self.reply(farm_page_html(view.title).encode(), "text/html; charset=utf-8")
            elif path == "/farm.json":
                self.reply_json(view.state())
                view._polled_at = time.monotonic()
            else:
                self.not_found()

    return Handler


FARM_JS = r"""
const ROW_FIELDS = %(fields)s;
const panels = {};
function panelFor(dev) {
  let p = panels[dev.name];
  if (!p) {
    p = document.getElementById("panel-template").content.firstElementChild.cloneNode(true);
    p.dataset.device = dev.name;
    p.querySelector(".device").textContent = dev.name;
    document.getElementById("devices").appendChild(p);
    panels[dev.name] = p;
  }
  if (dev.url && p.dataset.url !== dev.url) {
    p.dataset.url = dev.url;
    p.classList.remove("gone");
    watch(dev.url, p);
  }
  return p;
}
function showRow(p, row) {
  const cells = ROW_FIELDS.filter(k => row[k] !== undefined && row[k] !== null && row[k] !== "")
    .map(k => "<tr><td>" + k.replace("_", " ") + "</td><td data-row=\"" + k + "\"></td></tr>").join("");
  const t = p.querySelector("table.row");
  if (t.dataset.shape !== cells) { t.innerHTML = cells; t.dataset.shape = cells; }
  for (const k of ROW_FIELDS) {
    const el = t.querySelector('[data-row="' + k + '"]');
    if (el) el.textContent = typeof row[k] === "number" && !Number.isInteger(row[k]) ? row[k].toFixed(1) : String(row[k]);
  }
}
function refresh() {
  fetch("farm.json", {cache: "no-store"}).then(r => r.json()).then(st => {
    const totals = Object.entries(st.totals || {}).map(([k, v]) => k.replace("_", " ") + " " + v).join(", ");
    document.getElementById("totals").textContent = totals;
    for (const dev of st.devices) showRow(panelFor(dev), dev.row || {});
    if (st.stopped) { document.body.classList.add("gone"); clearInterval(timer); }
  }).catch(() => { document.body.classList.add("gone"); clearInterval(timer); });
}
const timer = setInterval(refresh, %(poll)d);
refresh();
"""


def farm_page_html(title: str) -> str:
    heading = escape(title)
    script = FARM_JS % {"fields": json.dumps(list(ROW_FIELDS)), "poll": FARM_POLL_MS}
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{heading}</title><link rel="icon" href="data:,">
<style>{STYLE}
.panel h2 {{ font-size: 14px; margin: 0 0 6px 0; }}
.panel img.frame {{ width: 270px; }}
body.gone h1::after {{ content: " (the farm stopped)"; color: #888; }}
</style></head>
<body><h1>{heading}</h1><div id="totals"></div>
<div id="devices"></div>
<template id="panel-template"><div class="panel"><img class="frame" alt="the device's latest frame" data-capture="0">
<div><h2 class="device"></h2>{numbers_table()}<table class="numbers row"></table></div></div></template>
<script>{WATCH_JS}
{script}
</script></body></html>
"""
