"""Learning a class during the run: a look that keeps appearing becomes a class.

The agent's own big matches make special tiles (striped, wrapped, bombs) that the
calibration frame never showed; they read "?" forever unless the profile learns them.
`ClassGrower` watches the unknown cells of settled, read frames and keeps what they
looked like (their features, as the profile reads them, and their pixels). A look that
recurs, consistently, becomes a class:

- consistency is the guard: a tile caught mid-animation, a popup over a cell, a score
  drawn over a piece are each seen once, looking like nothing else; a special looks the
  same on every frame it sits on. So the observations are grouped with complete linkage
  (every two members of a group within the profile's own idea of one look: the median
  distance bound of its classes, see agent.vision.classify.default_max_distances), and a
  group becomes a class only with at least `min_cells` observations over at least
  `min_frames` frames, within the last WINDOW frames (a cell seen on two frames counts
  twice: a special that stays where it was made is learned while it waits there);
- its role comes from its hue, as calibration decides the role of a rare look
  (agent.vision.kinds): inside a tile colour's hue territory it is that colour's special
  (kind = the colour's letter); of many hues at once, a colourless special; otherwise
  its kind is unknown ("?", which the player neither swaps nor matches) until the game
  shows what it does with it (`relabel`: it cleared with the reds);
- a look with nothing in its centre (an empty slot the profile did not know) adds
  exemplars to the empty cells "." instead;
- a look seen where a blocker stood on the board before the move (`held`: a crate
  cracks where it is, and a piece that fell in is a known look) is a look of that
  blocker: most of its cells held one;
- a cell that never read as a look the profile knows (only unknown or empty) on this
  board is watched on the first frame it is seen only: what the game makes and drops
  comes into cells pieces were in, and a blocker hit changes where it stood, while a cut
  corner keeps showing the (animated) scene behind it, frame after frame.

A frame with many unknown cells (MAX_UNKNOWN_SHARE) is not learned from: a dim or a
dialog over the board, or another level's board, would teach the profile to read a
covered board as a board. Cheap when there is nothing to learn: a frame with no unknown
cell costs a pass over its labels (which cells read as a known look).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from agent.errors import ProfileError
from agent.vision.calibrate import EXEMPLARS_PER_CLASS, class_colours
from agent.vision.classify import EMPTY_LABEL, UNKNOWN_LABEL, Reading, default_max_distances, exemplars_from_labels
from agent.vision.classify import NOISE_FLOOR as READ_NOISE_FLOOR
from agent.vision.cluster import CLASS_NAMES, EMPTY_CHROMA, EMPTY_CONTRAST, centre_chroma, centre_contrast
from agent.vision.newlooks import judge
from agent.vision.profile import GameProfile
from agent.vision.roles import ROLES, colour_name
from agent.vision.samples import sample_board

WINDOW = 30  # frames: a look must recur within this many observed frames
MAX_SEEN = 600  # observations kept at most (the oldest go first)
# A frame with more of its cells unknown than this is not a board with a few new
# pieces on it but a board under something (a dim, a dialog the screen check let
# through) or a board of another level: its looks are not learned (finding the board
# again is agent.vision.relearn's work). Specials come a few at a time.
MAX_UNKNOWN_SHARE = 0.25
UNKNOWN_KIND = UNKNOWN_LABEL
# A look in this many cells of one settled frame is a colour of tiles: specials come a
# few at a time, and a level that brings a new colour scatters it over the board.
COLOUR_AT_ONCE = 4
MAX_COLOURS = 8  # colours of tiles a profile holds at most (the rules' kinds)
# Looks learned within WINDOW frames at most. A game brings a few new pieces at a time
# (a special or two from a big match, a level's new colour at once); a new look on
# frame after frame is a scene drifting behind cells that are no pieces (the sky
# through holes, a board found a few rows short), which would take every letter.
LEARN_BURST = 3
# What a cell of the board read as on the frames observed (see ClassGrower.observe)
NOT_SEEN, NEVER_A_LOOK, HELD_A_LOOK = 0, 1, 2


@dataclass(frozen=True, eq=False)
class _Seen:
    frame: int
    features: np.ndarray  # as the profile reads cells
    lab: np.ndarray  # (s, s, 3) the sampled cell
    held: str | None = None  # the blocker class the cell showed before the move, if it did


class ClassGrower:
    """Learns the looks that keep appearing in a run's unknown cells (see the module
    docstring). `profile` is the profile the readings come from; after `observe` returns
    a new one, or after `relabel`, the grower reads with that one."""

    def __init__(self, profile: GameProfile, min_cells: int = 3, min_frames: int = 2) -> None:
        if min_cells < 1 or min_frames < 1:
            raise ValueError(f"min_cells and min_frames are at least 1, got {min_cells} and {min_frames}")
        self.min_cells = min_cells
        self.min_frames = min_frames
        self._frame = 0
        self._seen: list[_Seen] = []
        self._learned_at: list[int] = []  # the frames a look was learned on
        # per cell of the board: NOT_SEEN, NEVER_A_LOOK (only unknown or empty), HELD_A_LOOK
        self._cells = np.zeros((profile.rows, profile.cols), np.int8)
        self.profile = profile
        self._radius = _look_radius(profile)

    def rebase(self, profile: GameProfile) -> None:
        """Read with `profile` from now on (the board was found again, say): what was
        seen is kept when the cells are described alike; what each cell held, while the
        board is the same."""
        if (profile.inset, profile.patch) != (self.profile.inset, self.profile.patch):
            self._seen = []
        if (profile.rows, profile.cols, profile.board_bbox) != (self.profile.rows, self.profile.cols,
                                                                  self.profile.board_bbox):  # fmt: skip
            self._cells = np.zeros((profile.rows, profile.cols), np.int8)
        self.profile = profile
        self._radius = _look_radius(profile)

    def observe(self, frame: np.ndarray, reading: Reading,
                held: dict[tuple[int, int], str] | None = None) -> GameProfile | None:  # fmt: skip
        """Feed one settled frame and its reading with `self.profile`: the profile with a
        new class (or new empty exemplars) when a look has now recurred enough, else None.
        `held`: the cells that showed a blocker on the board before the move (their class)."""
        self._frame += 1
        p = self.profile
        if (reading.rows, reading.cols) != (p.rows, p.cols):
            raise ValueError(f"a {reading.rows}x{reading.cols} reading for a {p.rows}x{p.cols} profile: "
                             "rebase the grower on the profile that read the frame")  # fmt: skip
        known = np.array([[v not in (EMPTY_LABEL, UNKNOWN_LABEL) for v in row] for row in reading.labels],
                         bool).reshape(p.rows, p.cols)  # fmt: skip
        self._cells[known] = HELD_A_LOOK
        if not any(UNKNOWN_LABEL in row for row in reading.labels):
            return None
        unknown = reading.unknown_cells()
        if len(unknown) > MAX_UNKNOWN_SHARE * p.rows * p.cols:
            return None  # not new pieces on a board: something over it, or another board
        cells = sample_board(frame, p.board_bbox, p.rows, p.cols, p.inset, p.patch)
        held = held or {}
        for r, c in unknown:
            if self._cells[r, c] == NEVER_A_LOOK and (r, c) not in held:
                # A cell that never read as a look the profile knows on this board, seen
                # before: a hole showing the scene behind, not a piece the game made or
                # a blocker it hit (before: the sky drifting through a cut corner was
                # learned, look after look, as specials of the colour of its hue, and
                # swiped).
                continue
            i = r * p.cols + c
            self._seen.append(_Seen(self._frame, cells.features[i], cells.lab[i], held.get((r, c))))
        self._cells[(~known) & (self._cells == NOT_SEEN)] = NEVER_A_LOOK
        self._seen = [s for s in self._seen if s.frame > self._frame - WINDOW][-MAX_SEEN:]
        self._learned_at = [f for f in self._learned_at if f > self._frame - WINDOW]
        if len(self._learned_at) >= LEARN_BURST:
            return None
        group = self._recurring()
        if group is None:
            return None
        out = self._learn(group, reading, cells.lab, cells.margin)
        taken = set(map(id, group))
        self._seen = [s for s in self._seen if id(s) not in taken]
        if out is None:
            return None
        self._learned_at.append(self._frame)
        self.rebase(out)
        return out

    def relabel(self, profile: GameProfile, letter: str, kind: str, role: str) -> GameProfile:
        """`profile` with what the game showed of class `letter`: its colour kind (a
        letter, "." for none, "?" still unknown) and its role (agent.vision.roles.ROLES).
        The grower reads with the result."""
        out = relabel(profile, letter, kind, role)
        self.rebase(out)
        return out

    # -- inside ----------------------------------------------------------------------------

    def _recurring(self) -> list[_Seen] | None:
        """The largest group of observations of one look seen often enough, or None."""
        seen = self._seen
        if len(seen) < self.min_cells:
            return None
        x = np.stack([s.features for s in seen]).astype(np.float64)
        d = pdist(x) / np.sqrt(x.shape[1])  # RMS, as the classifier measures
        ids = fcluster(linkage(d, method="complete"), self._radius, criterion="distance")
        best: list[_Seen] | None = None
        for g in np.unique(ids):
            members = [s for s, i in zip(seen, ids) if i == g]
            if len(members) < self.min_cells or len({s.frame for s in members}) < self.min_frames:
                continue
            if best is None or len(members) > len(best):
                best = members
        return best

    def _learn(self, group: list[_Seen], reading: Reading, lab: np.ndarray, margin: int) -> GameProfile | None:
        p = self.profile
        feats = np.stack([s.features for s in group])
        looks = np.stack([s.lab for s in group])
        if (float(np.median(centre_contrast(looks))) < EMPTY_CONTRAST
                and float(np.median(centre_chroma(looks))) < EMPTY_CHROMA):  # fmt: skip
            added = exemplars_from_labels(feats, [[EMPTY_LABEL] * len(group)], per_label=EXEMPLARS_PER_CLASS)
            return replace(p, exemplars=[*p.exemplars, *added])
        letter = next((n for n in CLASS_NAMES if n not in _used(p)), None)
        if letter is None:
            return None  # every class name taken: the look stays unknown (played around)
        held = [s.held for s in group if s.held is not None]
        if 2 * len(held) >= len(group):
            # where a blocker stood, and no piece fell in: the blocker, hit (a cracked crate)
            was = max(set(held), key=held.count)
            kind, role, name = p.kinds.get(was, was), "blocker", f"{_colour_of(class_colours(p).get(was))} blocker"
        else:
            at_once = max(sum(1 for s in group if s.frame == f) for f in {s.frame for s in group})
            kind, role, name = _hue_role(p, reading, lab, margin, looks, feats, letter,
                                         at_once >= COLOUR_AT_ONCE and _colour_room(p))  # fmt: skip
        added = exemplars_from_labels(feats, [[letter] * len(group)], per_label=EXEMPLARS_PER_CLASS)
        roles = {**p.roles, letter: role}
        return replace(p, exemplars=[*p.exemplars, *added], kinds={**p.kinds, letter: kind}, roles=roles,
                       names={**p.names, letter: _unique_name(p, name, letter)})  # fmt: skip


def _look_radius(profile: GameProfile) -> float:
    """How far apart two cells of one look may be, by the profile's own classes: the
    median of their distance bounds (never under the classifier's noise floor)."""
    if profile.max_distance is not None:
        return max(READ_NOISE_FLOOR, profile.max_distance)
    bounds = default_max_distances(profile.exemplars)
    tiles = [v for k, v in bounds.items() if k != EMPTY_LABEL] or list(bounds.values())
    return max(READ_NOISE_FLOOR, float(np.median(tiles)))


def _used(profile: GameProfile) -> set[str]:
    return set(profile.class_labels) | set(profile.kinds) | set(profile.roles) | set(profile.names) | set(
        profile.kinds.values()
    )


def _typical(feats: np.ndarray, k: int) -> list[int]:
    """The k members nearest the group's medoid (the medoid first)."""
    d = np.sqrt(((feats[:, None, :] - feats[None, :, :]) ** 2).mean(axis=2))
    medoid = int(d.sum(axis=1).argmin())
    return [int(i) for i in np.argsort(d[medoid], kind="stable")[:k]]


def _colour_room(profile: GameProfile) -> bool:
    """Whether the profile has room for one more colour of tiles (MAX_COLOURS at most)."""
    colours = {profile.kinds.get(n, n) for n in profile.class_labels if profile.role_of(n) == "tile"}
    return len(colours) < MAX_COLOURS


def _hue_role(profile: GameProfile, reading: Reading, lab: np.ndarray, margin: int, looks: np.ndarray,
              feats: np.ndarray, letter: str, many: bool = False) -> tuple[str, str, str]:  # fmt: skip
    """(kind, role, name) of a new look, from its hue beside the colours of the board now
    (see agent.vision.newlooks). `many`: seen in many cells at once, as only tiles come (a
    level that brings a colour the calibration never saw), so a look of a hue of its own
    is a colour of tiles, not a look of unknown kind the player would play around."""
    known: dict[str, list[np.ndarray]] = {}
    for r, row in enumerate(reading.labels):
        for c, v in enumerate(row):
            if v in (EMPTY_LABEL, UNKNOWN_LABEL) or profile.role_of(v) in ("hole", "layer", "colourless"):
                continue
            known.setdefault(profile.kinds.get(v, v), []).append(lab[r * reading.cols + c])
    verdict = judge(known, {letter: [looks[i] for i in _typical(feats, len(looks))]}, {letter} if many else set(),
                    margin).get(letter)  # fmt: skip
    if verdict is None:
        return UNKNOWN_KIND, "special", "new look, what it does unknown"
    if verdict.joined:
        blocker = any(profile.role_of(n) == "blocker" and profile.kinds.get(n, n) == verdict.kind
                      for n in profile.class_labels)  # fmt: skip
        role = "blocker" if blocker else "special"
        return verdict.kind, role, f"{colour_name(verdict.bgr)} {role}"
    if verdict.colourless:
        return letter, "colourless", "multicolour special"
    if many:
        return letter, "tile", f"{colour_name(verdict.bgr)} tile"
    return UNKNOWN_KIND, "special", f"{colour_name(verdict.bgr)} look, what it does unknown"


def _unique_name(profile: GameProfile, name: str, letter: str) -> str:
    others = {v for k, v in profile.names.items() if k != letter}
    return name if name not in others else f"{name} {letter}"


def relabel(profile: GameProfile, letter: str, kind: str, role: str) -> GameProfile:
    """`profile` with class `letter`'s kind and role set to what the game showed (a
    special that cleared with the reds: the reds' kind, role "special"), and a name to
    match. A ProfileError for a class, kind or role the profile cannot hold."""
    if letter not in profile.class_labels:
        known = ", ".join(profile.class_labels) or "none"
        raise ProfileError(f"no class {letter!r} in the {profile.game} profile (it has: {known})",
                           hint="relabel a class the profile holds")  # fmt: skip
    if role not in ROLES:
        raise ProfileError(f"unknown role {role!r} for class {letter}", hint=f"a role is one of {', '.join(ROLES)}")
    if not (kind in (EMPTY_LABEL, UNKNOWN_KIND) or re.fullmatch(r"[A-Za-z]+", kind)):
        raise ProfileError(f"kind {kind!r} for class {letter} is not a kind",
                           hint='a kind is a colour kind\'s letter such as "A", "." for none, or "?"')  # fmt: skip
    colours = class_colours(profile)
    if role == "colourless":
        name = "multicolour special"
    elif role in ("hole", "layer"):
        name = role
    elif kind == UNKNOWN_KIND:
        name = f"{_colour_of(colours.get(letter))} look, what it does unknown"
    else:
        name = f"{_colour_of(colours.get(kind, colours.get(letter)))} {role}"
    return replace(profile, kinds={**profile.kinds, letter: kind}, roles={**profile.roles, letter: role},
                   names={**profile.names, letter: _unique_name(profile, name, letter)})  # fmt: skip


def _colour_of(hex_colour: str | None) -> str:
    if not hex_colour:
        return "new"
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return colour_name((b, g, r))


__all__ = ["ClassGrower", "MAX_SEEN", "WINDOW", "relabel"]
