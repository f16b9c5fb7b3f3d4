"""The live view (`agent play --view`): a page on 127.0.0.1 showing the phone's latest
frame with the agent's overlay (grid, letters, the move about to be made, the last check's
verdict) and the same numbers as the terminal, updated as the agent captures.

The loop feeds it as its watcher (`agent.play.watch`), on its own thread, through calls
that only store references (a frame, a count, a board's text): nothing is copied, encoded
or waited for there. The picture is drawn and encoded on the view's own thread when a
page asks for it, once per capture and overlay however many pages watch, and checked
against the loop's count as it leaves. The page learns of each capture from a stream of
Server-Sent Events and fetches the frame at once, so it is at most one capture behind the
agent whenever captures come further apart than a fetch takes (a few ms: any phone, and
the simulated one in wall-clock time); `frame_lag` and `measure_lag` measure it over HTTP.

Loopback only: the server binds 127.0.0.1 and refuses any other host, and it stops with
the run (`close`: the server thread shut down, the port closed).
"""

from __future__ import annotations

import errno
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import cv2
import numpy as np

from agent.errors import AgentError

HOST = "127.0.0.1"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost"})
FRAME_WIDTH = 540  # px: the picture on the page; a phone's full frame would cost 4x the encode
JPEG_QUALITY = 80
# How often an event stream looks for a new capture: far below any phone's capture time,
# and a sleeping thread costs the loop nothing.
EVENT_POLL_S = 0.01
# A client that stops reading its event stream is dropped after this long, not waited on.
SOCKET_TIMEOUT_S = 5.0
# A frame the agent has moved past while it was encoded is encoded again from the newest
# capture, this many times at most: a loop that captures faster than the encoder (the
# simulated phone in simulated time) would otherwise be chased for ever.
CATCH_UP_ENCODES = 3


@dataclass(frozen=True)
class Overlay:
    """What is drawn over the frame: the last board read at rest, the move about to be
    made (journal gesture form) and the last check's verdict."""

    bbox: tuple[int, int, int, int] | None = None
    board: str | None = None
    gestures: tuple[tuple[object, ...], ...] = ()
    move: str | None = None  # the move's text, as the journal has it
    index: int | None = None  # the move's number
    verdict: str | None = None
    detail: str = ""
    seq: int = 0  # counts the changes: a new picture for the same capture


@dataclass(frozen=True)
class _Encoded:
    count: int
    overlay: Overlay
    jpeg: bytes


def check_host(host: str) -> str:
    """The address to bind: the loopback only."""
    if host not in LOOPBACK_NAMES:
        raise AgentError(f"the live view serves the loopback only, not {host!r}",
                         hint=f"leave the host out (it binds {HOST}); to watch from another machine, "
                              f"forward the port (ssh -L PORT:{HOST}:PORT)")  # fmt: skip
    return HOST


def check_port(port: int) -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise AgentError(f"--view-port {port!r} is no TCP port", hint="give 1-65535, or --view-port 0 for any free port")
    return port


class _Server(ThreadingHTTPServer):
    """Handler threads are joined at close; the connections still open then (a page's
    idle keep-alive, a stream) are shut so that none holds the close up."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.connections: set[Any] = set()
        self.connections_lock = threading.Lock()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a page that went away mid-reply is no error of the run's; the terminal shows the run

    def drop_connections(self) -> None:
        with self.connections_lock:
            for conn in list(self.connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def bind_server(handler: type[BaseHTTPRequestHandler], host: str, port: int) -> _Server:
    """An HTTP server on the loopback, or an AgentError that says what to do when the port
    is taken or not allowed."""
    address = (check_host(host), check_port(port))
    try:
        return _Server(address, handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise AgentError(f"port {port} on {HOST} is in use, so the live view cannot serve there",
                             hint="pick a free one with --view-port N, or --view-port 0 for any free port") from None
        if exc.errno == errno.EACCES:
            raise AgentError(f"port {port} on {HOST} is not allowed for this user",
                             hint="use a port above 1023, or --view-port 0 for any free port") from None
        raise AgentError(f"the live view cannot serve on {HOST}:{port}: {exc.strerror or exc}",
                         hint="try --view-port 0 for any free port") from None  # fmt: skip


# How long `close` lets the event streams send their last message (the run's stop)
# before it shuts the connections still open.
CLOSE_GRACE_S = 0.2


class ServerThread:
    """A bound server run on its own thread until `close`, which stops it, ends every
    stream (`closing`), shuts the connections still open and closes the port."""

    def __init__(self, server: _Server, name: str) -> None:
        self.server = server
        self.closing = threading.Event()
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=name,
                                        daemon=True)  # fmt: skip

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.closing.set()
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join()
        deadline = time.monotonic() + CLOSE_GRACE_S
        while self.server.connections and time.monotonic() < deadline:
            time.sleep(0.01)
        self.server.drop_connections()
        self.server.server_close()  # joins the handler threads, closes the listening socket


class LiveView:
    """The live view of one run. `start()` serves it and returns its URL; `close()` (or the
    end of a `with` block) stops it. The loop feeds it as its watcher
    (`agent.play.watch.Watcher`: `captured`, `board`, `about_to`, `checked`, `summary`),
    and each of those calls stores references only."""

    def __init__(self, port: int = 0, host: str = HOST, title: str = "", limit: int | None = None,
                 width: int = FRAME_WIDTH) -> None:  # fmt: skip
        self.host, self.port, self.title, self.width = check_host(host), check_port(port), title, width
        self.limit = limit  # the run's move limit, shown against the moves made (None: none)
        self._latest: tuple[np.ndarray, int] | None = None  # the newest frame and its capture count
        self._overlay = Overlay()
        self._summary: dict[str, Any] = {}
        self._summary_at = 0.0  # monotonic time the summary came
        self._started_at = time.monotonic()
        self._encoded: _Encoded | None = None
        self._layers: tuple[tuple[Overlay, tuple[int, ...]], np.ndarray, np.ndarray] | None = None
        self._encode_lock = threading.Lock()  # one encode per capture, however many pages ask
        self.encodes = 0  # frames encoded so far (a page per viewer must not multiply them)
        self._server: ServerThread | None = None
        # Encoding on one long-lived thread: OpenCV's first call on a new thread costs
        # some 15 ms, and the server starts a thread per connection.
        self._encoder: ThreadPoolExecutor | None = None

    # -- fed by the loop, on its thread: references only -------------------------------
    def captured(self, frame: np.ndarray, count: int) -> None:
        """Every capture: the frame and the loop's capture count."""
        self._latest = (frame, count)  # one assignment: a reader sees both or neither

    def board(self, bbox: Sequence[int] | None, board_text: str | None) -> None:
        """After each read at rest: the board's box and the board as read (None: no board)."""
        box = None if bbox is None else (int(bbox[0]), int(bbox[1]), int(bbox[2]), int(bbox[3]))
        o = self._overlay
        self._overlay = replace(o, bbox=box, board=board_text, seq=o.seq + 1)

    def about_to(self, gestures: Sequence[Sequence[object]], move: str | None = None, index: int | None = None) -> None:
        """Before a move is performed: its gestures (["swipe", x1, y1, x2, y2, ms], ["tap", x, y]),
        and its text and number when known (the number: one past the moves made so far);
        the last verdict is cleared, it was about the move before."""
        if index is None:
            index = int(self._summary.get("moves") or 0) + 1
        o = self._overlay
        self._overlay = replace(o, gestures=tuple(tuple(g) for g in gestures), move=move, index=index, verdict=None,
                                detail="", seq=o.seq + 1)  # fmt: skip

    def checked(self, verdict: str, detail: str = "") -> None:
        """The last move's check: what the screen showed against the rules' prediction."""
        o = self._overlay
        self._overlay = replace(o, verdict=verdict, detail=detail, seq=o.seq + 1)

    def summary(self, d: dict[str, Any]) -> None:
        """The run's numbers: `PlaySummary.as_dict()`, after each move and at the stop;
        `limit` and `elapsed_s` in it, when given, stand for the view's own (the limit it
        was made with, the time since it started)."""
        self._summary, self._summary_at = d, time.monotonic()

    # -- read by the server ----------------------------------------------------------------
    @property
    def count(self) -> int:
        """The capture count last fed (0 before any)."""
        latest = self._latest
        return 0 if latest is None else latest[1]

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the live view is not started")
        return self._server.url

    def state(self, frame_count: int | None = None) -> dict[str, Any]:
        """The numbers the page shows, as /state.json serves them; `capture` is the count
        of the frame served (the newest encoded), `captures` the newest fed."""
        s, o = self._summary, self._overlay
        stopped = bool(s.get("stop_reason"))
        if "elapsed_s" in s:
            elapsed = float(s["elapsed_s"]) + (0.0 if stopped else time.monotonic() - self._summary_at)
        else:
            elapsed = time.monotonic() - self._started_at
        encoded = self._encoded
        checks = s.get("checks") or {}
        return {
            "title": self.title, "game": s.get("game"), "moves": s.get("moves", 0), "limit": s.get("limit", self.limit),
            "confirmed": s.get("confirmed", 0), "checks": dict(checks), "elapsed_s": round(elapsed, 1),
            "captures": max(self.count, int(s.get("captures") or 0)), "capture_ms": s.get("capture_ms"),
            "score": s.get("score"), "moves_left": s.get("moves_left"),
            "level": s.get("level"), "levels_won": s.get("levels_won"), "levels_lost": s.get("levels_lost"),
            "goal": s.get("goal"),
            "stopped": stopped, "stop_reason": s.get("stop_reason") or None, "stop_kind": s.get("stop_kind") or None,
            "capture": frame_count if frame_count is not None else (encoded.count if encoded else 0),
            "closing": self.closing.is_set(), "overlay": o.seq, "move": o.move, "index": o.index, "verdict": o.verdict, "detail": o.detail,
        }  # fmt: skip

    def changes(self) -> tuple[int, int, int]:
        """What changes when the page should hear of it: the capture count, the overlay's
        and the summary's identity (each feed call makes a new object)."""
        return self.count, self._overlay.seq, id(self._summary)

    def frame_jpeg(self) -> tuple[int, int, bytes] | None:
        """The newest capture, annotated and encoded (cached per capture and overlay), its
        count and its overlay's number; None before the first capture. Checked against
        the loop's count as it is handed over: if a capture came meanwhile, the newest is
        encoded instead, once (then the reply is at most that one behind when it leaves,
        unless two come in the moment it takes to send); if two or more came, again, a
        few times at most."""
        got = self._on_encoder(self._frame_jpeg)
        for attempt in range(CATCH_UP_ENCODES):
            behind = 0 if got is None else self.count - got[0]
            if behind <= 0 or (behind == 1 and attempt > 0):
                break
            got = self._on_encoder(self._frame_jpeg)
        return got

    def _on_encoder(self, job: Callable[[], tuple[int, int, bytes] | None]) -> tuple[int, int, bytes] | None:
        encoder = self._encoder
        if encoder is not None:
            try:
                return encoder.submit(job).result()
            except RuntimeError:
                pass  # the view closed meanwhile: this thread does it
        return job()

    def _frame_jpeg(self) -> tuple[int, int, bytes] | None:
        with self._encode_lock:
            latest, overlay = self._latest, self._overlay
            if latest is None:
                return None
            frame, count = latest
            cached = self._encoded
            if cached is None or cached.count != count or cached.overlay is not overlay:
                cached = self._encoded = _Encoded(count, overlay, self._encode(frame, overlay))
                self.encodes += 1
            return cached.count, cached.overlay.seq, cached.jpeg

    def _encode(self, frame: np.ndarray, o: Overlay) -> bytes:
        h, w = frame.shape[:2]
        scale = self.width / w if self.width < w else 1.0
        size = (max(1, round(w * scale)), max(1, round(h * scale)))  # as annotate scales
        gain, offset = self._layers_for(o, (size[1], size[0], *frame.shape[2:]), scale)
        small = frame if scale == 1.0 else cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
        picture = cv2.add(cv2.multiply(small, gain, scale=1 / 255), offset)
        ok, data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        return data.tobytes()

    def _layers_for(self, o: Overlay, shape: tuple[int, ...], scale: float) -> tuple[np.ndarray, np.ndarray]:
        """The overlay as a map of each pixel of the scaled frame (`shape`): out = frame *
        gain / 255 + offset. `annotate` is such a map (it dims, draws opaque and blends), so
        drawing it once on a black and once on a white frame gives both layers; each
        capture is then laid under them with two whole-image operations instead of a
        hundred drawing calls, each of which would wait to take the GIL back from the
        loop. Drawn at the scaled size, with the box and gestures scaled as annotate
        would, so the picture is the same."""
        from agent.play.annotate import annotate

        key = (o, tuple(shape))
        cached = self._layers
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        title = None if o.index is None else f"move {o.index}" + (f" {o.move}" if o.move else "")
        bbox = None if o.bbox is None else [v * scale for v in o.bbox]
        gestures = [_scaled_gesture(g, scale) for g in o.gestures]
        black, white = np.zeros(shape, np.uint8), np.full(shape, 255, np.uint8)
        offset = annotate(black, bbox, o.board, gestures, o.verdict, title=title)
        gain = cv2.subtract(annotate(white, bbox, o.board, gestures, o.verdict, title=title), offset)
        self._layers = (key, gain, offset)
        return gain, offset

    # -- serving -------------------------------------------------------------------------
    def start(self) -> str:
        """Serve the view; its URL."""
        if self._server is None:
            self._started_at = time.monotonic()
            self._server = ServerThread(bind_server(_handler_for(self), self.host, self.port), "live-view")
            self._encoder = ThreadPoolExecutor(1, thread_name_prefix="live-view-encode")
            self._server.start()
        return self._server.url

    def close(self) -> None:
        """Stop serving: every stream ended, the server thread stopped, the port closed."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        encoder, self._encoder = self._encoder, None
        if encoder is not None:
            encoder.shutdown(wait=True)

    @property
    def closing(self) -> threading.Event:
        return self._server.closing if self._server is not None else _CLOSED

    def __enter__(self) -> "LiveView":
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()


def _scaled_gesture(g: Sequence[object], scale: float) -> list[object]:
    """A journal gesture with its screen points scaled: a swipe's two, a tap's one."""
    points = {"swipe": 4, "tap": 2}.get(str(g[0]) if g else "", 0)
    out = list(g)
    for i in range(1, min(len(out), points + 1)):
        v = out[i]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = v * scale
    return out


_CLOSED = threading.Event()
_CLOSED.set()


def _loopback_authority(authority: str) -> bool:
    """Whether a Host header names a loopback name (with any port)."""
    name, sep, port = authority.strip().rpartition(":")
    if not sep or not port.isdigit():
        name = authority.strip()
    return name.lower() in LOOPBACK_NAMES


def _loopback_origin(origin: str) -> bool:
    """Whether an Origin header is a page of a loopback name over http."""
    scheme, sep, rest = origin.strip().partition("://")
    return bool(sep) and scheme.lower() == "http" and "/" not in rest and _loopback_authority(rest)


class QuietHandler(BaseHTTPRequestHandler):
    """No request log on stderr (the terminal shows the run), CORS for the farm's page."""

    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT_S
    allowed_origin: str | None = None  # the request's Origin once checked (a loopback page)
    # Headers and body go in two writes: with Nagle's algorithm the body waits for the
    # client's delayed ACK (some 20-40 ms a frame on the loopback).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def parse_request(self) -> bool:
        """A request is served only when it names this server by a loopback name (Host) and
        comes from no page but a loopback one (Origin): a page of any web site open in the
        same browser could otherwise read the phone's screen through a name that resolves
        to 127.0.0.1 (DNS rebinding), or script the view from its own origin."""
        if not super().parse_request():
            return False
        host, origin = self.headers.get("Host"), self.headers.get("Origin")
        if host is None or not _loopback_authority(host):
            self.send_error(403, "the live view answers to 127.0.0.1 or localhost only")
            return False
        if origin is not None and not _loopback_origin(origin):
            self.send_error(403, "the live view serves pages of 127.0.0.1 or localhost only")
            return False
        self.allowed_origin = origin  # echoed for the farm's page on another loopback port
        return True

    def reply(self, body: bytes, content_type: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self._allow_origin()
        self.send_header("Access-Control-Expose-Headers", "X-Capture, X-Overlay")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _allow_origin(self) -> None:
        origin = self.allowed_origin
        if origin is not None:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")

    def reply_json(self, data: object) -> None:
        self.reply(json.dumps(data).encode(), "application/json")

    def not_found(self) -> None:
        self.reply(b"not found\n", "text/plain; charset=utf-8", 404)

    def start_events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self._allow_origin()
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_event(self, data: object) -> None:
        self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
        self.wfile.flush()


def _handler_for(view: LiveView) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self.reply(page_html(view.title).encode(), "text/html; charset=utf-8")
            elif path == "/frame.jpg":
                got = view.frame_jpeg()
                if got is None:
                    self.reply(b"no frame yet\n", "text/plain; charset=utf-8", 503, {"Retry-After": "1"})
                else:
                    self.reply(got[2], "image/jpeg", headers={"X-Capture": str(got[0]), "X-Overlay": str(got[1])})
            elif path == "/state.json":
                self.reply_json(view.state())
            elif path == "/events":
                self._events()
            else:
                self.not_found()

        def _events(self) -> None:
            """A message whenever the capture count or the numbers change, until the view closes."""
            self.start_events()
            closing = view.closing
            last: tuple[int, int, int] | None = None
            try:
                while True:
                    ending = closing.is_set()  # the last look, after the run's stop was fed
                    now = view.changes()
                    if now != last or ending:  # the last one always: it tells the page to let go
                        last = now
                        self.send_event(view.state(frame_count=now[0]))
                    if ending:
                        return
                    closing.wait(EVENT_POLL_S)
            except OSError:
                return  # the page went away

    return Handler


def frame_lag(url: str, agent_count: Callable[[], int], timeout_s: float = 5.0) -> int | None:
    """How many captures the view's frame is behind the agent: the agent's count at the
    moment the reply came, minus the reply's X-Capture. None before the first frame."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/frame.jpg", timeout=timeout_s) as reply:
            served = int(reply.headers["X-Capture"])
            now = agent_count()
            reply.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 503:
            return None
        raise
    return now - served


def measure_lag(view: LiveView, samples: int, agent_count: Callable[[], int] | None = None,
                every_s: float = 0.0, running: Callable[[], bool] | None = None) -> list[int]:  # fmt: skip
    """Lags in captures (see `frame_lag`) over HTTP while a run feeds the view from another
    thread: `samples` of them, or fewer when `running` says the run ended first.
    `agent_count` is the loop's own capture count (default: the count fed to the view)."""
    count = agent_count or (lambda: view.count)
    lags: list[int] = []
    while len(lags) < samples and (running is None or running()):
        lag = frame_lag(view.url, count)
        if lag is not None:
            lags.append(lag)
        if every_s:
            time.sleep(every_s)
    return lags


# -- the page ---------------------------------------------------------------------------

# The page's script, shared with the farm's index page: `watch(base, panel)` follows one
# view (base: its URL, "" for this one) into a panel holding an <img class=frame> and
# elements with data-field names. On each event it fetches the frame unless one is on
# its way; when that one lands and a newer capture was announced, it fetches again, so
# the picture is at most the capture in flight behind.
WATCH_JS = r"""
function fmtElapsed(s) {
  s = Math.floor(s); const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(r).padStart(2, "0");
}
function showState(panel, st) {
  const set = (name, text) => { const el = panel.querySelector('[data-field="' + name + '"]'); if (el) el.textContent = text; };
  set("moves", st.moves + (st.limit != null ? " / " + st.limit : ""));
  set("confirmed", String(st.confirmed));
  const checks = Object.entries(st.checks || {}).sort().map(([k, v]) => k + " " + v).join(", ");
  set("checks", checks || "-");
  set("elapsed", fmtElapsed(st.elapsed_s || 0));
  set("captures", String(st.captures));
  set("capture_ms", st.capture_ms == null ? "-" : Number(st.capture_ms).toFixed(0) + " ms");
  set("score", st.score == null ? "-" : String(st.score));
  set("level", (st.level == null ? "-" : String(st.level)) +
      (st.levels_won == null ? "" : " (" + st.levels_won + " won, " + (st.levels_lost || 0) + " lost)"));
  const g = st.goal;
  set("goal", !g ? "-" : g.goal + (g.colour ? " " + g.colour : "") + " " + (g.target == null ? "?" : g.target) +
      (g.left == null ? "" : ", " + g.left + " left") + (g.made == null ? "" : ", " + g.made + " by the agent"));
  set("last", st.index == null ? "-" : "move " + st.index + (st.move ? " " + st.move : "") +
      (st.verdict ? ": " + st.verdict + (st.detail ? " (" + st.detail + ")" : "") : ""));
  set("status", st.stopped ? "stopped: " + st.stop_reason : "playing");
  panel.classList.toggle("stopped", !!st.stopped);
}
function newer(a, b) { return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]); }
function watch(base, panel) {
  const img = panel.querySelector("img.frame");
  let wanted = [0, 0], shown = [0, -1], loading = false, shownUrl = null;
  function load() {
    if (loading || wanted[0] === 0 || !newer(wanted, shown)) return;
    loading = true;
    fetch(base + "frame.jpg?c=" + wanted[0] + "." + wanted[1], {cache: "no-store"}).then(r => {
      if (!r.ok) throw new Error("no frame");
      const key = [Number(r.headers.get("X-Capture")), Number(r.headers.get("X-Overlay"))];
      return r.blob().then(b => [key, b]);
    }).then(([key, b]) => {
      const u = URL.createObjectURL(b);
      img.onload = () => { if (shownUrl) URL.revokeObjectURL(shownUrl); shownUrl = u; };
      img.src = u;
      shown = key;
      img.dataset.capture = String(key[0]);
      const c = panel.querySelector('[data-field="capture"]'); if (c) c.textContent = String(key[0]);
    }).catch(() => { shown = wanted; }).finally(() => { loading = false; load(); });
  }
  function onState(st) {
    showState(panel, st);
    const key = [st.capture, st.overlay];
    if (newer(key, wanted)) { wanted = key; load(); }
  }
  let polling = null;
  function poll() {
    fetch(base + "state.json", {cache: "no-store"}).then(r => r.json()).then(onState)
      .catch(() => { panel.classList.add("gone"); clearInterval(polling); });
  }
  if (window.EventSource) {
    const es = new EventSource(base + "events");
    // the last message says the view is closing: let go first, so the browser logs no failed reconnect
    es.onmessage = ev => { const st = JSON.parse(ev.data); onState(st); if (st.closing) { es.close(); panel.classList.add("gone"); } };
    es.onerror = () => { es.close(); panel.classList.add("gone"); };
  } else {
    polling = setInterval(poll, 150);
  }
}
"""

STYLE = """
body { font: 14px system-ui, sans-serif; margin: 12px; background: #f4f4f4; color: #222; }
.panel { display: inline-flex; gap: 12px; background: #fff; border: 1px solid #ccc; padding: 8px; margin: 4px;
         vertical-align: top; }
.panel img.frame { width: 540px; max-width: 45vw; background: #ddd; min-height: 200px; }
.panel.stopped { border-color: #c60; }
.panel.gone .status::after { content: " (view closed)"; color: #888; }
table.numbers { align-self: flex-start; width: 330px; }
table.numbers td { overflow-wrap: anywhere; }
table.numbers td:first-child { font-weight: bold; padding-right: 10px; white-space: nowrap; }
h1 { font-size: 16px; margin: 4px; }
"""

NUMBERS = (("status", "status"), ("moves", "moves made"), ("confirmed", "confirmed"), ("checks", "checks"),
           ("last", "last move"), ("elapsed", "elapsed"), ("captures", "captures"), ("capture_ms", "a capture"),
           ("capture", "frame shown"), ("score", "score"), ("level", "level"), ("goal", "goal"))  # fmt: skip


def numbers_table() -> str:
    rows = "".join(f'<tr><td>{label}</td><td data-field="{name}" class="{name}">-</td></tr>' for name, label in NUMBERS)
    return f'<table class="numbers">{rows}</table>'


def page_html(title: str) -> str:
    from html import escape

    heading = escape(title or "agent: live view")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{heading}</title><link rel="icon" href="data:,">
<style>{STYLE}</style></head>
<body><h1>{heading}</h1>
<div class="panel" id="view"><img class="frame" alt="the phone's latest frame" data-capture="0">
{numbers_table()}</div>
<script>{WATCH_JS}
watch("", document.getElementById("view"));
</script></body></html>
"""
