"""One run of one game on one phone, set up the same way for `agent play` and each farm
worker: the device (simulated or real), its profile, the player, the journal with its
header line, and `summary.json` once the loop stops."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent import __version__, signals
import numpy as np

from agent.device.base import Device
from agent.simphone.latency import SlowCapture
from agent.device.clock import Clock, ManualClock, RealClock
from agent.errors import AgentError
from agent.games.base import Game, Learns, Player, Status, StatusReader
from agent.play.journal import Journal, write_json_atomic
from agent.play.loop import PlayLoop, PlayOptions
from agent.play.recording import Recorder, RecordOptions
from agent.play.watch import Watcher
from agent.play.stats import PlaySummary
from agent.vision.profile import GameProfile, ProfileMatch, find_profile, write_game_profile


@dataclass
class Run:
    game: Game[Any, Any]
    device: Device
    clock: Clock
    match: ProfileMatch
    settings: dict[str, Any]
    seed: int
    phone: Any | None = None  # the simulated phone, when it is one (for its own count)
    status_reader: StatusReader | None = None
    notes: list[str] = field(default_factory=list)  # what the user should know (which profile)

    @property
    def size(self) -> tuple[int, int]:
        return self.device.screen_size()

    def header(self, options: PlayOptions, snapshot: str | None = None, **extra: object) -> dict[str, object]:
        """The journal's first line: tool, game, device, profile (and where the recording
        keeps a copy of it) and options."""
        w, h = self.size
        p = self.match.profile
        return {
            "version": __version__, "game": self.game.name,
            "device": {"serial": self.device.serial, "model": self.device.model, "size": [w, h],
                       "simulated": self.phone is not None, **extra},
            "profile": {"path": str(self.match.path), "match": self.match.how, "board_bbox": list(p.board_bbox),
                        "rows": p.rows, "cols": p.cols, **({"snapshot": snapshot} if snapshot else {})},
            "options": {**self.settings, "seed": self.seed, "moves": options.moves, "launch": options.launch,
                        **({"levels": options.levels, "level_life": True} if options.level_life else {})},
        }  # fmt: skip

    @property
    def has_levels(self) -> bool:
        """A game of levels: a real phone's game, or a simulated one read as a real one is (its
        header by OCR). A move counter at 0 ends a level there, not the run; a simulated
        game with its own count (the plain step game) keeps its own end."""
        screen = self.game.screen
        if screen is None or not getattr(screen, "has_levels", False):
            return False
        if self.match.profile.source == "sim-layout":
            return False  # written from the plain simulator's own layout: its step game, with its own end
        return self.phone is None or self.game.sim is None or self.game.sim.status_reader(self.phone) is None

    def options(self, moves: int | None = None, launch: bool = False, levels: int | None = None) -> PlayOptions:
        """The loop's options for this run: a game of levels plays level after level."""
        if levels is not None and not self.has_levels:
            raise ValueError(f"--levels: {self.game.name} on this phone has no levels (it plays to its own end)")
        return PlayOptions(moves=moves, launch=launch, level_life=self.has_levels, levels=levels)

    def make_player(self) -> Player[Any, Any]:
        """The game's player for this run: what it needs (a plan library, say) is read now,
        so a broken one fails before any journal or run folder is made."""
        screen = self.game.screen
        assert screen is not None
        return screen.player(self.match.profile, self.settings, self.seed)

    def truth(self) -> dict[str, object] | None:
        """The simulator's own count of the game, when the phone is simulated."""
        if self.phone is None or self.game.sim is None:
            return None
        return self.game.sim.truth(self.phone)


def sim_run(game: Game[Any, Any], settings: dict[str, Any], seed: int, size: tuple[int, int], realtime: bool,
            profiles: Path, latency_ms: float = 0.0) -> Run:  # fmt: skip
    """The game's simulated phone and the profile it is read with."""
    sim = game.sim
    if sim is None:
        raise ValueError(f"{game.name} has no simulated phone")
    clock: Clock = RealClock() if realtime else ManualClock()
    phone = sim.phone(settings, seed, size, clock, None)
    _, which = sim.save_profile(phone, profiles)
    w, h = phone.screen_size()
    match = find_profile(phone.model, w, h, game.name, [profiles])
    _check(game, match)
    status = sim.status_reader(phone) or header_status(match.profile)
    device: Device = phone if not latency_ms else SlowCapture(phone, clock, latency_ms / 1000.0)
    return Run(game, device, clock, match, settings, seed, phone, status,
               [f"profile: {which}", *match.notes()])  # fmt: skip


def device_run(game: Game[Any, Any], device: Device, settings: dict[str, Any], seed: int, profiles: Path,
               clock: Clock | None = None) -> Run:  # fmt: skip
    """A real phone (or one on the wire) and its profile from `profiles`."""
    w, h = device.screen_size()
    match = find_profile(device.model, w, h, game.name, [profiles])
    _check(game, match)
    return Run(game, device, clock or RealClock(), match, settings, seed, status_reader=header_status(match.profile),
               notes=match.notes())  # fmt: skip


# The header changes slowly next to the board and OCR costs tens of milliseconds a
# number: it is read on every few frames, and the last reading stands between.
HEADER_EVERY = 4


def header_status(profile: GameProfile) -> StatusReader | None:
    """The game's header (moves left, score) read by OCR where the profile says, or None
    when the profile names no header or no OCR engine is installed."""
    if not ({"moves", "score", "level", "goal"} & profile.hud.keys()):
        return None
    from agent.vision.ocr import default_ocr

    ocr = default_ocr()
    return None if ocr is None else HeaderStatus(profile, ocr)


class HeaderStatus:
    """The header read by OCR every HEADER_EVERY frames; the last reading stands between.
    It reads with the profile in play (see FollowsProfile): the goal's icon of a level
    that asks for crates learned at the level before is matched to their class."""

    def __init__(self, profile: GameProfile, ocr: Any) -> None:
        self._ocr = ocr
        self._calls = 0
        self._last: Status | None = None
        self.adopt(profile)

    def adopt(self, profile: GameProfile) -> None:
        from agent.vision.header import header_reading

        self._reader = header_reading(profile, self._ocr)

    def __call__(self, frame: np.ndarray) -> Status | None:
        # The same Status object stands for one reading until the next (agent.play.levels
        # counts readings, not frames).
        if self._reader is None:
            return None
        # Near the level's end the counter is read on every frame: a reading some frames
        # old could still say 1 after the last move, and a move made then is one the game
        # ignores (and a counter read at 0 is read again: once is no proof of the end).
        near_end = self._last is not None and self._last.moves_left is not None \
            and self._last.moves_left <= HEADER_EVERY  # fmt: skip
        if self._calls % HEADER_EVERY == 0 or near_end:
            r = self._reader(frame)
            self._last = None if r.moves is None and r.score is None and r.level is None and r.goal is None else \
                Status(moves_left=r.moves, score=r.score, level=r.level, goal=r.goal)  # fmt: skip
        self._calls += 1
        return self._last


def _check(game: Game[Any, Any], match: ProfileMatch) -> None:
    if game.screen is None:
        raise ValueError(f"{game.name} is not played on a screen")
    game.screen.check_profile(match.profile)


def play(
    run: Run, options: PlayOptions, journal_path: Path, on_move: Callable[[PlaySummary], None] | None = None,
    should_stop: Callable[[], bool] | None = None, summary_path: Path | None = None,
    player: Player[Any, Any] | None = None, record: RecordOptions | None = None, watcher: Watcher | None = None,
    journal_tee: Callable[[dict[str, Any]], None] | None = None, **header: object,
) -> PlaySummary:  # fmt: skip
    """Play the run to its stop, journal every event, and write its summary.

    With `record`, every frame read at rest is kept beside the journal
    (`agent.play.recording`); without, the last few are, when the run stops on a failure.

    A stop signal (Ctrl-C, SIGTERM, SIGHUP) stops the loop at once, with its stop line;
    one that comes while the journal opens or the summary is written waits, so neither
    is left without the other (one that came after the loop's end is raised here last).

    `journal_tee` is handed every journal line as it is written (`Journal`'s tee)."""
    player = player or run.make_player()
    w, h = run.size
    recorder = Recorder(journal_path, "all" if record is not None else "ring", record, (run.device.model, w, h))
    with signals.deferred(), Journal(journal_path, tee=journal_tee) as journal:
        journal.write("start", **run.header(options, recorder.snapshot_profile(run.match.profile), **header))
        loop = PlayLoop(run.device, run.game, run.match.profile, player, run.clock, options, journal,
                        run.status_reader, on_move, should_stop, lambda lp: save_learned(run, lp), recorder,
                        watcher)  # fmt: skip
        try:
            summary = loop.run()
        finally:
            kept = recorder.close()
            if record is not None:
                loop.summary.recording = {"frames": kept.frames, "mb": round(kept.bytes / 1e6, 2),
                                          "budget_reached": kept.budget_reached, "cpu_s": round(kept.cpu_s, 3),
                                          "folder": str(kept.folder)}  # fmt: skip
            # Written however the loop ended (a device error propagates after its stop line).
            if summary_path is not None:
                write_json_atomic(summary_path, result_json(run, loop.summary, journal_path, summary_path.parent))
    return summary


def learned_profile(profile: GameProfile, player: Player[Any, Any]) -> tuple[GameProfile, list[str]]:
    """The profile with what the player learned by watching: the rules it saw."""
    if not isinstance(player, Learns):
        return profile, []
    learned = player.learned()
    rules = {**profile.rules, **learned.rules}
    if rules == profile.rules:
        return profile, list(learned.evidence)
    return replace(profile, rules=rules), list(learned.evidence)


def save_learned(run: Run, loop: PlayLoop[Any, Any]) -> dict[str, object] | None:
    """Keep what the run learned (the rules, a new board, new looks) in the phone's profile;
    what for the journal (None: nothing learned). Atomic; a profile that cannot be written
    is said so in the journal, and the run goes on to its stop."""
    profile, evidence = learned_profile(loop.profile, loop.player)
    if profile == run.match.profile and not loop.profile_changed:
        return None
    w, h = run.size
    fields: dict[str, object] = {"rules": dict(profile.rules), "evidence": evidence, "classes": profile.class_labels,
                                 "rows": profile.rows, "cols": profile.cols}  # fmt: skip
    try:
        saved = write_game_profile(run.device.model, w, h, profile, run.match.path.parent)
        fields["profile"] = str(saved.path)
        if saved.kept is not None:  # made unreadable while the run played: kept, and said
            fields["kept_unreadable"] = str(saved.kept)
    except (AgentError, OSError) as exc:
        fields["not_saved"] = str(exc)
    return fields


def result_json(run: Run, summary: PlaySummary, journal_path: Path, beside: Path | None = None) -> dict[str, object]:
    """The run's result as JSON. `beside`: the folder the result is written to; paths in it
    are then written relative to it, so a run folder moved or sent elsewhere still holds."""

    def where(path: Path | str) -> str:
        if beside is not None:
            try:
                return Path(path).resolve().relative_to(beside.resolve()).as_posix()
            except ValueError:
                pass
        return str(path)

    out: dict[str, object] = {**summary.as_dict(), "journal": where(journal_path), "serial": run.device.serial}
    rec = out.get("recording")
    if isinstance(rec, dict) and "folder" in rec:
        out["recording"] = {**rec, "folder": where(rec["folder"])}
    truth = run.truth()
    if truth is not None:
        out["sim"] = truth
    return out
