"""`agent report`: the HTML page of a run folder, read back as HTML.

Journals are written here line by line (each case says what it holds), and one real run of
the simulated phone with --record gives the pictures. The page is parsed with the
standard library's HTML parser: what is asserted is what a browser would show (the
browser itself opens it in tests/integration/test_report_browser.py).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import cv2
import numpy as np
import pytest

from agent.errors import AgentError
from agent.report import NO_FRAMES, write_report
from agent.report.charts import Series, line_chart, nice_ceiling
from agent.report.html import PICTURE_WIDTH, differences

BOARD = "ABCA\nBCAB\nCABC"
AFTER = "ABCA\nBCAD\nCABC"  # (1,3) is not what the rules said
EXPECTED = "ABCA\nBCAB\n?ABC"  # (2,0) left to the refill


# -- reading the page back ----------------------------------------------------------------


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.text: list[str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        out = []
        for c in self.children:
            if (tag is None or c.tag == tag) and (cls is None or cls in c.classes):
                out.append(c)
            out += c.all(tag, cls)
        return out

    def content(self) -> str:
        return "".join(self.text) + "".join(c.content() for c in self.children)


VOID = {"meta", "img", "br", "input", "hr", "link", "line", "circle", "polyline"}


class Tree(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {}, None)
        self.at = self.root
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.at))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        node = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"</{tag}> closes nothing open"
        self.at = node.parent

    def handle_data(self, data):
        self.at.text.append(data)


def page(path: Path) -> Node:
    return Tree(path.read_text(encoding="utf-8")).root


# -- journals written by hand ---------------------------------------------------------------


def start_line(serial: str = "sim-0", **extra) -> dict:
    return {"type": "start", "time": "2026-12-01T10:00:00.000+00:00", "version": "0.1.0", "game": "match3",
            "device": {"serial": serial, "model": "puzzle-sim", "size": [540, 1200], "simulated": True},
            "profile": {"path": "device_profiles/puzzle-sim_540x1200.toml", "match": "exact",
                        "board_bbox": [40, 300, 500, 645], "rows": 3, "cols": 4},
            "options": {"variant": "step", "solver": "plan", "seed": 7, "moves": 3}, **extra}


def decision(i: int, **extra) -> dict:
    return {"type": "decision", "index": i, "board": BOARD, "move": f"{i},0,R",
            "gestures": [["swipe", 100, 350, 210, 350, 200]], "decide_ms": 4.0 + i, "settle_s": 0.2 * i,
            "capture_ms": 30.0 + i, **({"cycle_s": 0.5 * i} if i > 1 else {}), **extra}


def check(i: int, verdict: str, board: str = BOARD, **extra) -> dict:
    return {"type": "check", "index": i, "verdict": verdict, "detail": "", "board": board, "screen_changed": True,
            **extra}


def stop_line(**extra) -> dict:
    return {"type": "stop", "reason": "move limit reached (3)", "kind": "limit", "finished": False,
            "summary": {"moves": 3, "confirmed": 2, "checks": {"as_predicted": 2, "cascade": 1}}, **extra}


def write_journal(folder: Path, lines: list[dict], name: str = "sim-0.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
    return path


def three_moves() -> list[dict]:
    return [
        start_line(),
        decision(1), check(1, "as_predicted", BOARD, expected=BOARD),
        {"type": "moving", "board": BOARD}, {"type": "moving", "board": BOARD},
        decision(2), check(2, "cascade", AFTER, expected=EXPECTED, detail="changed beyond the prediction at (1,3)"),
        {"type": "unreadable", "reason": "a dialog covers the board"},
        decision(3), check(3, "not_applied", BOARD, expected=EXPECTED, detail="the board did not change"),
        stop_line(),
    ]


@pytest.fixture
def text_run(tmp_path) -> Path:
    run = tmp_path / "runs" / "20261201-100000"
    write_journal(run, three_moves())
    return run


def moves_of(root: Node) -> list[Node]:
    return root.all("section", "move")


# -- the content ------------------------------------------------------------------------------


def test_every_move_is_there_with_its_verdict_and_the_header(text_run):
    out = write_report(text_run)
    assert out == text_run / "report.html"
    root = page(out)
    moves = moves_of(root)
    assert [(m.attrs["data-index"], m.attrs["data-verdict"]) for m in moves] == [
        ("1", "as_predicted"), ("2", "cascade"), ("3", "not_applied")]
    assert "ok" in moves[0].classes and "ok" in moves[1].classes and "bad" in moves[2].classes
    assert "1,0,R" in moves[0].content() and "3,0,R" in moves[2].content()
    assert "the board did not change" in moves[2].content()
    text = root.content()
    for shown in ("puzzle-sim", "sim-0", "match3", "0.1.0", "solver=plan", "seed=7", "puzzle-sim_540x1200.toml"):
        assert shown in text, shown
    # the timeline: a mark per move, linking to it, coloured as the move is
    marks = root.all("a", "mark")
    assert [m.attrs["href"] for m in marks] == ["#" + m.attrs["id"] for m in moves]
    assert ["bad" in m.classes for m in marks] == [False, False, True]
    # what came between the moves
    assert "a dialog covers the board" in moves[1].content()
    assert "seen moving 2" in moves[0].content()


def test_cells_that_differ_from_the_prediction_are_marked(text_run):
    moves = moves_of(page(write_report(text_run)))
    first, second, third = (m.all("span", "diff") for m in moves)
    assert first == [] and third == []  # the same board, and one where the rules said '?'
    # the predicted board and the board read after it, each with the one cell marked
    assert [n.content() for n in second] == ["B", "D"]
    assert "1 cell differ" in moves[1].content()
    boards = moves[1].all("div", "board")
    labels = [b.all("div", "label")[0].content() for b in boards]
    assert labels == ["board read", "predicted", "read after the move"]
    assert "?" in boards[1].content()  # the prediction shows what it left to the refill


def test_differences_ignore_unknown_cells_and_other_shapes():
    assert differences("AB\nCD", "AB\nCE") == {(1, 1)}
    assert differences("A?\nCD", "AB\n?D") == set()
    assert differences("AB\nCD", "ABC\nDEF") == set()
    assert differences(None, "AB") == set()


def test_charts_of_the_times_per_move(text_run):
    root = page(write_report(text_run))
    charts = {c.attrs["data-series"]: c for c in root.all("svg", "chart")}
    assert set(charts) == {"capture_ms", "settle_s", "decide_ms", "cycle_s"}
    # a dot per move that has the value; the first move has no cycle time yet
    assert len(charts["capture_ms"].all("circle")) == 3
    assert len(charts["cycle_s"].all("circle")) == 2
    assert "move 2: 32 ms" in charts["capture_ms"].content()


def test_a_chart_without_values_says_so_and_the_axis_is_round():
    svg = line_chart(Series("decide_ms", "decision time", "ms", [(1, None), (2, None)]))
    assert "no decision time recorded" in svg and "<circle" not in svg
    assert [nice_ceiling(v) for v in (0, 0.7, 3, 11, 240)] == [1.0, 1.0, 5.0, 20.0, 250.0]


def test_a_run_without_frames_is_reported_from_its_text_boards(text_run):
    root = page(write_report(text_run))
    assert NO_FRAMES in root.content()
    assert root.all("img") == []
    assert all(len(m.all("div", "board")) >= 2 for m in moves_of(root))


def test_the_stop_and_the_frames_it_names(tmp_path):
    run = tmp_path / "run"
    (run / "frames").mkdir(parents=True)
    shot = np.full((1200, 540, 3), 90, np.uint8)
    cv2.imwrite(str(run / "frames" / "unreadable-00-t3.00.png"), shot)
    lines = three_moves()
    lines[-1] = stop_line(reason="no readable board for 5 s", kind="unreadable",
                          frames=[str(run / "frames" / "unreadable-00-t3.00.png"), "frames/gone.png"])
    write_journal(run, lines)
    root = page(write_report(run))
    stop = root.all("div", "stop")[0]
    assert "no readable board for 5 s" in stop.content() and "unreadable" in stop.content()
    imgs = stop.all("img")
    assert len(imgs) == 1 and _jpeg_width(imgs[0]) == PICTURE_WIDTH
    assert "gone.png is not in the run folder" in stop.content()


def test_journal_text_is_shown_as_text_never_as_markup(tmp_path):
    lines = three_moves()
    lines[2]["detail"] = "<script>alert(1)</script>"
    lines[0]["device"]["model"] = "<b>phone</b>"
    write_journal(tmp_path, lines)
    text = write_report(tmp_path).read_text()
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>phone</b>" not in text
    assert "https://" not in text and "http://" not in text  # nothing loaded from anywhere else


def test_a_torn_last_line_is_left_out_and_said(tmp_path):
    path = write_journal(tmp_path, three_moves()[:-1])
    with open(path, "a") as f:
        f.write('{"type": "decision", "index": 4, "boa')
    root = page(write_report(tmp_path))
    assert len(moves_of(root)) == 3
    assert "cut short" in root.content()


def test_progress_counts_to_the_end(text_run, tmp_path):
    seen: list[tuple[int, int]] = []
    write_report(text_run, tmp_path / "r.html", lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]


def test_a_farm_has_a_summary_table_and_a_section_per_device(tmp_path):
    run = tmp_path / "farm"
    serials = ["127.0.0.1:5555", "127.0.0.1:5557"]
    for n, serial in enumerate(serials):
        lines = [start_line(serial), decision(1), check(1, "as_predicted", BOARD, expected=BOARD)]
        lines += [decision(2), check(2, "as_predicted")] if n else []
        write_journal(run, [*lines, stop_line()], name=f"127.0.0.1_5037_{serial.replace(':', '_')}.jsonl")
    summary = {"run_dir": str(run), "elapsed_s": 3.2, "interrupted": False, "signal": None,
               "devices": [{"serial": s, "adb": "127.0.0.1:5037", "model": "puzzle-sim", "state": "done",
                            "moves": 1 + n, "stop_reason": "move limit reached"} for n, s in enumerate(serials)]
               + [{"serial": "emulator-5554", "state": "skipped", "moves": 0, "last_error": "no profile"}],
               "totals": {"devices": 3, "moves": 3, "by_state": {"done": 2, "skipped": 1}}, "events": []}
    (run / "summary.json").write_text(json.dumps(summary))
    root = page(write_report(run))
    devices = root.all("section", "device")
    assert [d.attrs["data-serial"] for d in devices] == serials
    assert [len(moves_of(d)) for d in devices] == [1, 2]
    table = root.all("table", "summary")[0]
    rows = table.all("tr")[1:]
    assert len(rows) == 3
    links = [r.all("a") for r in rows]
    assert [a[0].attrs["href"] for a in links[:2]] == ["#" + d.attrs["id"] for d in devices]
    assert links[2] == [] and "no profile" in rows[2].content()  # a device with no journal: a row, no section
    assert "skipped=1" in root.all("section", "farm")[0].content()


def test_play_summary_json_is_no_farm(text_run):
    (text_run / "summary.json").write_text(json.dumps({"game": "match3", "moves": 3}))
    root = page(write_report(text_run))
    assert root.all("section", "farm") == []


# -- bad input ----------------------------------------------------------------------------------


def test_a_folder_with_no_journal(tmp_path):
    with pytest.raises(AgentError) as e:
        write_report(tmp_path)
    assert e.value.exit_code == 2 and "no journal" in str(e.value) and "runs/<timestamp>" in e.value.hint
    with pytest.raises(AgentError) as e:
        write_report(tmp_path / "missing")
    assert e.value.exit_code == 2 and "does not exist" in str(e.value)


@pytest.mark.parametrize("content, says", [
    (b"", "no start line"),
    (b'{"type": "decision"}\n', "no start line"),
    (b'{"type": "start"}\nnot json\n{"type": "stop"}\n', "line 2 is no JSON object"),
    (b'[1, 2]\n{"type": "start"}\n', "line 1 is no JSON object"),
    (b'{"type": "start"}\n\xff\xfe\n{"type": "stop"}\n', "line 2 is no JSON object"),
])
def test_an_unreadable_journal(tmp_path, content, says):
    (tmp_path / "sim-0.jsonl").write_bytes(content)
    with pytest.raises(AgentError) as e:
        write_report(tmp_path)
    assert e.value.exit_code == 2 and says in str(e.value) and "sim-0.jsonl" in str(e.value) and e.value.hint
    assert not (tmp_path / "report.html").exists()


def test_an_output_that_cannot_be_written(text_run, tmp_path):
    (tmp_path / "a-file").write_text("x")
    for out in (tmp_path, tmp_path / "a-file" / "report.html"):
        with pytest.raises(AgentError) as e:
            write_report(text_run, out)
        assert e.value.exit_code == 2 and "cannot write the report" in str(e.value) and "-o" in e.value.hint


def test_an_output_that_would_replace_a_file_of_the_run_is_refused(text_run, tmp_path):
    """`-o RUN/<journal>.jsonl` (or the summary, a frame, a profile: any file of the run
    folder but an earlier report) is refused before anything is written; the file is as it
    was. An earlier report is replaced, and a new file in the folder is written."""
    (text_run / "summary.json").write_text('{"moves": 2}')
    (text_run / "frames").mkdir(exist_ok=True)
    (text_run / "frames" / "000001.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "elsewhere.jsonl").write_text("{}\n")
    (text_run / "linked.html").symlink_to(tmp_path / "elsewhere.jsonl")  # (a page by name only: not in the run)
    journal = next(text_run.glob("*.jsonl"))
    for victim in (journal, text_run / "summary.json", text_run / "frames" / "000001.png"):
        before = victim.read_bytes()
        with pytest.raises(AgentError) as e:
            write_report(text_run, victim)
        assert e.value.exit_code == 2 and "would replace it" in str(e.value) and "-o" in e.value.hint
        assert victim.read_bytes() == before
    with pytest.raises(AgentError):
        write_report(journal, journal)  # a journal given alone, and as the output
    assert write_report(text_run, text_run / "linked.html")  # outside the run: the user's choice
    first = write_report(text_run)
    assert write_report(text_run, first) == first  # an earlier report is replaced
    assert write_report(text_run, text_run / "second.html").is_file()


ROOT = Path(__file__).resolve().parents[2]
ROOT = Path(__file__).resolve().parents[2]


def agent(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real `agent` command, run from `cwd` on this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, timeout=180,
                          cwd=cwd, env=env)  # fmt: skip


def test_the_command_prints_the_path_and_bad_input_exits_2(text_run, tmp_path):
    r = agent("report", str(text_run), "-o", str(tmp_path / "out.html"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "out.html") and (tmp_path / "out.html").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    r = agent("report", str(empty), cwd=tmp_path)
    assert r.returncode == 2 and "error:" in r.stderr and "fix:" in r.stderr and "Traceback" not in r.stderr
    r = agent("report", str(text_run), "-o", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and "--output" in r.stderr and "Traceback" not in r.stderr
    journal = next(text_run.glob("*.jsonl"))
    kept = journal.read_bytes()
    r = agent("report", str(text_run), "-o", str(journal), cwd=tmp_path)
    assert r.returncode == 2 and "would replace it" in r.stderr and "Traceback" not in r.stderr
    assert journal.read_bytes() == kept


# -- a recorded run: the pictures ---------------------------------------------------------------


def _jpeg_width(img: Node) -> int:
    src = img.attrs["src"]
    assert src.startswith("data:image/jpeg;base64,")
    picture = cv2.imdecode(np.frombuffer(base64.b64decode(src.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None
    return int(picture.shape[1])


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("recorded")
    r = agent("play", "--sim", "--record", "--moves", "4", "--size", "540x1200", "--runs", str(where / "runs"),
              cwd=where)  # fmt: skip
    assert r.returncode == 0, r.stderr
    (run,) = (where / "runs").iterdir()
    return run


def test_a_recorded_run_has_the_pictures_of_every_move(recorded_run, tmp_path):
    journal = next(recorded_run.glob("*.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    decisions = [d for d in lines if d["type"] == "decision"]
    checks = {d["index"]: d for d in lines if d["type"] == "check"}
    root = page(write_report(recorded_run, tmp_path / "r.html"))
    moves = moves_of(root)
    assert len(moves) == len(decisions) == 4
    assert NO_FRAMES not in root.content()
    for m, d in zip(moves, decisions):
        imgs = m.all("img")
        # before the swipe, and after it when its check was read on a kept frame
        assert len(imgs) == (2 if "frame" in checks.get(d["index"], {}) else 1), m.attrs
        assert all(_jpeg_width(i) == PICTURE_WIDTH for i in imgs)
        assert d["board"].split("\n")[0] in m.content().replace("\n", "")
    # the check carries the rules' prediction, shown as its own board
    assert all("expected" in c for c in checks.values())
    assert all(any(b.all("div", "label")[0].content() == "predicted" for b in m.all("div", "board"))
               for m in moves)  # fmt: skip


def test_a_journal_given_alone_reports_that_device(recorded_run, tmp_path):
    journal = next(recorded_run.glob("*.jsonl"))
    root = page(write_report(journal, tmp_path / "one.html"))
    assert len(root.all("section", "device")) == 1 and len(moves_of(root)) == 4


def test_a_run_that_stopped_before_its_first_move(tmp_path):
    write_journal(tmp_path, [start_line(), {"type": "screen", "kind": "unknown", "reason": "no board found"},
                             stop_line(reason="no board on the screen", kind="unreadable")])  # fmt: skip
    root = page(write_report(tmp_path))
    assert moves_of(root) == [] and root.all("a", "mark") == []
    assert "no board on the screen" in root.content() and "no board found" in root.content()
    assert all("no " in c.content() and "recorded" in c.content() for c in root.all("svg", "chart"))


def test_a_device_started_again_shows_each_run(tmp_path):
    # a farm's worker that failed and was started again appends to the same journal
    first = [start_line(), decision(1), check(1, "as_predicted"), {"type": "stop", "reason": "device offline",
                                                                   "kind": "device_error"}]  # fmt: skip
    second = [start_line(), decision(1), check(1, "as_predicted"), decision(2), check(2, "unexpected"), stop_line()]
    write_journal(tmp_path, first + second)
    root = page(write_report(tmp_path))
    sessions = root.all("section", "session")
    assert [len(moves_of(s)) for s in sessions] == [1, 2]
    ids = [m.attrs["id"] for m in moves_of(root)]
    assert len(set(ids)) == 3  # every move can be linked to
    assert "device offline" in sessions[0].content() and "move limit reached (3)" in sessions[1].content()
