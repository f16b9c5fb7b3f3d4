"""`agent calibrate`, `agent read` and `agent bench vision`: vision from the command line.

calibrate: one screenshot (of a phone, the simulated phone or a file) -> a device profile
and an overlay PNG showing what was found. read: one screenshot file + a profile -> the
board. With --json both print one object: rows, cols, board_bbox [x0, y0, x1, y1] (x1, y1
exclusive), cells (rows of labels, "." empty) and confidence (rows of floats).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np
import typer
from rich.table import Table

from agent.cli.app import (
    DEFAULT_PROFILES, DEFAULT_RUNS, check_choice, console, err_console, output_dir, output_file, parse_size_option, print_error, say,
    seed_option,
)
from agent.errors import AgentError, ProfileError, ReadError

if TYPE_CHECKING:  # (the vision modules load OpenCV: only when a command needs them)
    from agent.vision.roles import ClassInfo

def _games() -> tuple[str, ...]:
    """Games read off a screen: the ones a profile can be calibrated for."""
    from agent.games.registry import playable

    return playable()


def _capture(serial: Optional[str], sim: bool, images: list[Path], seed: int, size: str, model: Optional[str],
             game: str, frames: int, every: float, scene: Optional[str] = None):  # fmt: skip
    """(frames, model, density, where, package): the screenshots to calibrate on, what they
    came from, and the app that was in front (None for saved images)."""
    chosen = [name for name, on in (("--serial", serial is not None), ("--sim", sim), ("--image", bool(images))) if on]
    if len(chosen) > 1:
        raise typer.BadParameter(f"use one of --serial, --sim or --image, not {' and '.join(chosen)}", param_hint=chosen[1])
    if images:
        from agent.vision.images import read_image

        if frames != 1:
            raise typer.BadParameter("--frames is for a phone; give each saved frame its own --image", param_hint="--frames")
        shots = [read_image(p) for p in images]
        where = str(images[0]) if len(images) == 1 else f"{len(images)} images ({images[0]}, ...)"
        return shots, model or images[0].stem, None, where, None
    if model is not None:
        raise typer.BadParameter("--model names the device of an --image; phones report their own", param_hint="--model")
    if sim:
        from agent.cli.app import chosen_game
        from agent.device.clock import ManualClock

        chosen, settings = chosen_game(game, {"scene": scene} if scene else {}, sim=True)
        phone = chosen.sim.phone(settings, seed, parse_size_option(size), ManualClock(), None)
        return ([phone.screencap() for _ in range(frames)], phone.model, None,
                f"the simulated {game} phone ({size}, seed {seed})", phone.foreground())  # fmt: skip
    from agent.device.adb import AdbDevice, select_serial

    from agent.device.clock import RealClock
    from agent.games.registry import role_hints
    from agent.vision.frames import calibrate_frames
    from agent.vision.ocr import default_ocr
    from agent.play.journal import new_run_dir
    from agent.vision.way_in import WayInError, keep_seen, reach_board, settled

    device = AdbDevice(select_serial(serial))
    clock = RealClock()
    hints = role_hints(game)
    # A game may open on a map or a card, and its sky may never rest: the board is reached
    # by its safe buttons first, and is still when the board is, whatever moves around it.
    try:
        way = reach_board(device, clock, device.serial,
                          lambda f: calibrate_frames([f], game, hints=hints).profile.board_bbox, game, default_ocr(),
                          say=lambda text: say(text, err=True))  # fmt: skip
    except WayInError as exc:  # the screens that explain it are kept, under the runs folder
        raise keep_seen(exc, new_run_dir(DEFAULT_RUNS)) from exc
    shots = []
    for i in range(frames):
        if i:
            clock.sleep(every)
        shots.append(settled(device.screencap, clock, way.bbox, device.serial))  # never learn a board in motion
    return shots, device.model, device.density, f"{device.model} ({device.serial})", device.foreground()


def _interactive() -> bool:
    return sys.stdin.isatty()


def _confirm_overwrite(path: Path, game: str, yes: bool, as_json: bool) -> None:
    """Ask before replacing this game's profile (or an unreadable file) at `path`. An
    unreadable file is never parsed to be replaced: --yes (or a yes) writes over it."""
    from agent.vision.profile import load_profile

    if path.is_dir():
        # never replaced, not even with --yes: a folder may hold anything
        raise ProfileError(f"{path} is a folder where this phone's profile file goes",
                           hint="move or rename the folder, then calibrate again")  # fmt: skip
    if yes or not path.exists():
        return
    try:
        has_game = game in load_profile(path).games
        what = f"{path} already has a {game} profile"
    except ProfileError as exc:
        has_game, what = True, f"{exc}: the file is unreadable"
    if not has_game:
        return  # adding a game to a phone's file keeps the others: nothing is lost
    if as_json or not _interactive():
        raise AgentError(f"{what}; not overwriting it without confirmation", hint="add --yes to replace it")
    if not typer.confirm(f"{what}. Replace it?", default=False, err=True):
        raise typer.Exit(1)


def calibrate(
    serial: Optional[str] = typer.Option(None, "--serial", "-s", help="Calibrate on this phone (default: the only phone attached)."),
    sim: bool = typer.Option(False, "--sim", help="Calibrate on the simulated phone."),
    images: Optional[list[Path]] = typer.Option(None, "--image", help="Calibrate on a saved screenshot (PNG, JPEG, BMP, WebP); repeat it for several frames of one board."),
    game: str = typer.Option("match3", "--game", help="The game on screen (the profile's section)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder the profile (and overlay) go to."),
    overlay: Optional[Path] = typer.Option(None, "--overlay", help="Where to save the overlay PNG (default: beside the profile)."),
    model: Optional[str] = typer.Option(None, "--model", help="--image only: the device name for the profile file (default: the image's name)."),
    seed: int = seed_option("--sim only: the game's seed."),
    size: str = typer.Option("1080x2400", "--size", help="--sim only: screen WxH."),
    as_json: bool = typer.Option(False, "--json", help="Print what was read as one JSON object."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Replace an existing profile for this game without asking."),
    frames: int = typer.Option(1, "--frames", min=1, max=20, help="Learn from this many still frames of the phone's board (a rare look gets more cells)."),
    every: float = typer.Option(2.0, "--every", min=0.0, max=60.0, help="--frames: seconds between frames."),
    scene: Optional[str] = typer.Option(None, "--scene", help="--sim only (match3): plain or saga, as `agent play --sim --scene`."),
) -> None:
    """Find the board on a screenshot (or several of one board), learn its tiles and
    what each is (tile, special, blocker...), and write a device profile."""
    from agent.games.registry import role_hints
    from agent.vision.calibrate import LOW_CONFIDENCE, class_infos, reading_json
    from agent.vision.frames import calibrate_frames
    from agent.files import save_png
    from agent.vision.overlay import draw_overlay
    from agent.vision.profile import DeviceProfile, keep_unreadable, load_profile, profile_filename, save_profile

    check_choice("--game", game, _games())
    output_dir(profiles, "--profiles")
    output_file(overlay, "--overlay", ".png")
    if scene is not None and not sim:
        raise typer.BadParameter("--scene shapes the simulated phone: it goes with --sim", param_hint="--scene")
    shots, dev_model, density, where, package = _capture(serial, sim, images or [], seed, size, model, game, frames,
                                                         every, scene)  # fmt: skip
    frame = shots[0]
    h, w = frame.shape[:2]
    path = profiles / profile_filename(dev_model, w, h)
    _confirm_overwrite(path, game, yes, as_json)
    hints = role_hints(game)
    if as_json:
        cal = calibrate_frames(shots, game, hints=hints)
    else:
        with console.status(f"calibrating {game} on {where}..."):
            cal = calibrate_frames(shots, game, hints=hints)

    try:
        device = load_profile(path) if path.exists() else None
    except ProfileError:
        device = None  # confirmed above: replace the broken file, kept beside it
        keep_unreadable(path)
    if device is None or (device.width, device.height) != (w, h):
        device = DeviceProfile(dev_model, w, h, density, {})
    from agent.vision.screen_facts import with_screen_facts

    learned = with_screen_facts(cal.profile, frame, package)
    saved = save_profile(device.with_game(learned), path)
    b = cal.board
    title = f"{game}: {b.rows}x{b.cols} board at {list(b.bbox)}, {len(cal.clustering.classes)} classes"
    legend = class_infos(cal.profile, cal.reading.labels)
    picture = draw_overlay(frame, b.bbox, cal.reading.labels, cal.reading.confidence, LOW_CONFIDENCE, title,
                           legend=[(c.letter, c.name or c.role, c.colour) for c in legend])  # fmt: skip
    overlay_path = save_png(picture, overlay or path.with_name(f"{path.stem}.{game}.png"))

    if as_json:
        out = reading_json(cal.reading, b.bbox, cal.profile)
        out["frames"] = len(shots)
        out["unsettled"] = [{"row": r, "col": c, "reason": why} for (r, c), why in sorted(cal.unsettled.items())]
        print(json.dumps(out))
        err_console.print(f"wrote {saved} and {overlay_path}", highlight=False)
        return
    t = Table(title=f"calibrated {game} on {where}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("board", f"{b.rows} rows x {b.cols} cols at {list(b.bbox)} (cell {b.pitch[0]:.1f} x {b.pitch[1]:.1f} px)")
    counts = ", ".join(f"{k} {v}" for k, v in cal.counts.items())
    t.add_row("classes", f"{len(cal.clustering.classes)}: {counts}")
    if cal.unsettled:
        named = ", ".join(f"({r}, {c}) {why}" for (r, c), why in sorted(cal.unsettled.items()))
        t.add_row("unsettled", f"{len(cal.unsettled)} cells moving or covered, not learned from: {named}")
    low = cal.low_confidence
    t.add_row("confidence", f"lowest {cal.reading.min_confidence:.2f}; " + (f"{len(low)} cells below {LOW_CONFIDENCE}: {low}" if low else "every cell clear"))
    t.add_row("time", f"{cal.seconds:.2f} s")
    t.add_row("profile", str(saved))
    t.add_row("overlay", f"{overlay_path} (check it: grid lines on the cells, letters on the tiles)")
    console.print(t)
    console.print(_legend_table(legend))
    console.print(cal.reading.text, highlight=False)
    console.print("kinds (a tile and its specials one letter; # blocker, . no tile, ? unknown):", highlight=False)
    console.print("\n".join("".join(row) for row in cal.profile.kind_grid(cal.reading.labels)), highlight=False)


def _legend_table(legend: list[ClassInfo]) -> Table:
    """Letter, role, kind, name, colour and cells of every class; roles and names can be
    edited in the profile (see agent.vision.profile)."""
    t = Table(title="classes (a role or name can be edited in the profile)", title_justify="left")
    for col in ("class", "role", "kind", "name", "colour", "cells"):
        t.add_column(col, justify="right" if col == "cells" else "left")
    for c in legend:
        t.add_row(c.letter, c.role, c.kind, c.name, c.colour, str(c.cells))
    return t


def _profile_for(image_size: tuple[int, int], profile: Optional[Path], game: Optional[str], profiles: Path):
    """(GameProfile, description, notes) for reading an image of this size; the notes say
    which unreadable profiles the lookup skipped."""
    from agent.vision.profile import find_profile, load_profile

    w, h = image_size
    if profile is None:
        chosen = game or "match3"
        check_choice("--game", chosen, _games())
        match = find_profile("image", w, h, chosen, [profiles])
        return match.profile, match.describe(), match.notes()
    device = load_profile(profile)
    if game is None:
        if len(device.games) != 1:
            names = ", ".join(sorted(device.games)) or "none"
            raise typer.BadParameter(f"{profile} holds several games ({names}): pick one", param_hint="--game")
        game = next(iter(device.games))
    if game not in device.games:
        raise ProfileError(f"{profile} has no game {game!r} (it has: {', '.join(sorted(device.games)) or 'none'})")
    gp = device.games[game]
    if (device.width, device.height) == (w, h):
        return gp, str(profile), []
    from agent.vision.profile import ASPECT_TOLERANCE

    if abs(device.width / device.height - w / h) > ASPECT_TOLERANCE * (w / h):
        raise ProfileError(
            f"{profile} was made for a {device.width}x{device.height} screen and the image is {w}x{h} (another shape)",
            hint=f"calibrate on this screen: agent calibrate --image IMAGE --game {game}",
        )
    return gp.scaled_to(w, h), f"{profile} (scaled from {device.width}x{device.height})", []


def read(
    image: Path = typer.Option(..., "--image", help="The screenshot to read."),
    profile: Optional[Path] = typer.Option(None, "--profile", help="The profile to read it with (default: looked up by resolution)."),
    game: Optional[str] = typer.Option(None, "--game", help="The game in the profile (default: its only one, or match3)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help="Folder to look profiles up in (without --profile)."),
    overlay: Optional[Path] = typer.Option(None, "--overlay", help="Also save a picture of the reading as this PNG."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Read the board on one saved screenshot with a device profile (exit 4 if cells are unknown)."""
    from agent.vision.calibrate import LOW_CONFIDENCE, reading_json
    from agent.vision.images import read_image

    output_file(overlay, "--overlay", ".png")
    frame = read_image(image)
    h, w = frame.shape[:2]
    gp, described, notes = _profile_for((w, h), profile, game, profiles)
    for note in notes:
        say(note, err=as_json)
    x0, y0, x1, y1 = gp.board_bbox
    if x1 > w or y1 > h:
        raise ProfileError(f"the profile's board {list(gp.board_bbox)} does not fit the {w}x{h} image")
    reading = gp.read(frame)
    if overlay is not None:
        from agent.files import save_png
        from agent.vision.overlay import draw_overlay

        save_png(draw_overlay(frame, gp.board_bbox, reading.labels, reading.confidence, LOW_CONFIDENCE), overlay)
    swapped_better = reading.unknown_count > 0 and gp.read(np.ascontiguousarray(frame[..., ::-1])).unknown_count < reading.unknown_count
    if as_json:
        print(json.dumps(reading_json(reading, gp.board_bbox, gp)))
        if swapped_better:
            err_console.print("note: the image reads better with red and blue swapped: was it saved as RGB?")
        _exit_if_unread(reading.unknown_count)
        return
    console.print(f"profile: {described}", highlight=False)
    console.print(reading.text, highlight=False)
    if any(gp.kind_of(v) != v for row in reading.labels for v in row):
        console.print("kinds (a tile and its specials one letter; # blocker, . no tile, ? unknown):", highlight=False)
        console.print("\n".join("".join(row) for row in gp.kind_grid(reading.labels)), highlight=False)
    unknown = reading.unknown_cells()
    console.print(
        f"{reading.rows}x{reading.cols} at {list(gp.board_bbox)}; lowest confidence {reading.min_confidence:.2f}; "
        + (f"{len(unknown)} unknown cells (?): {unknown}" if unknown else "no unknown cells"),
        highlight=False,
    )
    if swapped_better:
        console.print("note: the image reads better with red and blue swapped: was it saved as RGB instead of BGR/PNG order?")
    if overlay is not None:
        console.print(f"overlay: {overlay}", highlight=False)
    _exit_if_unread(reading.unknown_count)


def _exit_if_unread(unknown: int) -> None:
    """Exit 4 (as a board the agent would not act on) when some cells could not be read."""
    if unknown:
        print_error(ReadError(f"{unknown} cells could not be read (shown as ?)",
                              hint="check the profile is for this game and screen, or recalibrate with `agent calibrate`"))
        raise typer.Exit(ReadError.exit_code)
