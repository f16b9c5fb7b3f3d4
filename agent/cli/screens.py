"""`agent screens add|list|check`: screens a person teaches once (a dialog the agent
cannot dismiss by itself), stored in the device profile and matched by a perceptual hash."""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer

from agent.cli.app import DEFAULT_PROFILES, say
from agent.errors import ProfileError
from agent.vision.profile import DeviceProfile

app = typer.Typer(no_args_is_help=True, help="Screens taught by hand: what to tap (or Back) on a screen the agent cannot dismiss.")

PROFILES_HELP = "The folder of device profiles."
MODEL_HELP = "The device model whose profile gets the screen (needed when several profiles have the image's size)."


def _parse_tap(value: str, width: int, height: int) -> tuple[int, int]:
    parts = value.split(",")
    try:
        x, y = (int(p.strip()) for p in parts)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not X,Y (two whole pixel numbers, such as 540,1800)",
                                 param_hint="--tap") from None  # fmt: skip
    if not (0 <= x < width and 0 <= y < height):
        raise typer.BadParameter(f"{x},{y} is outside the {width}x{height} image", param_hint="--tap")
    return x, y


def _device_for(size: tuple[int, int], game: str, profiles: Path, model: str | None) -> tuple[Path, DeviceProfile]:
    """(path, DeviceProfile) of the profile in `profiles` the image fits: its size, the
    game, and the model if given (or the only one). Otherwise a ProfileError naming the
    choices."""
    from agent.vision.profile import slugify

    w, h = size
    if not profiles.is_dir():
        raise ProfileError(f"{profiles}: no such folder of profiles",
                           hint="give the folder with --profiles, or run `agent calibrate` first")  # fmt: skip
    fits = [(p, dev) for p, dev in _readable_profiles(profiles) if (dev.width, dev.height) == (w, h) and game in dev.games]
    if model is not None:
        chosen = [(p, d) for p, d in fits if slugify(d.model) == slugify(model)]
        if not chosen:
            names = ", ".join(sorted(d.model for _, d in fits)) or "none"
            raise ProfileError(f"no {w}x{h} profile of {model!r} with game {game!r} in {profiles} (there are: {names})",
                               hint=f"pick one of those with --model, or calibrate {model} with `agent calibrate`")  # fmt: skip
        fits = chosen
    if not fits:
        raise ProfileError(f"no profile of a {w}x{h} screen with game {game!r} in {profiles}",
                           hint=f"calibrate that phone first (`agent calibrate --game {game}`), or give --profiles")  # fmt: skip
    if len(fits) > 1:
        names = ", ".join(f"{d.model} ({p.name})" for p, d in fits)
        raise ProfileError(f"several {w}x{h} profiles with game {game!r}: {names}",
                           hint="pick one with --model MODEL")  # fmt: skip
    return fits[0]


@app.command("add")
def add(
    image: Path = typer.Option(..., "--image", help="A screenshot of the screen to teach."),
    name: str = typer.Option(..., "--name", help="A name for the screen (teaching a name again replaces it)."),
    tap: Optional[str] = typer.Option(None, "--tap", help="X,Y: where to tap on it, in the image's pixels."),
    back: bool = typer.Option(False, "--back", help="Press Back on it instead of tapping."),
    game: str = typer.Option("match3", "--game", help="The game whose profile gets the screen."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help=PROFILES_HELP),
    model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP),
) -> None:
    """Teach a screen: on a frame that looks like IMAGE, tap X,Y (or press Back)."""
    from agent.files import folder_locked
    from agent.vision.images import read_image
    from agent.vision.profile import save_profile
    from agent.vision.screens import teach_screen

    if (tap is None) == (not back):
        raise typer.BadParameter("give --tap X,Y or --back (one of them)", param_hint="--tap")
    name = name.strip()
    if not name or len(name) > 80 or not name.isprintable():
        raise typer.BadParameter("a printable name of 1 to 80 characters", param_hint="--name")
    frame = read_image(image)
    h, w = frame.shape[:2]
    point = None if tap is None else _parse_tap(tap, w, h)
    screen = teach_screen(frame, name, point)
    try:
        # read, changed and written under the folder's lock: several taught at once are all kept
        with folder_locked(profiles) if profiles.is_dir() else nullcontext():
            path, dev = _device_for((w, h), game, profiles, model)
            gp = dev.games[game]
            kept = tuple(s for s in gp.screens if s.name != name)
            saved = save_profile(dev.with_game(replace(gp, screens=kept + (screen,))), path)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot write the profile: {exc.strerror or exc}",
                           hint="check the folder's permissions and free space, then try again") from None  # fmt: skip
    what = "press Back" if back else f"tap {point[0]},{point[1]}" if point else ""
    part = "the whole screen" if screen.box is None else "the dialog at " + ", ".join(f"{v:.3f}" for v in screen.box)
    say(f"{'replaced' if len(kept) < len(gp.screens) else 'taught'} screen {name!r} ({what}; matched by {part}) in {saved}")


@app.command("remove")
def remove(
    name: str = typer.Argument(..., help="The name the screen was taught with (`agent screens list`)."),
    game: Optional[str] = typer.Option(None, "--game", help="Only this game's profiles (default: any)."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help=PROFILES_HELP),
    model: Optional[str] = typer.Option(None, "--model", help="Only this phone's profile (default: any)."),
) -> None:
    """Forget a taught screen (also one whose entry in the profile is broken)."""
    from agent.vision.profile import remove_taught_screen

    try:
        removed = remove_taught_screen(profiles, name, game, model)
    except OSError as exc:
        raise ProfileError(f"{profiles}: cannot write the profile: {exc.strerror or exc}",
                           hint="check the folder's permissions and free space, then try again") from None  # fmt: skip
    if not removed:
        raise ProfileError(f"no taught screen named {name!r} in {profiles}" + (f" for game {game!r}" if game else ""),
                           hint="see the names with `agent screens list`")  # fmt: skip
    for path, g in removed:
        say(f"removed screen {name!r} of {g} from {path}")


@app.command("list")
def list_(
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help=PROFILES_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The taught screens of every profile in the folder."""

    if not profiles.is_dir():
        raise ProfileError(f"{profiles}: no such folder of profiles", hint="give the folder with --profiles")
    rows = []
    for p, dev in _readable_profiles(profiles):
        for g in dev.games.values():
            for s in g.screens:
                rows.append({"profile": str(p), "game": g.game, "name": s.name, "action": s.action,
                             "tap": None if s.tap is None else list(s.tap), "size": list(s.size)})  # fmt: skip
    if as_json:
        say(json.dumps(rows))
        return
    if not rows:
        say(f"no taught screens in {profiles}")
    for r in rows:
        act = "back" if r["action"] == "back" else f"tap {r['tap'][0]},{r['tap'][1]}"  # type: ignore[index]
        say(f"{r['profile']}  {r['game']}  {r['name']}: {act} (taught on {r['size'][0]}x{r['size'][1]})")  # type: ignore[index]


@app.command("check")
def check(
    image: Path = typer.Option(..., "--image", help="A screenshot."),
    game: str = typer.Option("match3", "--game", help="The game."),
    profiles: Path = typer.Option(DEFAULT_PROFILES, "--profiles", help=PROFILES_HELP),
    model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP),
    board_readable: bool = typer.Option(False, "--board-readable", help="Take the board as read (as the loop would say)."),
    foreground: Optional[str] = typer.Option(None, "--foreground", help="The package in front (as the phone would say)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What the agent makes of a screenshot: the kind of screen, the action, the words seen, the buttons refused."""
    from agent.vision.images import read_image
    from agent.vision.ocr import default_ocr, ocr_unavailable_reason
    from agent.vision.screens import classify_screen

    from agent.vision.profile import find_profile

    frame = read_image(image)
    h, w = frame.shape[:2]
    # any profile that fits the image: this size, or scaled from the same aspect ratio
    match = find_profile(model or image.stem, w, h, game, [profiles])
    for note in match.notes():
        say(note, err=True)
    ocr = default_ocr()
    if ocr is None:
        say(f"note: {ocr_unavailable_reason()}", err=True)
    v = classify_screen(frame, match.profile, board_readable=board_readable, foreground=foreground, ocr=ocr)
    a = v.action
    if as_json:
        say(json.dumps({
            "kind": v.kind, "reason": v.reason, "taught": v.taught, "refused": list(v.refused),
            "action": None if a is None else {"kind": a.kind, "point": None if a.point is None else list(a.point),
                                              "label": a.label, "why": a.why},
            "words": [{"text": wd.text, "box": list(wd.box), "conf": round(wd.conf, 2)} for wd in v.words],
            "buttons": [{"text": b.text, "box": list(b.box), "verdict": b.verdict, "why": b.why} for b in v.buttons],
            "ranked": [{"kind": r.kind, "point": None if r.point is None else list(r.point), "label": r.label}
                       for r in v.ranked],
            "panel": None if v.panel is None else list(v.panel), "outcome": v.outcome, "level": v.level,
            "countdown": v.countdown, "blocked": v.blocked,
        }))  # fmt: skip
        return
    say(f"screen: {v.kind}" + (f" (taught: {v.taught})" if v.taught else ""))
    say(f"reason: {v.reason}")
    if a is None:
        say("action: none")
    else:
        where = f" at {a.point[0]},{a.point[1]}" if a.point else ""
        say(f"action: {a.kind}{where} ({a.label}): {a.why}")
    for what, value in (("level", v.level), ("outcome", v.outcome), ("countdown", v.countdown),
                        ("only forbidden ways on", v.blocked)):  # fmt: skip
        if value is not None:
            say(f"{what}: {value}")
    for b in v.buttons:
        say(f"button {b.verdict:9} {b.text!r} at {','.join(str(c) for c in b.box)}: {b.why}")
    say("words: " + (" ".join(wd.text for wd in v.words) or "none"))
    say("refused: " + ("; ".join(v.refused) or "none"))


def _readable_profiles(profiles: Path) -> list[tuple[Path, DeviceProfile]]:
    """(path, device profile) of every profile in the folder; an unreadable one is a note."""
    from agent.vision.profile import load_profile

    out = []
    for p in sorted(profiles.glob("*.toml")):
        try:
            out.append((p, load_profile(p)))
        except ProfileError as exc:
            say(f"note: skipped an unreadable profile: {exc}", err=True)
    return out
