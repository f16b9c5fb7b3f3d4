"""Device profiles: where a game's board is on one phone and what its tiles look like.

One TOML file per phone and resolution in `device_profiles/`, named by
`profile_filename()` (e.g. `pixel-7_1080x2400.toml`), holding any number of games:

    [device]
    model = "Pixel 7"
    width = 1080
    height = 2400
    density = 420                       # optional

    [games.match3]
    rows = 8
    cols = 8
    board_bbox = [40, 700, 1040, 1700]  # pixels, x1/y1 exclusive
    board_frac = [0.037, 0.2917, ...]   # the same as screen fractions (optional, derived)
    source = "calibrated"               # optional: who made it ("calibrated", "sim-layout")
    package = "com.example.game"        # optional: the game's Android package (launch, foreground check)
    feature_version = 2
    swipe_ms = 200
    min_confidence = 0.5
    max_distance = 9.5                  # optional: one bound for all labels (default: per label, from the exemplars)
    inset = 0.15                        # feature settings the exemplars were made with
    patch = 6

    [games.match3.settle]               # optional, defaults as SettleSettings
    poll_ms = 40
    threshold = 4.0
    still_frames = 2
    timeout_s = 5.0

    [games.match3.hud]                  # optional named screen regions, as fractions
    steps = [0.1, 0.05, 0.3, 0.1]

    [games.match3.rules]                # optional: rules learned by watching
    variant = "classic"

    [[games.match3.screens]]            # optional, one per screen taught with `agent screens add`
    name = "offer"
    phash = "c3d4..."                   # agent.vision.screens.screen_hash of the frame
    size = [1080, 2400]                 # the frame's width and height
    action = "tap"                      # "tap" (at tap) or "back"
    tap = [980, 700]
    box = [0.1, 0.3, 0.9, 0.65]         # optional: the part hashed (the dialog), as fractions

    [games.match3.classes.B]            # optional, one per class: what it is to the game
    role = "special"                    # tile, special, colourless, blocker, hole or layer (default tile)
    kind = "A"                          # its colour kind's letter ("." for none); default: the class itself
    name = "red special"                # for people: legends, reports

    [[games.match3.exemplars]]          # one per exemplar
    label = "A"
    features = [52.1234, ...]

Loading is strict: unknown keys, wrong types, out-of-range values and exemplars from
another feature version are refused with a ProfileError naming the file and the key,
because a silently half-read profile would misread boards and make wrong moves.
Saving runs the same validation on the text about to be written, so whatever
`save_profile` writes, `load_profile` reads back equal.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Literal, Protocol, Sequence, cast

import numpy as np
import tomli_w

from agent.files import InputProblem, read_capped, write_atomic
from agent.errors import ProfileError
from agent.vision.classify import EMPTY_LABEL, Exemplar, Reading, UNKNOWN_LABEL, classify
from agent.vision.roles import ROLES, kind_for
from agent.vision.features import DEFAULT_INSET, DEFAULT_PATCH, FEATURE_VERSION, cell_features, feature_length
from agent.vision.grid import BBox, Frac, bbox_to_frac, frac_to_bbox
from agent.vision.settle import SettleSettings

PROFILE_DIR = Path(__file__).resolve().parents[2] / "device_profiles"
GRID_MIN, GRID_MAX = 3, 12
# Screens whose width/height ratios differ by at most this (relative) share a layout
# closely enough that a board found as screen fractions on one is usable on the other.
ASPECT_TOLERANCE = 0.01
# board_frac may disagree with board_bbox by this many pixels (rounding of hand edits).
_FRAC_SLACK_PX = 2
# Features are Lab values and gradients, well inside +-1000; the bound keeps a hand-edited
# value from overflowing the float32 exemplars (1e39 is a finite float64 but inf in float32)
# or their squared distances.
FEATURE_LIMIT = 1e6
# A profile of several games is some hundred KB; anything much bigger is not a profile,
# and is refused before it is read into memory.
MAX_PROFILE_BYTES = 16 * 1024 * 1024

EXACT, SAME_RESOLUTION, SCALED = "exact", "same-resolution", "scaled"


def slugify(model: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "device"


def profile_filename(model: str, width: int, height: int) -> str:
    return f"{slugify(model)}_{int(width)}x{int(height)}.toml"


SCREEN_ACTIONS = ("tap", "back")


@dataclass(frozen=True)
class TaughtScreen:
    """A screen a person taught once (`agent screens add`): what it looks like (a
    perceptual hash of the frame, agent.vision.screens.screen_hash, and the frame's size)
    and what to do on it: tap a point (frame pixels) or press Back."""

    name: str
    phash: str
    size: tuple[int, int]  # (width, height) of the frame it was taught on
    action: Literal["tap", "back"]
    tap: tuple[int, int] | None = None
    # the part of the frame hashed, as fractions (the dialog: what stays the same while
    # the board under it changes); None: the whole frame
    box: Frac | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "size", (int(self.size[0]), int(self.size[1])))
        if self.box is not None:
            set_(self, "box", tuple(float(v) for v in self.box))
        if self.tap is not None:
            set_(self, "tap", (int(self.tap[0]), int(self.tap[1])))
        if self.action not in SCREEN_ACTIONS:
            raise ValueError(f"a taught screen's action is tap or back, not {self.action!r}")
        if (self.action == "tap") != (self.tap is not None):
            raise ValueError("a taught screen taps a point (action tap, with tap) or presses Back (no tap)")

    def scaled_tap(self, width: int, height: int) -> tuple[int, int] | None:
        """The tap point on a width x height frame (the screen taught at another size)."""
        if self.tap is None:
            return None
        return (
            min(width - 1, round(self.tap[0] * width / self.size[0])),
            min(height - 1, round(self.tap[1] * height / self.size[1])),
        )


@dataclass(frozen=True)
class GameProfile:
    """One game on one screen: where the board is, how to read it and how to play it.

    `inset` and `patch` are the cell_features() settings the exemplars were made with;
    reading with others would compare vectors of different meaning.
    """

    game: str
    rows: int
    cols: int
    board_bbox: BBox
    board_frac: Frac
    exemplars: list[Exemplar]
    feature_version: int = FEATURE_VERSION
    swipe_ms: int = 200
    settle: SettleSettings = field(default_factory=SettleSettings)
    min_confidence: float = 0.5
    max_distance: float | None = None
    hud: dict[str, Frac] = field(default_factory=dict)
    inset: float = DEFAULT_INSET
    patch: int = DEFAULT_PATCH
    source: str | None = None  # who made it: "calibrated", "sim-layout", or None (by hand)
    # class label -> colour kind (agent.vision.kinds); a class not in it is its own kind
    kinds: dict[str, str] = field(default_factory=dict)
    # class label -> role (agent.vision.roles.ROLES); a class not in it is a tile
    roles: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # class label -> a name for people
    package: str | None = None  # the game's Android package, to launch it and check it is in front
    rules: dict[str, str] = field(default_factory=dict)  # rules learned by watching, e.g. {"variant": "classic"}
    screens: tuple[TaughtScreen, ...] = ()  # screens a person taught (`agent screens add`)

    def __post_init__(self) -> None:
        # normalise container and number types so equality survives a TOML round trip
        # (a list bbox, numpy ints or float32 thresholds would otherwise compare unequal)
        set_ = object.__setattr__
        set_(self, "board_bbox", tuple(int(v) for v in self.board_bbox))
        set_(self, "board_frac", tuple(float(v) for v in self.board_frac))
        set_(self, "exemplars", list(self.exemplars))
        set_(self, "hud", {str(k): tuple(float(x) for x in v) for k, v in self.hud.items()})
        if self.max_distance is not None:
            set_(self, "max_distance", float(self.max_distance))
        set_(self, "min_confidence", float(self.min_confidence))
        set_(self, "inset", float(self.inset))
        set_(self, "kinds", {str(k): str(v) for k, v in self.kinds.items()})
        set_(self, "roles", {str(k): str(v) for k, v in self.roles.items() if v != "tile"})
        set_(self, "names", {str(k): str(v) for k, v in self.names.items() if v})
        set_(self, "rules", {str(k): str(v) for k, v in self.rules.items()})
        set_(self, "screens", tuple(self.screens))
        bad = sorted(set(self.roles.values()) - set(ROLES))
        if bad:
            raise ValueError(f"unknown roles {bad}: a class is one of {', '.join(ROLES)}")

    @classmethod
    def from_bbox(
        cls, game: str, rows: int, cols: int, bbox: BBox, width: int, height: int, exemplars: list[Exemplar], **kw: Any
    ) -> "GameProfile":
        """A profile whose board_frac is derived from the pixel bbox on a width x height screen."""
        return cls(game, rows, cols, cast(BBox, tuple(bbox)), bbox_to_frac(bbox, width, height), exemplars, **kw)

    def scaled_to(self, width: int, height: int) -> "GameProfile":
        """This profile on a width x height screen: the bbox recomputed from board_frac.

        Exemplars carry over unchanged: features are computed on cells shrunk to a fixed
        size, so they do not depend on the resolution.
        """
        return replace(self, board_bbox=frac_to_bbox(self.board_frac, width, height))

    def features(self, frame: np.ndarray) -> np.ndarray:
        return cell_features(frame, self.board_bbox, self.rows, self.cols, inset=self.inset, patch=self.patch)

    def read(self, frame: np.ndarray) -> Reading:
        """Classify the board in a full-screen frame with this profile's exemplars and bounds."""
        return classify(
            self.features(frame), self.rows, self.cols, self.exemplars, self.min_confidence, self.max_distance
        )

    def kind_of(self, label: str) -> str:
        """A class label in the colour-kind view: its colour kind's letter, "#" for a
        blocker, "." for a hole or bare layer ("." and "?" are their own)."""
        return kind_for(label, self.roles.get(label), self.kinds.get(label))

    def role_of(self, label: str) -> str:
        return self.roles.get(label, "tile")

    @property
    def class_labels(self) -> list[str]:
        """The tile classes the exemplars hold (every label but ".")."""
        return sorted({e.label for e in self.exemplars} - {EMPTY_LABEL})

    def kind_grid(self, labels: Sequence[Sequence[str]]) -> list[list[str]]:
        return [[self.kind_of(v) for v in row] for row in labels]

    def hud_bbox(self, name: str, width: int, height: int) -> BBox:
        return frac_to_bbox(self.hud[name], width, height)


@dataclass(frozen=True)
class DeviceProfile:
    model: str
    width: int
    height: int
    density: int | None
    games: dict[str, GameProfile] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, gp in self.games.items():
            if gp.game != name:
                raise ValueError(f"games[{name!r}] holds a profile for game {gp.game!r}")
        object.__setattr__(self, "games", dict(self.games))

    @property
    def filename(self) -> str:
        return profile_filename(self.model, self.width, self.height)

    def with_game(self, game: GameProfile) -> "DeviceProfile":
        """A copy with `game` added or replaced (calibrating one game keeps the others)."""
        return replace(self, games={**self.games, game.game: game})


@dataclass(frozen=True)
class ProfileMatch:
    """The profile find_profile chose, where from, and how: EXACT (this model and
    resolution), SAME_RESOLUTION (another model, same pixels) or SCALED (same aspect
    ratio, bbox recomputed from fractions). `skipped` holds why each unreadable profile
    of another phone was passed over, for the user to see (see `notes`)."""

    profile: GameProfile
    path: Path
    how: str
    device: DeviceProfile
    skipped: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """One line per skipped profile, to print beside the run's other notes."""
        return [f"note: skipped an unreadable profile of another phone: {why}" for why in self.skipped]

    def describe(self) -> str:
        if self.how == EXACT:
            return f"{self.path} (exact match)"
        if self.how == SAME_RESOLUTION:
            return f"{self.path} (same resolution, made on {self.device.model})"
        return f"{self.path} (scaled from {self.device.width}x{self.device.height}, {self.device.model})"


# -- validation -------------------------------------------------------------------------

_MISSING = object()


def _finite(value: int | float) -> bool:
    """Finite as a float: tomllib reads integers of any size, which math.isfinite cannot
    convert past 1e308."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _got(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        if len(value) <= 8 and all(isinstance(v, (int, float, str)) for v in value):
            return "[" + ", ".join(_got(v) for v in value) + "]"
        return f"an array of {len(value)} items"
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 40 else f"a {len(text)}-digit number"
    return f"a {type(value).__name__}"


def _key(name: str) -> str:
    """A key as TOML would write it, so error messages can be pasted into a search."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


class _Checker:
    """Reads a parsed TOML document into profiles, raising ProfileError at the first problem."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, what: str) -> ProfileError:
        return ProfileError(f"{self.where}: {key}: {what}")

    def table(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {_got(value)}")
        return value

    def only(self, table: dict[str, Any], key: str, allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for k in table:
            if k not in allowed:
                where = f"{key}.{_key(k)}" if key else _key(k)
                raise self.fail(where, f"unknown key (expected one of: {', '.join(allowed)})")

    def get(self, table: dict[str, Any], prefix: str, name: str, expect: str, default: Any = _MISSING) -> Any:
        if name in table:
            return table[name]
        if default is _MISSING:
            raise self.fail(f"{prefix}.{name}", f"missing, expected {expect}")
        return default

    def integer(self, value: Any, key: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(key, f"expected an integer {lo}..{hi}, got {_got(value)}")
        return value

    def number(self, value: Any, key: str, lo: float, hi: float, *, open_lo: bool = False) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value)
        if ok:
            ok = (lo < value if open_lo else lo <= value) and value <= hi
        if not ok:
            span = f"above {lo:g} and at most {hi:g}" if open_lo else f"{lo:g}..{hi:g}"
            raise self.fail(key, f"expected a number {span}, got {_got(value)}")
        return float(value)

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {_got(value)}")
        return value

    def quad(self, value: Any, key: str, *, ints: bool) -> tuple[Any, Any, Any, Any]:
        kind = "integers" if ints else "numbers"
        if (
            not isinstance(value, list)
            or len(value) != 4
            or any(isinstance(v, bool) or not isinstance(v, int if ints else (int, float)) for v in value)
            or any(not _finite(v) for v in value)
        ):
            raise self.fail(key, f"expected 4 {kind} [x0, y0, x1, y1], got {_got(value)}")
        return cast(tuple[Any, Any, Any, Any], tuple(value))  # checked above: four of them

    def fractions(self, value: Any, key: str) -> Frac:
        f = self.quad(value, key, ints=False)
        if not (0.0 <= f[0] < f[2] <= 1.0 and 0.0 <= f[1] < f[3] <= 1.0):
            raise self.fail(key, f"expected screen fractions 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1, got {list(f)}")
        return cast(Frac, tuple(float(v) for v in f))

    # -- the document -----------------------------------------------------------------
    def document(self, doc: dict[str, Any]) -> DeviceProfile:
        self.only(doc, "", ["device", "games"])
        if "device" not in doc:
            raise self.fail("device", "missing [device] table (model, width, height)")
        dev = self.table(doc["device"], "device")
        self.only(dev, "device", ["model", "width", "height", "density"])
        model = self.string(self.get(dev, "device", "model", "a string"), "device.model")
        width = self.integer(self.get(dev, "device", "width", "an integer"), "device.width", 1, 100_000)
        height = self.integer(self.get(dev, "device", "height", "an integer"), "device.height", 1, 100_000)
        density = dev.get("density")
        if density is not None:
            density = self.integer(density, "device.density", 1, 10_000)
        games_t = self.table(doc.get("games", {}), "games")
        games = {name: self.game(name, g, width, height) for name, g in games_t.items()}
        return DeviceProfile(model=model, width=width, height=height, density=density, games=games)

    def game(self, name: str, value: Any, width: int, height: int) -> GameProfile:
        k = f"games.{_key(name)}"
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise self.fail(k, "a game name is letters, digits, '-' and '_'")
        g = self.table(value, k)
        self.only(g, k, _GAME_KEYS)
        rows = self.integer(self.get(g, k, "rows", "an integer"), f"{k}.rows", GRID_MIN, GRID_MAX)
        cols = self.integer(self.get(g, k, "cols", "an integer"), f"{k}.cols", GRID_MIN, GRID_MAX)

        bbox = self.quad(self.get(g, k, "board_bbox", "[x0, y0, x1, y1] in pixels"), f"{k}.board_bbox", ints=True)
        x0, y0, x1, y1 = bbox
        if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
            raise self.fail(
                f"{k}.board_bbox",
                f"expected 0 <= x0 < x1 <= {width} and 0 <= y0 < y1 <= {height} (the screen), got {list(bbox)}",
            )
        if (x1 - x0) < 4 * cols or (y1 - y0) < 4 * rows:
            raise self.fail(f"{k}.board_bbox", f"{list(bbox)} is too small for {rows}x{cols} cells")
        if "board_frac" in g:
            frac = self.fractions(g["board_frac"], f"{k}.board_frac")
            implied = frac_to_bbox(frac, width, height)
            if max(abs(a - b) for a, b in zip(implied, bbox)) > _FRAC_SLACK_PX:
                raise self.fail(
                    f"{k}.board_frac",
                    f"gives {list(implied)} on the {width}x{height} screen but board_bbox is {list(bbox)}; "
                    "fix one of them or delete board_frac",
                )
        else:
            frac = bbox_to_frac(bbox, width, height)

        version = self.get(g, k, "feature_version", "an integer")
        if isinstance(version, bool) or not isinstance(version, int):
            raise self.fail(f"{k}.feature_version", f"expected an integer, got {_got(version)}")
        if version != FEATURE_VERSION:
            raise self.fail(
                f"{k}.feature_version",
                f"the exemplars were made with feature version {version} but this agent uses "
                f"{FEATURE_VERSION}; recalibrate the game",
            )
        inset = self.number(g.get("inset", DEFAULT_INSET), f"{k}.inset", 0.0, 0.45)
        patch = self.integer(g.get("patch", DEFAULT_PATCH), f"{k}.patch", 1, 16)
        source = g.get("source")
        if source is not None:
            source = self.string(source, f"{k}.source")
        swipe_ms = self.integer(g.get("swipe_ms", 200), f"{k}.swipe_ms", 1, 10_000)
        min_conf = self.number(g.get("min_confidence", 0.5), f"{k}.min_confidence", 0.0, 1.0)
        max_dist = g.get("max_distance")
        if max_dist is not None:
            max_dist = self.number(max_dist, f"{k}.max_distance", 0.0, 1000.0, open_lo=True)

        settle = self.settle(g.get("settle", {}), f"{k}.settle")
        hud_t = self.table(g.get("hud", {}), f"{k}.hud")
        hud = {hk: self.fractions(hv, f"{k}.hud.{_key(hk)}") for hk, hv in hud_t.items()}
        exemplars = self.exemplars(self.get(g, k, "exemplars", f"[[{k}.exemplars]] tables"), k, patch)
        kinds, roles, names = self.classes(g.get("classes", {}), f"{k}.classes", {e.label for e in exemplars})
        package = g.get("package")
        if package is not None:
            package = self.string(package, f"{k}.package")
            if not _PACKAGE.fullmatch(package):
                raise self.fail(f"{k}.package", f"expected an Android package name such as \"com.example.game\", got {_got(package)}")
        rules_t = self.table(g.get("rules", {}), f"{k}.rules")
        rules = {rk: self.string(rv, f"{k}.rules.{_key(rk)}") for rk, rv in rules_t.items()}
        screens = self.screens(g.get("screens", []), f"{k}.screens")
        return GameProfile(
            game=name, rows=rows, cols=cols, board_bbox=bbox, board_frac=frac, exemplars=exemplars,
            feature_version=version, swipe_ms=swipe_ms, settle=settle, min_confidence=min_conf,
            max_distance=max_dist, hud=hud, inset=inset, patch=patch, source=source, kinds=kinds,
            roles=roles, names=names, package=package, rules=rules, screens=screens,
        )  # fmt: skip

    def screens(self, value: Any, key: str) -> tuple[TaughtScreen, ...]:
        """[[games.G.screens]] tables: name, phash, size, action and (for tap) tap."""
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise self.fail(key, f"expected an array of tables [[{key}]], got {_got(value)}")
        out: list[TaughtScreen] = []
        for i, e in enumerate(value):
            try:
                out.append(self._screen(e, f"{key}[{i}]", out))
            except ProfileError as exc:
                name = e.get("name")
                folder = shlex.quote(str(Path(self.where).parent))
                how = (f"remove it (`agent screens remove {shlex.quote(name)} --profiles {folder}`)"
                       if isinstance(name, str) and name.strip() and name.isprintable()
                       else f"delete that [[{key}]] table (entry {i + 1}) from the file")  # fmt: skip
                raise ProfileError(str(exc), hint=f"a taught screen's entry is broken: fix it in the file, or {how} "
                                                  "and teach the screen again with `agent screens add`") from None  # fmt: skip
        return tuple(out)

    def _screen(self, e: dict[str, Any], sk: str, out: list[TaughtScreen]) -> TaughtScreen:
        """One [[games.G.screens]] table; `out`: the entries before it (names are unique)."""
        self.only(e, sk, ["name", "phash", "size", "action", "tap", "box"])
        name = self.string(self.get(e, sk, "name", "a name for the screen"), f"{sk}.name")
        if len(name) > 80 or not name.isprintable():
            raise self.fail(f"{sk}.name", "expected a printable name of at most 80 characters")
        if any(t.name == name for t in out):
            raise self.fail(f"{sk}.name", f"{_got(name)} names two screens; give each its own name")
        phash = self.get(e, sk, "phash", "a hex perceptual hash")
        if not isinstance(phash, str) or not re.fullmatch(r"[0-9a-f]{16,256}", phash):
            raise self.fail(f"{sk}.phash", f"expected 16 or more lowercase hex digits, got {_got(phash)}")
        size = self.get(e, sk, "size", "[width, height]")
        if (not isinstance(size, list) or len(size) != 2
                or any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 100_000 for v in size)):
            raise self.fail(f"{sk}.size", f"expected [width, height] in pixels, got {_got(size)}")  # fmt: skip
        action = self.get(e, sk, "action", '"tap" or "back"')
        if action not in SCREEN_ACTIONS:
            raise self.fail(f"{sk}.action", f'expected "tap" or "back", got {_got(action)}')
        tap = e.get("tap")
        if action == "tap":
            if tap is None:
                raise self.fail(f"{sk}.tap", "missing, expected [x, y] in pixels (the action is tap)")
            if (not isinstance(tap, list) or len(tap) != 2
                    or any(isinstance(v, bool) or not isinstance(v, int) for v in tap)
                    or not (0 <= tap[0] < size[0] and 0 <= tap[1] < size[1])):
                raise self.fail(f"{sk}.tap", f"expected [x, y] inside the {size[0]}x{size[1]} screen, got {_got(tap)}")  # fmt: skip
        elif tap is not None:
            raise self.fail(f"{sk}.tap", "a screen whose action is back taps nowhere; remove tap")
        box = None if "box" not in e else self.fractions(e["box"], f"{sk}.box")
        return TaughtScreen(name, phash, (size[0], size[1]), action, None if tap is None else (tap[0], tap[1]), box)

    def settle(self, value: Any, k: str) -> SettleSettings:
        t = self.table(value, k)
        self.only(t, k, ["poll_ms", "threshold", "still_frames", "timeout_s"])
        d = SettleSettings()
        return SettleSettings(
            poll_ms=self.integer(t.get("poll_ms", d.poll_ms), f"{k}.poll_ms", 0, 10_000),
            threshold=self.number(t.get("threshold", d.threshold), f"{k}.threshold", 0.0, 255.0, open_lo=True),
            still_frames=self.integer(t.get("still_frames", d.still_frames), f"{k}.still_frames", 1, 100),
            timeout_s=self.number(t.get("timeout_s", d.timeout_s), f"{k}.timeout_s", 0.0, 600.0, open_lo=True),
        )

    def classes(self, value: Any, key: str, labels: set[str]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """[games.G.classes.X] tables: the colour kind, role and name of each class X."""
        t = self.table(value, key)
        kinds: dict[str, str] = {}
        roles: dict[str, str] = {}
        names: dict[str, str] = {}
        for label, entry in t.items():
            ck = f"{key}.{_key(label)}"
            if label not in labels or label == EMPTY_LABEL:
                known = ", ".join(sorted(labels - {EMPTY_LABEL})) or "none"
                raise self.fail(ck, f"no tile class {label!r} among the exemplars (they have: {known})")
            e = self.table(entry, ck)
            self.only(e, ck, ["kind", "role", "name"])
            if not e:
                raise self.fail(ck, "an empty table: give the class a role, kind or name, or remove the table")
            if "kind" in e:
                kind = e["kind"]
                if not isinstance(kind, str) or not (kind in (EMPTY_LABEL, UNKNOWN_LABEL) or re.fullmatch(r"[A-Za-z]+", kind)):
                    raise self.fail(f"{ck}.kind", f'expected letters (a kind such as "A"), "." or "?" (not known yet), got {_got(kind)}')
                kinds[label] = kind
            if "role" in e:
                role = e["role"]
                if role not in ROLES:
                    raise self.fail(f"{ck}.role", f"expected one of {', '.join(ROLES)}, got {_got(role)}")
                roles[label] = role
            if "name" in e:
                name = self.string(e["name"], f"{ck}.name")
                if len(name) > 80 or not name.isprintable():
                    raise self.fail(f"{ck}.name", "expected a printable name of at most 80 characters")
                names[label] = name
        return kinds, roles, names

    def exemplars(self, value: Any, k: str, patch: int) -> list[Exemplar]:
        key = f"{k}.exemplars"
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise self.fail(key, f"expected an array of tables [[{key}]], got {_got(value)}")
        if not value:
            raise self.fail(key, "no exemplars: calibrate the game to learn what its tiles look like")
        n = feature_length(patch)
        out = []
        for i, e in enumerate(value):
            ek = f"{key}[{i}]"
            self.only(e, ek, ["label", "features"])
            label = self.string(self.get(e, ek, "label", "a class name such as \"A\" or \".\""), f"{ek}.label")
            if label == UNKNOWN_LABEL:
                raise self.fail(f"{ek}.label", '"?" means unknown and cannot be an exemplar label')
            feats = self.get(e, ek, "features", f"{n} numbers")
            if not isinstance(feats, list) or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v) for v in feats
            ):
                raise self.fail(f"{ek}.features", f"expected an array of {n} finite numbers, got {_got(feats)}")
            if len(feats) != n:
                raise self.fail(
                    f"{ek}.features", f"expected {n} numbers (feature layout for patch {patch}), got {len(feats)}"
                )
            big = next((j for j, v in enumerate(feats) if abs(v) > FEATURE_LIMIT), None)
            if big is not None:
                raise self.fail(
                    f"{ek}.features", f"value {big} is {_got(feats[big])}; features lie within +-{FEATURE_LIMIT:g}"
                )
            out.append(Exemplar(label, np.array(feats, dtype=np.float64)))
        return out


_GAME_KEYS = [
    "rows", "cols", "board_bbox", "board_frac", "source", "feature_version", "swipe_ms", "min_confidence",
    "max_distance", "inset", "patch", "settle", "hud", "classes", "exemplars", "package", "rules", "screens",
]  # fmt: skip
# Android package names: dot-separated segments of letters, digits and underscores.
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")


# -- files ------------------------------------------------------------------------------


def _to_toml(profile: DeviceProfile) -> dict[str, Any]:
    device: dict[str, Any] = {"model": str(profile.model), "width": int(profile.width), "height": int(profile.height)}
    if profile.density is not None:
        device["density"] = int(profile.density)
    games: dict[str, Any] = {}
    for name, g in profile.games.items():
        t: dict[str, Any] = {
            "rows": int(g.rows),
            "cols": int(g.cols),
            "board_bbox": [int(v) for v in g.board_bbox],
            "board_frac": [float(v) for v in g.board_frac],
        }
        if g.source is not None:
            t["source"] = str(g.source)
        if g.package is not None:
            t["package"] = str(g.package)
        t |= {
            "feature_version": int(g.feature_version),
            "swipe_ms": int(g.swipe_ms),
            "min_confidence": float(g.min_confidence),
        }
        if g.max_distance is not None:
            t["max_distance"] = float(g.max_distance)
        t["inset"] = float(g.inset)
        t["patch"] = int(g.patch)
        s = g.settle
        t["settle"] = {
            "poll_ms": int(s.poll_ms),
            "threshold": float(s.threshold),
            "still_frames": int(s.still_frames),
            "timeout_s": float(s.timeout_s),
        }
        if g.hud:
            t["hud"] = {k: [float(x) for x in v] for k, v in g.hud.items()}
        classes: dict[str, dict[str, str]] = {}
        for label in sorted(set(g.kinds) | set(g.roles) | set(g.names)):
            entry = {}
            if label in g.roles:
                entry["role"] = g.roles[label]
            if label in g.kinds:
                entry["kind"] = g.kinds[label]
            if label in g.names:
                entry["name"] = g.names[label]
            classes[label] = entry
        if classes:
            t["classes"] = classes
        if g.rules:
            t["rules"] = {k: str(v) for k, v in g.rules.items()}
        if g.screens:
            t["screens"] = [
                {"name": sc.name, "phash": sc.phash, "size": [int(v) for v in sc.size], "action": sc.action}
                | ({} if sc.tap is None else {"tap": [int(v) for v in sc.tap]})
                | ({} if sc.box is None else {"box": [float(v) for v in sc.box]})
                for sc in g.screens
            ]
        t["exemplars"] = [
            {"label": e.label, "features": [round(float(v), 4) for v in e.features]} for e in g.exemplars
        ]
        games[name] = t
    return {"device": device, "games": games}


_ARRAY = re.compile(r"^([^\n=\[]+?) = \[\n((?:    [^\n\[\]{}\"]*,\n)+)\]$", re.MULTILINE)


def _compact_arrays(text: str) -> str:
    # tomli_w puts every array element on its own line: 4 lines for a bbox, 114 for an
    # exemplar. Put short number arrays on one line and wrap long ones 12 to a line so
    # profiles stay reviewable. Only arrays of plain numbers match the pattern.
    def wrap(m: re.Match[str]) -> str:
        values = [ln.strip().rstrip(",") for ln in m.group(2).splitlines()]
        one_line = f"{m.group(1)} = [{', '.join(values)}]"
        if len(one_line) <= 100:
            return one_line
        lines = [", ".join(values[i : i + 12]) for i in range(0, len(values), 12)]
        return f"{m.group(1)} = [\n" + "".join(f"    {ln},\n" for ln in lines) + "]"

    return _ARRAY.sub(wrap, text)


_HEADER = (
    "# puzzle-agent device profile, written by `agent calibrate`.\n"
    "# Keys are checked strictly on load; see agent/vision/profile.py for the layout.\n\n"
)


def dumps_profile(profile: DeviceProfile, where: str = "<profile>") -> str:
    """The TOML text of a profile, checked to load back equal (ProfileError otherwise)."""
    text = _HEADER + _compact_arrays(tomli_w.dumps(_to_toml(profile)))
    back = _Checker(where).document(tomllib.loads(text))
    if back != profile:
        raise ProfileError(f"{where}: the profile does not survive a save/load round trip (a bug, please report)")
    return text


def _read_profile_bytes(path: Path) -> bytes:
    """The file's bytes, refusing what is not a profile file before reading it: a folder,
    a pipe or device (reading one could block forever), or a file far too big."""
    try:
        return read_capped(path, MAX_PROFILE_BYTES, regular_only=True)
    except InputProblem as p:
        if p.kind == "missing":
            raise ProfileError(f"{path}: no such profile file") from None
        if p.kind == "folder":
            raise ProfileError(f"{path}: is a folder, not a profile file",
                               hint="move the folder away: profiles are the .toml files in the folder") from None  # fmt: skip
        if p.kind == "special":
            raise ProfileError(f"{path}: not a regular file",
                               hint="profiles are TOML files written by `agent calibrate`") from None  # fmt: skip
        if p.kind == "too big":
            raise ProfileError(
                f"{path}: {p.size or 'over ' + str(MAX_PROFILE_BYTES)} bytes is not a profile (at most {MAX_PROFILE_BYTES // (1024 * 1024)} MiB)",
                hint="profiles are small TOML files written by `agent calibrate`; move this one away",
            ) from None
        raise ProfileError(f"{path}: cannot read the profile: {p.detail}") from None


def load_profile(path: str | os.PathLike[str]) -> DeviceProfile:
    """The profile in the file, or a ProfileError naming the file and what is wrong: any
    file at all gives one or the other."""
    path = Path(path)
    raw = _read_profile_bytes(path)
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{path}: not UTF-8 text (byte {exc.start})", hint="profiles are UTF-8 TOML files") from None
    except tomllib.TOMLDecodeError as exc:
        # the decoder's message ends with "(at line L, column C)"
        raise ProfileError(
            f"{path}: invalid TOML: {exc}", hint="fix the syntax at that line, or delete the file and recalibrate"
        ) from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively; no profile nests
        # more than three deep
        raise ProfileError(
            f"{path}: arrays or tables nested too deeply to be a profile",
            hint="delete the file and recalibrate with `agent calibrate`",
        ) from None
    try:
        return _Checker(str(path)).document(doc)
    except ProfileError:
        raise
    except ValueError as exc:  # a value the profile classes refuse that the checker let through
        raise ProfileError(f"{path}: {exc}") from None


def remove_taught_screen(directory: str | os.PathLike[str], name: str, game: str | None = None,
                         model: str | None = None) -> list[tuple[Path, str]]:  # fmt: skip
    """Remove the taught screen `name` from the profiles in `directory` (of `game` and of
    the phone `model` when given): [(file, game)] it was removed from. A file the entry
    itself made unreadable is read as TOML and checked once the entry is out, so a broken
    entry can be removed; a file broken elsewhere too is a ProfileError naming the rest.
    Read, changed and written under the folder's lock."""
    from agent.files import folder_locked

    folder = Path(directory)
    if not folder.is_dir():
        raise ProfileError(f"{folder}: no such folder of profiles", hint="give the folder with --profiles")
    removed: list[tuple[Path, str]] = []
    with folder_locked(folder):
        for path in sorted(folder.glob("*.toml")):
            try:
                doc = tomllib.loads(_read_profile_bytes(path).decode("utf-8"))
            except (ProfileError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
                continue  # no TOML at all: no entry of it can be named
            dev = doc.get("device")
            if model is not None and not (isinstance(dev, dict) and slugify(str(dev.get("model", ""))) == slugify(model)):
                continue
            games = doc.get("games")
            here: list[str] = []
            for g, table in (games.items() if isinstance(games, dict) else []):
                entries = table.get("screens") if isinstance(table, dict) else None
                if (game is not None and g != game) or not isinstance(entries, list):
                    continue
                left = [e for e in entries if not (isinstance(e, dict) and e.get("name") == name)]
                if len(left) < len(entries):
                    table["screens"] = left
                    here.append(str(g))
            if not here:
                continue
            try:
                device = _Checker(str(path)).document(doc)
            except (ProfileError, ValueError) as exc:
                raise ProfileError(f"{path}: the screen {name!r} was found, but the file is broken elsewhere too: {exc}",
                                   hint="fix the file by hand, or delete it and recalibrate with `agent calibrate`") from None
            save_profile(device, path)
            removed += [(path, g) for g in here]
    return removed


def save_profile(profile: DeviceProfile, path: str | os.PathLike[str]) -> Path:
    """Write atomically: a reader sees the old file or the new one, never half of one.

    `path` may be a directory, then the file is named by profile_filename(); a directory
    of that very name is a ProfileError. Nothing is written if the profile is invalid.
    """
    path = Path(path)
    if path.is_dir() and path.name == profile.filename:
        # a folder in the file's place: writing into it would hide the profile from lookups
        raise ProfileError(f"{path}: is a folder where this phone's profile file goes",
                           hint="move or rename the folder, then try again")  # fmt: skip
    if path.is_dir():
        path = path / profile.filename
    return write_atomic(path, dumps_profile(profile, str(path)).encode("utf-8"))


@dataclass(frozen=True)
class SavedProfile:
    """Where a game's profile was written, and where the unreadable file that was in its
    place was kept (None: there was none), so the user can be told."""

    path: Path
    kept: Path | None = None

    def told(self, how: str) -> str:
        said = f"{self.path} ({how})"
        if self.kept is not None:
            said += f"; the unreadable file that was there is kept as {self.kept}"
        return said


class _Phone(Protocol):
    @property
    def model(self) -> str: ...

    def screen_size(self) -> tuple[int, int]: ...


def write_phone_profile(phone: _Phone, game: GameProfile, directory: str | os.PathLike[str]) -> SavedProfile:
    """`write_game_profile` for the phone's model and screen size."""
    w, h = phone.screen_size()
    return write_game_profile(phone.model, w, h, game, directory)


def save_game_profile(
    model: str, width: int, height: int, game: GameProfile, directory: str | os.PathLike[str]
) -> Path:
    """Write (or refresh) one game's profile: `write_game_profile`, its path."""
    return write_game_profile(model, width, height, game, directory).path


def write_game_profile(
    model: str, width: int, height: int, game: GameProfile, directory: str | os.PathLike[str]
) -> SavedProfile:
    """Write (or refresh) one game's profile in the device's file in `directory`, keeping
    the file's other games. A broken file is replaced, the caller's profile being newer,
    but kept beside it as `NAME.unreadable` (it may hold a hand edit or other games worth
    recovering). A folder in the file's place is not replaced: that is a ProfileError.

    The screens a person taught the game (`agent screens add`) are the file's, as it is
    when written: a run or a simulated phone that writes the game's profile keeps them,
    even those taught while it ran. The file is read and written under the folder's lock
    (`folder_locked`), so writers at once each keep what the others wrote."""
    from agent.files import folder_locked

    path = Path(directory) / profile_filename(model, width, height)
    if path.is_dir():
        raise ProfileError(f"{path}: is a folder where this phone's profile file goes",
                           hint="move or rename the folder, then try again")  # fmt: skip
    with folder_locked(path.parent):
        kept = None
        try:
            device = load_profile(path) if path.exists() else None
        except ProfileError:
            device = None
            kept = keep_unreadable(path)
        if device is None:
            device = DeviceProfile(model, width, height, None, {})
        old = device.games.get(game.game)
        if old is not None:
            game = replace(game, screens=old.screens)
        return SavedProfile(save_profile(device.with_game(game), path), kept)


def keep_unreadable(path: Path) -> Path:
    """Move an unreadable profile file aside under a name no other file has; that name."""
    kept = path.with_name(path.name + ".unreadable")
    n = 1
    while kept.exists():
        n += 1
        kept = path.with_name(f"{path.name}.unreadable-{n}")
    os.replace(path, kept)
    return kept


# -- lookup -----------------------------------------------------------------------------


def _aspect_close(w1: int, h1: int, w2: int, h2: int) -> bool:
    a, b = w1 / h1, w2 / h2
    return abs(a - b) <= ASPECT_TOLERANCE * a


def find_profile(
    model: str,
    width: int,
    height: int,
    game: str,
    search_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> ProfileMatch:
    """The best profile for `game` on this phone, in this order:

    1. EXACT: a profile of this model (compared slugified) at this resolution;
    2. SAME_RESOLUTION: any profile at this resolution;
    3. SCALED: a profile with the same aspect ratio (within ASPECT_TOLERANCE), the bbox
       recomputed from fractions; this model first, then the nearest resolution.

    Within a step, earlier search_dirs win, then file names in order. A profile file
    without the game is passed over (another phone's profile may have it) and named in
    the error if nothing matches. The phone's own file must be valid; unreadable profiles
    of other phones are skipped, with why in `ProfileMatch.skipped` (and in the error if
    nothing matches), so one bad file does not stop every phone.
    """
    dirs = [Path(d) for d in (search_dirs if search_dirs is not None else [PROFILE_DIR])]
    own_name = profile_filename(model, width, height)
    slug = slugify(model)
    loaded: list[tuple[Path, DeviceProfile]] = []
    broken: list[str] = []
    lacking: list[str] = []
    broken_hints: list[str] = []
    for d in dirs:
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.toml")):
            try:
                dev = load_profile(p)
            except ProfileError as exc:
                if p.name == own_name and p.is_dir():
                    raise  # its hint says to move it: calibrating does not replace a folder
                if p.name == own_name:
                    raise ProfileError(
                        f"{exc} (the profile file of this phone)",
                        hint=f"fix or delete it, or write a new one: `agent calibrate --game {game} --yes` "
                        "with the board on screen replaces it",
                    ) from None
                broken.append(str(exc))
                if exc.hint != ProfileError.hint and exc.hint not in broken_hints:
                    broken_hints.append(exc.hint)  # (what to do about that file, said with the error)
                continue
            if game in dev.games:
                loaded.append((p, dev))
            elif slugify(dev.model) == slug and (dev.width, dev.height) == (width, height):
                lacking.append(f"{p} has no game {game!r} (it has: {', '.join(sorted(dev.games)) or 'none'})")

    skipped = tuple(broken)
    for p, dev in loaded:
        if slugify(dev.model) == slug and (dev.width, dev.height) == (width, height):
            return ProfileMatch(dev.games[game], p, EXACT, dev, skipped)
    for p, dev in loaded:
        if (dev.width, dev.height) == (width, height):
            return ProfileMatch(dev.games[game], p, SAME_RESOLUTION, dev, skipped)
    scalable = [
        (slugify(dev.model) != slug, abs(math.log(dev.width / width)), i, p, dev)
        for i, (p, dev) in enumerate(loaded)
        if _aspect_close(dev.width, dev.height, width, height)
    ]
    if scalable:
        *_, p, dev = min(scalable, key=lambda t: t[:3])
        return ProfileMatch(dev.games[game].scaled_to(width, height), p, SCALED, dev, skipped)

    details = "".join(f"; {m}" for m in lacking)
    if broken:
        details += "; skipped unreadable profiles: " + "; ".join(broken)
    where = dirs[0] if dirs else PROFILE_DIR
    calibrate = f"run `agent calibrate` with the {game} board on screen to write {where / own_name}"
    raise ProfileError(
        f"no profile for {model} {width}x{height} and game {game}{details}",
        hint="; ".join(broken_hints) + f" (or {calibrate})" if broken_hints else calibrate,
    )
