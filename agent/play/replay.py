"""A recorded run read and decided again with the current code: `agent replay`.

The journal says, line by line, what the run read and decided on which frame; the
recording beside it holds those frames. Replaying makes the same calls the play loop
made, in its order, on the same frames: a `profile` line switches to the profile the run
adopted then (a new board, a look learned); a `check` line reads its frame, tells the
player whether the screen moved, and checks the move made before; a `decision` line reads
its frame and decides. Each decision's board and move are compared with the recorded
ones; a line whose frame was not kept is skipped and counted. The player is the one the
run made (same game, settings and seed), so its plans and what it learned by watching
come out the same when the code does.

`replay_loop` plays a recording back through the play loop itself, on a `ReplayDevice`.
`record_sim_run` makes a small recording from a simulated phone: the regression
recordings in tests/data/recordings are made with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.device.clock import ManualClock
from agent.errors import AgentError
from agent.games.base import Decision, Learns, NoMove, SeesMotion, WaryOf
from agent.games.registry import get_game
from agent.play.journal import read_journal
from agent.play.recording import Recording, frames_dir
from agent.play.replay_device import RecordingEnded, ReplayDevice, gesture_lines, read_events
from agent.vision.hole_memory import HoleMemory
from agent.vision.profile import GameProfile

RECORD_HINT = "record it with `agent play --record`"


@dataclass(frozen=True)
class CellDiff:
    row: int
    col: int
    recorded: str
    replayed: str


@dataclass(frozen=True)
class DecisionRow:
    """One recorded decision and what replaying it gave."""

    index: int
    recorded_move: str
    replayed_move: str | None  # None: not replayed (its frame was not kept)
    board_same: bool
    move_same: bool
    cells: tuple[CellDiff, ...] = ()  # where the boards read differ
    recorded_board: str = ""
    replayed_board: str | None = None
    frame: int | None = None
    note: str = ""  # why it was not replayed, or what the replay made of it

    @property
    def replayed(self) -> bool:
        return self.replayed_move is not None

    @property
    def same(self) -> bool:
        return self.replayed and self.board_same and self.move_same

    def as_dict(self) -> dict[str, object]:
        return {
            "index": self.index, "frame": self.frame, "replayed": self.replayed, "same": self.same,
            "board_same": self.board_same, "move_same": self.move_same, "recorded_move": self.recorded_move,
            "replayed_move": self.replayed_move, "recorded_board": self.recorded_board,
            "replayed_board": self.replayed_board, "note": self.note,
            "cells": [{"row": c.row, "col": c.col, "recorded": c.recorded, "replayed": c.replayed} for c in self.cells],
        }  # fmt: skip


@dataclass(frozen=True)
class CheckRow:
    index: int
    recorded: str
    replayed: str | None  # None: not replayed

    @property
    def same(self) -> bool:
        return self.replayed == self.recorded

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "recorded": self.recorded, "replayed": self.replayed, "same": self.same}


@dataclass
class ReplayReport:
    run_dir: Path
    journal: Path
    game: str
    profile: str  # where the profile came from
    decisions: list[DecisionRow] = field(default_factory=list)
    checks: list[CheckRow] = field(default_factory=list)
    not_recorded: int = 0  # decision and check lines whose frame was not kept
    other: list[str] = field(default_factory=list)  # other differences (a wait with nothing to play)
    notes: list[str] = field(default_factory=list)
    # what of the run could not be compared: a torn journal's last line, damaged index lines
    damaged: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[DecisionRow]:
        return [d for d in self.decisions if d.replayed and not d.same]

    @property
    def checks_differing(self) -> list[CheckRow]:
        return [c for c in self.checks if c.replayed is not None and not c.same]

    @property
    def ok(self) -> bool:
        """Every recorded decision had its frame, and everything replayed agrees."""
        return (
            bool(self.decisions) and all(d.same for d in self.decisions) and not self.checks_differing
            and all(c.replayed is not None for c in self.checks) and not self.other and not self.damaged
        )  # fmt: skip

    def details(self) -> str:
        """What was compared and how it came out, in one line."""
        n = len(self.decisions)
        if not n:
            return "the journal holds no decision to compare"
        replayed = sum(d.replayed for d in self.decisions)
        parts = [f"{sum(d.same for d in self.decisions)} of {n} decisions the same"]
        if replayed < n:
            parts.append(f"{n - replayed} not replayed (frame not recorded)")
        if self.checks:
            unchecked = sum(c.replayed is None for c in self.checks)
            same = len(self.checks) - unchecked - len(self.checks_differing)
            parts.append(f"{same} of {len(self.checks)} checks the same")
        others = self.not_recorded - (n - replayed)
        if others:
            parts.append(f"{others} other {'line' if others == 1 else 'lines'} skipped (frame not recorded)")
        parts.extend(self.other)
        parts.extend(self.damaged)
        return "; ".join(parts)

    def summary(self) -> str:
        if self.damaged and not self.differing and not self.checks_differing and not self.other:
            return "incomplete: " + self.details()  # (what could be compared agrees)
        return ("same: " if self.ok else "differs: ") + self.details()

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok, "run": str(self.run_dir), "journal": str(self.journal), "game": self.game,
            "profile": self.profile, "summary": self.summary(), "not_recorded": self.not_recorded,
            "decisions": [d.as_dict() for d in self.decisions], "checks": [c.as_dict() for c in self.checks],
            "other": list(self.other), "notes": list(self.notes), "damaged": list(self.damaged),
        }  # fmt: skip


# -- finding the run ---------------------------------------------------------------------


def find_journal(run: Path, serial: str | None = None) -> Path:
    """The journal of `serial` in the run folder `run` (or `run` itself when it is a
    journal); with no serial, the only journal there."""
    run = Path(run)
    if run.is_file() and run.suffix == ".jsonl":
        return run
    if not run.is_dir():
        what = "a file, not a run folder or a journal (.jsonl)" if run.exists() else "no run folder (not there)"
        raise AgentError(f"{run} is {what}", hint="give a folder under runs/, as `agent play` names it")
    journals = sorted(p for p in run.glob("*.jsonl") if p.is_file())
    if serial is not None:
        from agent.play.journal import journal_name

        path = run / journal_name(serial)
        if path.is_file():
            return path
        raise AgentError(f"{run} has no journal of {serial!r} ({path.name})",
                         hint=_choices(journals) or "give a run folder that holds a journal (<serial>.jsonl)")  # fmt: skip
    if not journals:
        raise AgentError(f"{run} holds no journal (<serial>.jsonl)",
                         hint="give a run folder `agent play --record` wrote (runs/<timestamp>/)")  # fmt: skip
    if len(journals) > 1:
        raise AgentError(f"{run} holds {len(journals)} journals: say which with --serial",
                         hint=_choices(journals))  # fmt: skip
    return journals[0]


def _choices(journals: list[Path]) -> str:
    if not journals:
        return ""
    return "pick one with --serial: " + ", ".join(p.stem for p in journals)


def load_run(journal: Path) -> tuple[list[dict[str, Any]], dict[str, Any], Recording]:
    """The journal's lines, its start line and its recording."""
    return _load_run(journal)[:3]


def _load_run(journal: Path) -> tuple[list[dict[str, Any]], dict[str, Any], Recording, bool]:
    """`load_run`, and whether the journal's last line was torn."""
    lines, torn = read_events(journal)
    if not lines or not isinstance(lines[0], dict) or lines[0].get("type") != "start":
        raise AgentError(f"{journal} does not begin with a start line: no journal of a run",
                         hint="give a journal `agent play` wrote")  # fmt: skip
    if not frames_dir(journal).is_dir():
        raise AgentError(f"{journal} has no recording (no {frames_dir(journal).name}/ beside it)", hint=RECORD_HINT)
    return lines, lines[0], Recording.open(journal), torn


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def recorded_profile(start: dict[str, Any], recording: Recording) -> GameProfile:
    profile = start.get("profile")
    snapshot = profile.get("snapshot") if isinstance(profile, dict) else None
    if not snapshot:
        raise AgentError("the run was not recorded whole (no profile kept with its frames): only the frames "
                         "before its stop may be there",
                         hint=RECORD_HINT + ", or replay what there is with the current profile: --profiles DIR")  # fmt: skip
    return recording.profile_at(str(snapshot))


def run_settings(game: Any, start: dict[str, Any], notes: list[str] | None = None) -> tuple[dict[str, Any], int]:
    """The settings and seed the run's player was made with. A start line that lacks one
    (an older journal, a hand edit) gets the game's default for it, said in `notes`; one
    the game does not accept is an AgentError naming it."""
    from agent.games.registry import settings as game_settings

    options = start.get("options")
    options = dict(options) if isinstance(options, dict) else {}
    seed = _int(options.get("seed"))
    known = {o.name for o in game.screen.options}
    given = {k: v for k, v in options.items() if k in known}
    device = start.get("device")
    sim = bool(device.get("simulated")) if isinstance(device, dict) else False
    try:
        out = game_settings(game, given, sim=sim or any(o.sim_only for o in game.screen.options if o.name in given))
    except AgentError as exc:
        raise AgentError(f"the journal's start line has options the game does not take: {exc}",
                         hint="give a journal `agent play` wrote") from None  # fmt: skip
    missing = sorted(known - set(given))
    if missing and notes is not None:
        notes.append(f"the start line names no {', '.join(missing)}: the game's default is used")
    return out, seed


# -- replaying ---------------------------------------------------------------------------


def _frame_of(line: dict[str, Any], recording: Recording) -> int | None:
    fid = line.get("frame")
    if isinstance(fid, int) and not isinstance(fid, bool) and fid in recording.entries:
        return fid
    return None


def board_diff(recorded: str, replayed: str | None) -> tuple[CellDiff, ...]:
    """The cells where two boards in the game's notation differ (rows of one letter a cell)."""
    if replayed is None:
        return ()
    a, b = recorded.split("\n"), replayed.split("\n")
    out = []
    for r in range(max(len(a), len(b))):
        ra, rb = (a[r] if r < len(a) else ""), (b[r] if r < len(b) else "")
        for c in range(max(len(ra), len(rb))):
            x, y = (ra[c] if c < len(ra) else ""), (rb[c] if c < len(rb) else "")
            if x != y:
                out.append(CellDiff(r, c, x, y))
    return tuple(out)


def replay_run(run_dir: Path, serial: str | None = None, profile_override: GameProfile | None = None) -> ReplayReport:
    """Read and decide the recorded run again, on its frames, and compare (module docstring)."""
    journal = find_journal(run_dir, serial)
    lines, start, recording, torn = _load_run(journal)
    game = get_game(str(start.get("game")), "the journal's game")
    screen = game.screen
    if screen is None:
        raise AgentError(f"{game.name} is not played on a screen: nothing to replay")
    if profile_override is not None:
        profile, source = profile_override, "the given profile"
    else:
        profile, source = recorded_profile(start, recording), "the recorded snapshot"
    report = ReplayReport(Path(run_dir), journal, game.name, source)
    settings, seed = run_settings(game, start, report.notes)
    player = screen.player(profile, settings, seed)
    if torn:
        report.damaged.append("the journal's last line is torn (the run was killed while writing it): what it "
                              "said is not compared")  # fmt: skip
    report.damaged.extend(recording.damaged)
    made: dict[int, tuple[Any, Decision[Any]]] = {}  # decision index -> (board before, the decision replayed)
    holes = HoleMemory.for_game(getattr(screen.role_hints, "falls", False))  # as the loop reads
    for line in lines[1:]:
        kind = line.get("type")
        if kind == "profile":
            snapshot = line.get("snapshot")
            if snapshot:
                profile = recording.profile_at(str(snapshot))
                if profile_override is not None and not report.notes:
                    report.notes.append(f"the run changed its profile ({line.get('reason', '')}): the recorded ones "
                                        "are used from there")  # fmt: skip
            elif profile_override is None:
                report.notes.append(f"a profile change was not recorded ({line.get('reason', '')})")
            if "new_classes" in line and isinstance(player, Learns):
                player.reset_board()  # a new level's board, as the loop tells the player
        elif kind == "check":
            _replay_check(line, recording, screen, profile, player, made, report, holes)
        elif kind == "decision":
            _replay_decision(line, recording, screen, profile, player, made, report, holes)
        elif kind == "no_move" and _frame_of(line, recording) is None:
            report.not_recorded += 1
        elif kind == "no_move":
            read = _read(screen, recording, _frame_of(line, recording), profile, holes)
            decision = player.decide(read.board) if read is not None and read.playable else None
            if not isinstance(decision, NoMove):
                got = "an unreadable board" if decision is None else f"the move {decision.text}"
                report.other.append(f"a board with nothing to play ({line.get('reason', '')}) now gives {got}")
    return report


def _read(screen: Any, recording: Recording, fid: int | None, profile: GameProfile,
          holes: HoleMemory | None) -> Any:
    """The frame read as the loop reads it: a hole of this board read as one, whatever
    the scene behind it shows now (agent.vision.hole_memory)."""
    if fid is None:
        return None
    try:
        frame = recording.frame(fid)
        return screen.read(frame, profile) if holes is None else holes.read(screen.read, frame, profile)
    except ValueError:
        return None  # the profile's board box does not fit the frame


def _replay_check(line: dict[str, Any], recording: Recording, screen: Any, profile: GameProfile, player: Any,
                  made: dict[int, tuple[Any, Decision[Any]]], report: ReplayReport,
                  holes: HoleMemory | None) -> None:  # fmt: skip
    verdict = str(line.get("verdict", ""))
    if verdict == "unverified":
        return  # the loop never asked the player: the run stopped before the result showed
    index = _int(line.get("index"))
    fid = _frame_of(line, recording)
    if fid is None:
        report.not_recorded += 1
        report.checks.append(CheckRow(index, verdict, None))
        return
    pending = made.pop(index, None)
    read = _read(screen, recording, fid, profile, holes)
    if pending is None or read is None:
        why = "no board read" if read is None else "its move was not replayed"
        report.checks.append(CheckRow(index, verdict, f"not checked: {why}"))
        return
    if isinstance(player, SeesMotion):
        player.moved(bool(line.get("screen_changed", True)))
    check = player.check(pending[0], pending[1], read.board)
    report.checks.append(CheckRow(index, verdict, str(check.verdict)))


def _replay_decision(line: dict[str, Any], recording: Recording, screen: Any, profile: GameProfile, player: Any,
                     made: dict[int, tuple[Any, Decision[Any]]], report: ReplayReport,
                     holes: HoleMemory | None) -> None:  # fmt: skip
    index = _int(line.get("index"))
    move, board = str(line.get("move", "")), str(line.get("board", ""))
    fid = _frame_of(line, recording)
    if fid is None:
        report.not_recorded += 1
        report.decisions.append(DecisionRow(index, move, None, False, False, recorded_board=board,
                                            note="frame not recorded"))  # fmt: skip
        return
    read = _read(screen, recording, fid, profile, holes)
    if read is None:
        report.decisions.append(DecisionRow(index, move, "-", False, False, recorded_board=board, frame=fid,
                                            note="the profile's board box does not fit the frame"))  # fmt: skip
        return
    cells = board_diff(board, read.text)
    if holes is not None:
        holes.saw(profile, read.reading)  # as the loop does, on the boards moves are chosen on
    if isinstance(player, WaryOf):  # as the loop told it, from what the run had seen move
        player.wary_of(frozenset((int(r), int(c)) for r, c in line.get("unproven", [])))
    decision = player.decide(read.board)
    if isinstance(decision, NoMove):
        replayed, note = f"no move ({decision.reason})", "nothing to play on the board as read"
    else:
        replayed, note = decision.text, ""
        made[index] = (read.board, decision)
    report.decisions.append(DecisionRow(index, move, replayed, not cells and read.text == board, replayed == move,
                                        cells, board, read.text, fid, note))  # fmt: skip


# -- through the play loop ---------------------------------------------------------------

# Two gestures are the same one when their points are this close, in pixels. The replay
# device shows one frame per stretch between gestures, the last the run read there; a run
# that found the board again on an earlier frame of the stretch (the same board, a JPEG
# apart) may put a cell's centre a pixel or two elsewhere: still the same swipe.
SAME_POINT_PX = 3


def same_gesture(a: list[object], b: list[object]) -> bool:
    if len(a) != len(b) or not a or a[0] != b[0]:
        return False
    if a[0] == "tap":
        points = 2
    elif a[0] == "swipe":
        points = 4
    else:
        return a == b
    close = all(isinstance(x, int) and isinstance(y, int) and abs(x - y) <= SAME_POINT_PX
                for x, y in zip(a[1 : 1 + points], b[1 : 1 + points]))  # fmt: skip
    return close and a[1 + points :] == b[1 + points :]


def same_gestures(a: list[list[object]], b: list[list[object]]) -> bool:
    return len(a) == len(b) and all(same_gesture(x, y) for x, y in zip(a, b))


@dataclass(frozen=True)
class LoopReplay:
    """The play loop run on a recording: what it did, against what the run did."""

    recorded: list[list[object]]  # every gesture the run made on the phone (moves, dismissals)
    replayed: list[list[object]]  # every gesture the loop made on the replay device
    recorded_moves: list[str]  # the moves in the game's notation
    replayed_moves: list[str]
    recorded_move_gestures: list[list[object]]  # the gestures of the moves alone
    replayed_move_gestures: list[list[object]]
    stop_reason: str
    ended: bool  # the recording ran out (rather than the loop stopping by itself)
    journal: Path | None  # the replay's own journal, when one was asked for

    @property
    def moves(self) -> int:
        return len(self.replayed_moves)

    @property
    def moves_same(self) -> bool:
        """The same moves, made with the same gestures (to `SAME_POINT_PX`)."""
        return (self.replayed_moves == self.recorded_moves
                and same_gestures(self.replayed_move_gestures, self.recorded_move_gestures))  # fmt: skip

    @property
    def same(self) -> bool:
        """Every gesture the same (to `SAME_POINT_PX`), a dialog's tap included."""
        return self.moves_same and same_gestures(self.replayed, self.recorded)

    @property
    def first_move_difference(self) -> int | None:
        """The first move (1-based) made otherwise, or None."""
        pairs = list(zip(self.recorded_moves, self.replayed_moves))
        for i, (a, b) in enumerate(pairs):
            if a != b:
                return i + 1
        if len(self.recorded_moves) != len(self.replayed_moves):
            return len(pairs) + 1
        return None if self.moves_same else 1 + next(
            (i for i, (a, b) in enumerate(zip(self.recorded_move_gestures, self.replayed_move_gestures))
             if not same_gesture(a, b)), 0)

    def as_dict(self) -> dict[str, object]:
        return {
            "same": self.same, "moves_same": self.moves_same, "moves": self.moves,
            "first_move_difference": self.first_move_difference, "stop_reason": self.stop_reason,
            "ended": self.ended, "recorded_moves": self.recorded_moves, "replayed_moves": self.replayed_moves,
            "recorded_gestures": self.recorded, "replayed_gestures": self.replayed,
            "journal": None if self.journal is None else str(self.journal),
        }  # fmt: skip


def _moves(lines: list[dict[str, Any]]) -> tuple[list[str], list[list[object]]]:
    decisions = [line for line in lines if line.get("type") == "decision"]
    return [str(d.get("move", "")) for d in decisions], gesture_lines(decisions)


def replay_loop(run_dir: Path, serial: str | None = None, profile_override: GameProfile | None = None,
                journal: Path | None = None) -> LoopReplay:  # fmt: skip
    """Play the recorded run back through the play loop, on a ReplayDevice serving its
    frames, with the run's player, settings and move limit; what the loop did against
    what the run did. `journal`: where the replay's own journal goes (None: a temporary
    file, removed)."""
    import tempfile

    from agent.play.journal import Journal
    from agent.play.loop import PlayLoop, PlayOptions

    path = find_journal(run_dir, serial)
    lines, start, recording = load_run(path)
    game = get_game(str(start.get("game")), "the journal's game")
    if game.screen is None:
        raise AgentError(f"{game.name} is not played on a screen: nothing to replay")
    profile = profile_override if profile_override is not None else recorded_profile(start, recording)
    settings, seed = run_settings(game, start)
    missing = [line.get("index") for line in lines if line.get("type") == "decision"
               and _frame_of(line, recording) is None]  # fmt: skip
    if missing:
        raise AgentError(f"the frames of {len(missing)} moves were not recorded (first: move {missing[0]}): "
                         "the play loop cannot play the run back", hint=RECORD_HINT)  # fmt: skip
    device = ReplayDevice(recording, lines)
    options = start.get("options")
    moves = options.get("moves") if isinstance(options, dict) else None
    launch = isinstance(options, dict) and options.get("launch") is True  # the game was started, and brought back
    level_life = isinstance(options, dict) and options.get("level_life") is True  # a game of levels, as recorded
    levels = options.get("levels") if isinstance(options, dict) else None
    play_options = PlayOptions(moves=moves if isinstance(moves, int) and not isinstance(moves, bool) else None,
                               launch=launch, level_life=level_life,
                               levels=levels if isinstance(levels, int) and not isinstance(levels, bool) else None)  # fmt: skip
    player = game.screen.player(profile, settings, seed)
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        where = journal if journal is not None else Path(tmp) / path.name
        with Journal(where) as out:
            loop = PlayLoop(device, game, profile, player, ManualClock(), play_options, out)
            try:
                reason, ended = loop.run().stop_reason, False
            except RecordingEnded as exc:
                reason, ended = str(exc), True
        replayed_lines = read_journal(where)
    rec_moves, rec_gestures = _moves(lines)
    got_moves, got_gestures = _moves(replayed_lines)
    return LoopReplay(gesture_lines(lines), device.gestures, rec_moves, got_moves, rec_gestures, got_gestures,
                      reason, ended, journal)  # fmt: skip


# -- making recordings -------------------------------------------------------------------


def record_sim_run(game_name: str, run_dir: Path, moves: int, size: tuple[int, int] = (540, 1200), seed: int = 0,
                   given: dict[str, object] | None = None, lossless: bool = False) -> Path:  # fmt: skip
    """Play `moves` moves on the game's simulated phone (simulated time) with every frame
    recorded, into the new folder `run_dir`: the journal, its frames and summary.json, as
    `agent play --sim --record` writes them. `given`: the game's options (None: not given).
    The simulated phone's profile is written to a temporary folder: the recording keeps
    its own copy. `lossless`: frames as PNG. The journal's path."""
    import json
    import os
    import tempfile

    from agent.files import write_atomic

    from agent.games.registry import settings as game_settings
    from agent.play import run as runs_mod
    from agent.play.journal import journal_name
    from agent.play.loop import PlayOptions
    from agent.play.recording import RecordOptions

    game = get_game(game_name)
    settings = game_settings(game, given or {}, True)
    run_dir = Path(run_dir)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise AgentError(f"{run_dir} is not empty: a recording goes into a new folder", hint="remove it first")
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="replay-profiles-") as profiles:
        run = runs_mod.sim_run(game, settings, seed, size, False, Path(profiles))
        journal = run_dir / journal_name(run.device.serial)
        runs_mod.play(run, PlayOptions(moves=moves), journal, summary_path=run_dir / "summary.json",
                      record=RecordOptions(lossless=lossless))  # fmt: skip
        # the profile is named by its file: the temporary folder was this machine's, and is gone
        for path in (journal, run_dir / "summary.json"):
            if path.exists():
                text = path.read_text(encoding="utf-8")
                folder = json.dumps(str(Path(profiles)) + os.sep)[1:-1]
                write_atomic(path, text.replace(folder, "").encode("utf-8"))
    return journal
