"""`agent report` opened in a real headless browser: Debian's Chromium, driven by
Playwright (never `playwright install`: the system's browser, as .ci/run installs it).

A real run of the simulated phone (recorded, and one without frames), the real command
writing the report, and the page loaded from its file: no console error, no page error,
a section per decision of the journal, every picture decoded, the timeline's links and
the filter working.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


def agent(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no chromium (Debian's package: apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package (pip install -e '.[test]')")
    pw = sync_api.sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])  # root in CI: no sandbox
    except Exception:
        pw.stop()
        raise
    yield b
    b.close()
    pw.stop()


def _run(tmp: Path, *play_args: str) -> tuple[Path, list[dict]]:
    r = agent("play", "--sim", "--moves", "8", "--size", "540x1200", "--runs", str(tmp / "runs"), *play_args, cwd=tmp)
    assert r.returncode == 0, r.stderr
    (run,) = (tmp / "runs").iterdir()
    (journal,) = run.glob("*.jsonl")
    return run, [json.loads(line) for line in journal.read_text().splitlines()]


def _open(browser, report: Path):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    page.goto(report.as_uri(), wait_until="load")
    return page, errors


def _report(run: Path, tmp: Path) -> Path:
    out = tmp / "report.html"
    r = agent("report", str(run), "-o", str(out), cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out)
    return out


def test_a_recorded_run_shows_every_move_with_its_pictures(browser, tmp_path):
    run, lines = _run(tmp_path, "--record")
    decisions = [d for d in lines if d["type"] == "decision"]
    assert len(decisions) == 8
    page, errors = _open(browser, _report(run, tmp_path))
    try:
        page.wait_for_function("Array.from(document.images).every(i => i.complete)")
        moves = page.locator("section.move")
        assert moves.count() == len(decisions)
        assert page.eval_on_selector_all("section.move", "s => s.map(m => m.dataset.index)") == [
            str(d["index"]) for d in decisions]
        # every move has its picture, and every picture on the page was decoded
        per_move = page.eval_on_selector_all(
            "section.move", "s => s.map(m => Array.from(m.querySelectorAll('img')).map(i => i.naturalWidth))")
        assert all(widths and all(w > 0 for w in widths) for widths in per_move), per_move
        assert page.evaluate("Array.from(document.images).every(i => i.naturalWidth > 0)")
        assert page.locator("svg.chart").count() == 4
        # the timeline's mark of a move brings that move up
        page.locator("a.mark").nth(4).click()
        assert page.evaluate("location.hash") == "#" + moves.nth(4).get_attribute("id")
        assert page.evaluate("document.querySelector(':target').dataset.index") == str(decisions[4]["index"])
        # the filter hides the moves whose check passed
        ok = page.locator("section.move.ok").count()
        page.locator("#only-bad").check()
        assert page.evaluate("Array.from(document.querySelectorAll('section.move')).filter(m => m.offsetParent !== null).length") \
            == len(decisions) - ok  # fmt: skip
        assert errors == []
    finally:
        page.close()


def test_a_run_without_frames_loads_from_its_text_boards(browser, tmp_path):
    run, lines = _run(tmp_path)
    decisions = [d for d in lines if d["type"] == "decision"]
    page, errors = _open(browser, _report(run, tmp_path))
    try:
        assert page.locator("section.move").count() == len(decisions)
        assert "no frames recorded: run with --record" in page.locator(".frames-note").inner_text()
        assert page.locator("section.move .board").count() >= 2 * len(decisions)
        assert page.locator("img").count() == 0
        assert errors == []
    finally:
        page.close()
