"""The live view and the farm's page in a real headless Chromium (Debian's, driven by
Playwright): the pages load with no console errors, the <img> shows the frame of the
capture last fed, the numbers are the run's, and in a run on the simulated phone the page
keeps up with the loop's captures."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from agent.farm.view import FarmView
from agent.play.stats import PlaySummary
from agent.play.view import FRAME_WIDTH, LiveView

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 20_000  # what a page may take to show a frame on a loaded machine; no test measures it
SETTINGS = {"variant": "step", "solver": "greedy", "steps": 30}


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            yield b
        finally:
            b.close()


class Page:
    """A page with every console error and uncaught exception kept."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def __enter__(self) -> "Page":
        return self

    def __exit__(self, *exc: object) -> None:
        self.page.close()

    def capture_shown(self, selector: str = "#view") -> int:
        return int(self.page.eval_on_selector(f"{selector} img.frame", "img => Number(img.dataset.capture)"))

    def wait_capture(self, count: int, selector: str = "#view") -> None:
        self.page.wait_for_function(
            "([sel, n]) => { const img = document.querySelector(sel + ' img.frame');"
            " return img && Number(img.dataset.capture) === n && img.complete && img.naturalWidth > 0; }",
            arg=[selector, count], timeout=WAIT_MS,
        )

    def field(self, name: str, selector: str = "#view") -> str:
        return str(self.page.eval_on_selector(f'{selector} [data-field="{name}"]', "el => el.textContent"))

    def wait_field(self, name: str, text: str, selector: str = "#view") -> None:
        self.page.wait_for_function(
            "([sel, name, text]) => { const el = document.querySelector(sel + ' [data-field=\"' + name + '\"]');"
            " return el && el.textContent === text; }",
            arg=[selector, name, text], timeout=WAIT_MS,
        )


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    from agent.games.match3.game import GAME as MATCH3
    from agent.play.run import sim_run

    run = sim_run(MATCH3, SETTINGS, 0, (1080, 2400), False, tmp_path_factory.mktemp("profiles"))
    frame = run.device.screencap()
    return run, frame, MATCH3.screen.read(frame, run.match.profile)


def test_the_page_shows_each_capture_fed_and_the_numbers_with_no_console_errors(browser, sim):
    run, frame, read = sim
    with LiveView(title="sim - match3") as view, Page(browser) as p:
        view.captured(frame, 1)
        view.board(run.match.profile.board_bbox, read.text)
        p.page.goto(view.url)
        p.wait_capture(1)
        for count in range(2, 7):  # the <img> follows every capture fed, one by one
            view.captured(frame, count)
            p.wait_capture(count)
            assert p.field("capture") == str(count)
        width = p.page.eval_on_selector("#view img.frame", "img => img.naturalWidth")
        assert width == FRAME_WIDTH
        view.about_to([["swipe", 200, 900, 320, 900, 200]], "B3>C3", 4)
        view.checked("as_predicted")
        s = PlaySummary(game="match3", moves=4)
        s.checks.update({"as_predicted": 3, "not_applied": 1})
        view.summary({**s.as_dict(), "limit": 10, "capture_ms": 31.0})
        p.wait_field("moves", "4 / 10")
        assert p.field("confirmed") == "3" and p.field("checks") == "as_predicted 3, not_applied 1"
        assert p.field("last") == "move 4 B3>C3: as_predicted" and p.field("capture_ms") == "31 ms"
        assert p.field("status") == "playing"
        s.stop_reason, s.stop_kind = "move limit reached (10)", "limit"
        view.summary({**s.as_dict(), "limit": 10, "elapsed_s": 65.0})
        p.wait_field("status", "stopped: move limit reached (10)")
        assert p.field("elapsed") == "1:05"
        assert p.errors == []
        view.close()  # the run ended: the page is told, lets go, and keeps the last frame
        p.page.wait_for_selector("#view.gone", timeout=WAIT_MS)
        p.page.wait_for_timeout(500)  # time for any reconnect a browser would try (and log)
        assert p.capture_shown() == 6 and p.errors == []


def test_the_page_keeps_up_with_a_run_on_the_simulated_phone(browser, tmp_path):
    """A loop on the simulated phone, in wall-clock time with each capture taking 100 ms,
    feeds the view while the page shows it: sampled from the page as it runs, the frame
    shown follows the loop (never ahead of it, never going back, changing while it runs)
    and ends on the last capture. How far behind it is depends on the machine's load (a
    browser starved by a busy CI lagged 4 captures): `agent bench record` measures the
    lag, and test_view measures the server's own bound over HTTP."""
    from agent.games.match3.game import GAME as MATCH3
    from agent.play.loop import PlayLoop, PlayOptions
    from agent.play.run import sim_run

    run = sim_run(MATCH3, SETTINGS, 4, (1080, 2400), True, tmp_path / "profiles", latency_ms=100)
    with LiveView() as view, Page(browser) as p:
        loop = PlayLoop(run.device, run.game, run.match.profile, run.make_player(), run.clock, PlayOptions(moves=2),
                        status_reader=run.status_reader, watcher=view)  # fmt: skip
        view.captured(run.device.screencap(), 0)
        p.page.goto(view.url)
        done = threading.Event()
        thread = threading.Thread(target=lambda: (loop.run(), done.set()))
        thread.start()
        shown_seq: list[int] = []
        ahead: list[tuple[int, int]] = []
        try:
            while not done.is_set():
                shown = p.capture_shown()
                after = loop.capture.count  # read after the page: the page cannot be past it
                shown_seq.append(shown)
                if shown > after:
                    ahead.append((shown, after))
                p.page.wait_for_timeout(20)
        finally:
            thread.join()
        p.wait_capture(loop.capture.count)  # and it shows the very last one
        assert p.errors == []
    assert ahead == [], ahead
    assert shown_seq == sorted(shown_seq), shown_seq
    # it followed the run as it went, not only at its end
    assert len(set(shown_seq)) >= 5 and loop.capture.count >= 10, (shown_seq, loop.capture.count)


def test_the_farm_page_shows_a_panel_per_device_with_its_frame_and_row(browser, sim):
    run, frame, read = sim
    keys = ["127.0.0.1:5037/emulator-5554", "127.0.0.1:5037/emulator-5556"]
    with LiveView() as one, LiveView() as two, FarmView() as farm, Page(browser) as p:
        for view, count in ((one, 5), (two, 9)):
            view.captured(frame, count)
            view.board(run.match.profile.board_bbox, read.text)
        one.summary({**PlaySummary(game="match3", moves=3).as_dict(), "limit": 200})
        farm.add(keys[0], one.url)
        farm.add(keys[1], two.url)
        farm.rows([{"key": keys[0], "serial": "emulator-5554", "state": "playing", "moves": 3, "target": 200},
                   {"key": keys[1], "serial": "emulator-5556", "state": "retrying", "moves": 0,
                    "last_error": "device offline"}], {"elapsed_s": 12.0, "target": 200})  # fmt: skip
        p.page.goto(farm.url)
        for key, count in ((keys[0], 5), (keys[1], 9)):
            p.wait_capture(count, f'.panel[data-device="{key}"]')
        assert p.page.locator(".panel").count() == 2
        first = f'.panel[data-device="{keys[0]}"]'
        p.wait_field("moves", "3 / 200", first)
        p.page.wait_for_function(
            "sel => { const el = document.querySelector(sel + ' [data-row=\"last_error\"]');"
            " return el && el.textContent === 'device offline'; }",
            arg=f'.panel[data-device="{keys[1]}"]', timeout=WAIT_MS,
        )
        two.captured(frame, 10)  # a panel follows its device's captures
        p.wait_capture(10, f'.panel[data-device="{keys[1]}"]')
        assert "elapsed s 12" in p.page.inner_text("#totals")
        assert p.errors == []
        one.close()  # a worker ended: its panel keeps its last frame
        p.page.wait_for_selector(f'.panel.gone[data-device="{keys[0]}"]', timeout=WAIT_MS)
        farm.close()  # the farm ended: the page is told, and stops asking
        p.page.wait_for_selector("body.gone", timeout=WAIT_MS)
        p.page.wait_for_timeout(1200)  # two of its polls: none is made, none fails
        assert p.capture_shown(f'.panel[data-device="{keys[0]}"]') == 5 and p.errors == []


def test_agent_farm_view_shows_every_phone_as_it_plays(browser, private_adb_port, tmp_path):
    """`agent farm --sim 2 --view`: the page at the printed URL gets a panel per phone,
    each showing its phone's frames as its worker captures them, with no console error
    from the start to the farm's end."""
    import json
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "farm", "--sim", "2", "--moves", "4", "--view", "--json",
         "--runs", str(tmp_path / "runs"), "--profiles", str(tmp_path / "profiles")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        line = proc.stderr.readline()
        assert line.startswith("live view: http://127.0.0.1:"), line
        with Page(browser) as p:
            p.page.goto(line.split(": ", 1)[1].strip())
            p.page.wait_for_function(
                "() => { const imgs = [...document.querySelectorAll('.panel img.frame')];"
                " return imgs.length === 2 && imgs.every(i => Number(i.dataset.capture) > 0 && i.naturalWidth > 0); }",
                timeout=60_000,
            )
            out, err = proc.communicate(timeout=180)
            p.page.wait_for_selector("body.gone", timeout=WAIT_MS)  # the farm's end, said on the page
            assert p.errors == []
    finally:
        proc.kill()
    summary = json.loads(out)
    assert proc.returncode == 0, err
    views = [e for e in summary["events"] if e["event"] == "view"]
    assert len(views) == 2 and all(e["url"].startswith("http://127.0.0.1:") for e in views)
    assert all(d["state"] == "done" and d["moves"] == 4 for d in summary["devices"])
