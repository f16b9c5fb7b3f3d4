"""The live view (agent.play.view) and the farm's index page (agent.farm.view), over real
HTTP on the loopback: frames fed from a real simulated phone, read back as JPEG with the
capture count they show, the numbers in state.json, the event stream, the port closed
after close(), loopback only, a busy port refused with a fix; and a play loop on the
simulated phone feeding a view whose frame stays at most one capture behind."""

from __future__ import annotations

import errno
import json
import socket
import threading
import urllib.error
import urllib.request
from typing import Any

import cv2
import numpy as np
import pytest

from agent.errors import AgentError
from agent.farm.view import FarmView
from agent.play.stats import PlaySummary
from agent.play.view import FRAME_WIDTH, LiveView, measure_lag, frame_lag

SETTINGS = {"variant": "step", "solver": "greedy", "steps": 30}


def get(url: str, timeout: float = 10.0) -> tuple[bytes, Any]:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return reply.read(), reply.headers


def get_json(url: str) -> dict[str, Any]:
    return json.loads(get(url)[0])


def port_of(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """A simulated phone's run, its first frame and the board read on it."""
    from agent.games.match3.game import GAME as MATCH3
    from agent.play.run import sim_run

    run = sim_run(MATCH3, SETTINGS, 0, (1080, 2400), False, tmp_path_factory.mktemp("profiles"))
    frame = run.device.screencap()
    read = MATCH3.screen.read(frame, run.match.profile)
    return run, frame, read


def feed_move(view: LiveView, run, frame, read, count: int) -> list[list[object]]:
    """One capture, the board read on it, and the swap about to be made, as the loop feeds them."""
    from agent.games.base import gesture_json

    player = run.make_player()
    decision = player.decide(read.board)
    gestures = gesture_json(run.game.screen.gestures(decision.move, run.match.profile))
    view.captured(frame, count)
    view.board(run.match.profile.board_bbox, read.text)
    view.about_to(gestures, decision.text, 1)
    return gestures


# -- one view, over HTTP ---------------------------------------------------------------

def test_the_frame_served_is_the_last_capture_fed_drawn_over_and_scaled(sim):
    run, frame, read = sim
    with LiveView() as view:
        assert view.url.startswith("http://127.0.0.1:")
        for count in (1, 2):
            view.captured(frame, count)
        feed_move(view, run, frame, read, 3)
        body, headers = get(view.url + "frame.jpg")
        assert headers["Content-Type"] == "image/jpeg" and headers["X-Capture"] == "3"
        picture = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)
        h, w = frame.shape[:2]
        assert picture is not None and picture.shape[1] == FRAME_WIDTH
        assert abs(picture.shape[0] - round(h * FRAME_WIDTH / w)) <= 1
        plain = cv2.resize(frame, (picture.shape[1], picture.shape[0]), interpolation=cv2.INTER_AREA)
        # the overlay (grid, letters, the arrow, the banner) is on it: far from the plain frame
        assert float(np.abs(picture.astype(int) - plain.astype(int)).mean()) > 3.0
        # a later capture is served as soon as it is fed
        view.captured(frame, 4)
        assert get(view.url + "frame.jpg")[1]["X-Capture"] == "4"


def test_a_new_verdict_on_the_same_capture_is_a_new_picture(sim):
    run, frame, read = sim
    with LiveView() as view:
        feed_move(view, run, frame, read, 7)
        before, h1 = get(view.url + "frame.jpg")
        view.checked("not_applied", "the board did not change")
        after, h2 = get(view.url + "frame.jpg")
        assert h1["X-Capture"] == h2["X-Capture"] == "7"
        assert int(h2["X-Overlay"]) > int(h1["X-Overlay"]) and before != after


def test_many_viewers_of_one_capture_cost_one_encode(sim):
    run, frame, read = sim
    with LiveView() as view:
        feed_move(view, run, frame, read, 1)
        bodies = set()
        threads = [threading.Thread(target=lambda: bodies.add(get(view.url + "frame.jpg")[0])) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(bodies) == 1 and view.encodes == 1


def test_no_frame_yet_is_503_and_unknown_paths_404():
    with LiveView() as view:
        with pytest.raises(urllib.error.HTTPError) as no_frame:
            get(view.url + "frame.jpg")
        assert no_frame.value.code == 503
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(view.url + "nothing")
        assert missing.value.code == 404
        assert frame_lag(view.url, lambda: 0) is None


def test_state_json_has_the_terminals_numbers(sim):
    run, frame, read = sim
    s = PlaySummary(game="match3", moves=3)
    s.checks.update({"as_predicted": 2, "not_applied": 1})
    with LiveView(title="sim (emulator-5554) - match3") as view:
        gestures = feed_move(view, run, frame, read, 5)
        view.checked("not_applied", "the board did not change")
        view.summary({**s.as_dict(), "limit": 10, "capture_ms": 12.5})
        st = get_json(view.url + "state.json")
        assert (st["moves"], st["limit"], st["confirmed"], st["checks"]) == (3, 10, 2, {"as_predicted": 2, "not_applied": 1})
        assert (st["captures"], st["capture_ms"], st["verdict"], st["detail"]) == (
            5, 12.5, "not_applied", "the board did not change")
        assert st["stopped"] is False and st["stop_reason"] is None and st["elapsed_s"] >= 0
        assert st["index"] == 1 and st["move"] and gestures
        asked = urllib.request.Request(view.url + "state.json", headers={"Origin": "http://127.0.0.1:8765"})
        with urllib.request.urlopen(asked, timeout=10) as reply:  # the farm's page reads it from another port
            assert reply.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:8765"
        # the run's stop: its reason shown, and the elapsed time stands still at the run's own
        s.stop_reason, s.stop_kind = "move limit reached (10)", "limit"
        view.summary({**s.as_dict(), "limit": 10, "elapsed_s": 42.0})
        st = get_json(view.url + "state.json")
        assert st["stopped"] is True and st["stop_reason"] == "move limit reached (10)" and st["elapsed_s"] == 42.0
        page = get(view.url)[0].decode()
        assert "sim (emulator-5554) - match3" in page and "http" not in page.split("<script>", 1)[1]


def read_event(stream) -> dict[str, Any]:
    while True:
        line = stream.readline()
        assert line, "the event stream ended"
        if line.startswith(b"data: "):
            return json.loads(line[len(b"data: "):])


def test_the_event_stream_says_each_new_capture_and_ends_with_the_stop(sim):
    run, frame, read = sim
    view = LiveView()
    view.start()
    try:
        feed_move(view, run, frame, read, 1)
        stream = urllib.request.urlopen(view.url + "events", timeout=10)
        assert stream.headers["Content-Type"] == "text/event-stream"
        assert read_event(stream)["capture"] == 1
        view.captured(frame, 2)
        assert read_event(stream)["capture"] == 2
        s = PlaySummary(game="match3", moves=1, stop_reason="stopped on request", stop_kind="requested")
        view.summary({**s.as_dict(), "limit": None})
    finally:
        view.close()  # with the stream still open: it must not hold the close up
    # the last message says the run stopped, then the stream ends
    last = read_event(stream)
    while not last["stopped"]:
        last = read_event(stream)
    assert last["stop_reason"] == "stopped on request"
    assert stream.read().strip() == b""  # nothing more, and the stream ended
    stream.close()


def test_the_port_is_closed_after_close(sim):
    run, frame, read = sim
    view = LiveView()
    url = view.start()
    feed_move(view, run, frame, read, 1)
    keep_alive = urllib.request.urlopen(url + "state.json", timeout=10)
    keep_alive.read()
    view.close()
    with pytest.raises(urllib.error.URLError) as refused:
        get(url + "state.json", timeout=5)
    assert isinstance(refused.value.reason, ConnectionRefusedError)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port_of(url))) == errno.ECONNREFUSED
    # no thread of the server is left: its loop, its encoder, its handlers (the keep-alive one too)
    assert not [t.name for t in threading.enumerate()
                if t.name.startswith("live-view") or "process_request_thread" in t.name]  # fmt: skip
    view.close()  # twice is harmless


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", ""])
def test_only_the_loopback_is_served(host):
    with pytest.raises(AgentError) as err:
        LiveView(host=host)
    assert "loopback" in str(err.value) and "127.0.0.1" in err.value.hint
    with pytest.raises(AgentError):
        FarmView(host=host)


def test_the_server_listens_on_127_0_0_1_only():
    with LiveView(host="localhost") as view:
        assert view._server is not None
        assert view._server.server.socket.getsockname()[0] == "127.0.0.1"
        other = _a_non_loopback_address()
        if other is not None:
            with socket.socket() as s:
                s.settimeout(2)
                assert s.connect_ex((other, port_of(view.url))) != 0


def _a_non_loopback_address() -> str | None:
    """This machine's address on its default route, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, only the route is looked up
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_a_busy_port_is_refused_with_the_fix():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(AgentError) as err:
            LiveView(port=port).start()
        assert f"port {port}" in str(err.value) and "in use" in str(err.value)
        assert "--view-port 0" in err.value.hint
        with pytest.raises(AgentError) as farm_err:
            FarmView(port=port).start()
        assert "--view-port 0" in farm_err.value.hint


@pytest.mark.parametrize("port", [-1, 65536, True, 1.5])
def test_a_port_out_of_range_is_refused(port):
    with pytest.raises(AgentError) as err:
        LiveView(port=port)
    assert "--view-port 0" in err.value.hint


# -- the farm's page --------------------------------------------------------------------

def test_the_farm_page_lists_every_devices_view_and_its_row(sim):
    run, frame, read = sim
    with LiveView() as one, LiveView() as two, FarmView() as farm:
        url = farm.url
        feed_move(one, run, frame, read, 3)
        farm.add("127.0.0.1:5037/emulator-5554", one.url)
        farm.add("127.0.0.1:5037/emulator-5556", two.url)
        farm.rows([{"key": "127.0.0.1:5037/emulator-5554", "serial": "emulator-5554", "state": "playing", "moves": 4},
                   {"key": "127.0.0.1:5037/emulator-5556", "serial": "emulator-5556", "state": "starting"}],
                  {"elapsed_s": 3.5, "target": 200})  # fmt: skip
        st = get_json(farm.url + "farm.json")
        assert [(d["name"], d["url"]) for d in st["devices"]] == [
            ("127.0.0.1:5037/emulator-5554", one.url), ("127.0.0.1:5037/emulator-5556", two.url)]
        assert st["devices"][0]["row"]["moves"] == 4 and st["totals"] == {"elapsed_s": 3.5, "target": 200}
        page = get(farm.url)[0].decode()
        assert "<template" in page and "farm.json" in page
        with pytest.raises(ValueError):
            farm.add("x", "http://10.0.0.1:8000/")
    with pytest.raises(urllib.error.URLError):
        get(url + "farm.json", timeout=5)


def test_the_farm_page_follows_the_controllers_rows_and_the_views_its_workers_report(tmp_path):
    from agent.farm.controller import DeviceRow, Farm, FarmOptions

    farm = Farm([], tmp_path / "run", FarmOptions(moves=50), list_fn=lambda target: [])
    row = farm.rows["127.0.0.1:5037/emulator-5554"] = DeviceRow("127.0.0.1:5037/emulator-5554", "127.0.0.1", 5037,
                                                                 "emulator-5554", state="playing", moves=7)  # fmt: skip
    farm.rows["127.0.0.1:5037/emulator-5556"] = DeviceRow("127.0.0.1:5037/emulator-5556", "127.0.0.1", 5037,
                                                          "emulator-5556", state="retrying")  # fmt: skip
    with FarmView() as view:
        row.view_url = "http://127.0.0.1:40001/"  # as its worker's "view" event sets it
        view.sync(farm)
        st = get_json(view.url + "farm.json")
        first, second = st["devices"]
        assert (first["name"], first["url"], first["row"]["moves"], first["row"]["target"]) == (
            "127.0.0.1:5037/emulator-5554", "http://127.0.0.1:40001/", 7, 50)
        assert second["url"] is None and second["row"]["state"] == "retrying"  # no view (yet): its row still shows
        assert st["totals"]["target"] == 50 and st["totals"]["elapsed_s"] >= 0 and st["stopped"] is False


# -- the command line -----------------------------------------------------------------

def _agent(*args: str, **kw: Any) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "agent.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ), **kw)  # fmt: skip


def test_agent_play_view_prints_its_url_serves_the_run_and_stops_with_it(tmp_path):
    proc = _agent("play", "--sim", "--view", "--moves", "2", "--json", "--runs", str(tmp_path / "runs"),
                  "--profiles", str(tmp_path / "profiles"))  # fmt: skip
    try:
        url = None
        for line in proc.stderr:  # the notes, then the view's URL, before any move
            if line.startswith("live view: "):
                url = line.split(": ", 1)[1].strip()
                break
        assert url is not None and url.startswith("http://127.0.0.1:")
        first = get_json(url + "state.json")
        assert first["limit"] == 2 and "sim" in first["title"]
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0 and json.loads(out)["moves"] == 2 and "Traceback" not in err
    with pytest.raises(urllib.error.URLError):  # it stopped with the run
        get(url + "state.json", timeout=5)


def test_agent_play_view_on_a_busy_port_says_so_and_leaves_no_run(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _agent("play", "--sim", "--view", "--view-port", str(port), "--moves", "2",
                      "--runs", str(tmp_path / "runs"), "--profiles", str(tmp_path / "profiles"))  # fmt: skip
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and f"port {port}" in err and "--view-port 0" in err and "Traceback" not in err
    assert not list((tmp_path / "runs").glob("*"))
    proc = _agent("play", "--sim", "--view-port", "8000", "--runs", str(tmp_path / "runs"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--view" in err


# -- a play loop feeding the view ------------------------------------------------------

def view_loop(run: Any, moves: int, view: LiveView) -> Any:
    """The play loop on the run with the view as its watcher."""
    from agent.play.loop import PlayLoop, PlayOptions

    return PlayLoop(run.device, run.game, run.match.profile, run.make_player(), run.clock, PlayOptions(moves=moves),
                    status_reader=run.status_reader, watcher=view)  # fmt: skip


def run_with_lags(run: Any, moves: int, view: LiveView, samples: int = 10_000) -> tuple[Any, list[int]]:
    """Play `moves` moves in a thread while the lag is measured over HTTP against the
    loop's own capture count."""
    loop = view_loop(run, moves, view)
    done = threading.Event()
    result: dict[str, Any] = {}

    def play() -> None:
        try:
            result["summary"] = loop.run()
        finally:
            done.set()

    thread = threading.Thread(target=play)
    view.captured(run.device.screencap(), 0)  # so the first samples have a frame to fetch
    thread.start()
    lags = measure_lag(view, samples, agent_count=lambda: loop.capture.count, running=lambda: not done.is_set())
    thread.join()
    return result["summary"], lags


def test_a_run_on_a_phone_paced_simulated_phone_keeps_the_view_at_most_one_capture_behind(tmp_path):
    """In wall-clock time, each capture taking 100 ms (a real phone's take 300-800), the
    frame a page fetches is never more than one capture behind the loop's own count."""
    from agent.games.match3.game import GAME as MATCH3
    from agent.play.run import sim_run

    run = sim_run(MATCH3, SETTINGS, 3, (1080, 2400), True, tmp_path / "profiles", latency_ms=100)
    with LiveView(limit=2) as view:
        summary, lags = run_with_lags(run, 2, view)
        st = get_json(view.url + "state.json")
    assert summary.moves == 2 and summary.confirmed >= 1
    assert len(lags) >= 20 and max(lags) <= 1 and min(lags) >= 0
    assert summary.captures > 0 and lags.count(0) > lags.count(1)  # mostly the very capture the loop is on
    assert st["moves"] == 2 and st["limit"] == 2 and st["stopped"] and st["stop_kind"] == "limit"
    assert st["captures"] >= summary.captures and st["verdict"] is not None and st["index"] == 2
