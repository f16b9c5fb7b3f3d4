"""A level's goal, as a game shows it: reach a score, collect N pieces of one colour,
break N blockers.

The goal is read where games show it (a level's intro card, the header beside the board)
and is what a goal-aware player chooses its moves by. This module holds the value that
crosses from vision to the games and the play loop; reading it off a screen lives beside
it (`agent.vision.goal_read`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GoalKind = Literal["score", "collect", "break"]
GOAL_KINDS: tuple[GoalKind, ...] = ("score", "collect", "break")


@dataclass(frozen=True)
class Goal:
    kind: GoalKind
    target: int | None = None  # the count (or score) to reach, as read; None: not read
    left: int | None = None  # what is still to do, as the header counts it down; None: not read
    colour: str | None = None  # collect: the colour kind (a profile kind letter) the icon matched
    text: str = ""  # the words it was read from, for the journal
    # The kind letter of the class the goal's icon matched: a collect goal's colour, or
    # the blockers to break (a class calibration took for a tile); None: no icon matched.
    piece: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in GOAL_KINDS:
            raise ValueError(f"goal kind is one of {', '.join(GOAL_KINDS)}, not {self.kind!r}")
        for name in ("target", "left"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ValueError(f"goal {name} must be >= 0, got {v}")

    @property
    def playable(self) -> bool:
        """Whether a player can aim at it: a collect goal needs its colour."""
        return self.kind != "collect" or self.colour is not None

    def describe(self) -> str:
        what = {"score": "reach a score of", "collect": "collect", "break": "break"}[self.kind]
        n = "?" if self.target is None else str(self.target)
        tail = {"score": "", "collect": f" of colour {self.colour or '?'}", "break": " blockers"}[self.kind]
        left = "" if self.left is None else f" ({self.left} left)"
        return f"{what} {n}{tail}{left}"

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "target": self.target, "left": self.left, "colour": self.colour, "text": self.text,
                "piece": self.piece}


def merge_goals(card: Goal | None, header: Goal | None) -> Goal | None:
    """One level's goal from what its intro card said and what the header shows now.

    The card's words name the goal ("Break 12": its kind and target); the header counts
    it down (what is left) and shows its piece. Where they disagree on the kind, the
    card's verb wins when the header's icon is the card's own piece (a crate that
    calibration took for a tile reads as a colour), and the header wins when the card
    named another piece (the card of an earlier level). A card that says "break" with a
    piece it could not name (the crate's class came only with the board, after the card)
    wins too when the header counts to the card's own target: the same count is the same
    goal."""
    if card is None or header is None:
        return card or header
    same_piece = card.piece is not None and card.piece == header.piece
    same_count = (card.kind == "break" and card.piece is None and card.target is not None
                  and card.target == header.target)  # fmt: skip
    if card.kind != header.kind and not (same_piece or same_count):
        return header
    if card.kind == "collect" and header.colour is not None and card.colour not in (None, header.colour):
        return header  # another colour: another level's goal
    return Goal(card.kind, target=card.target if card.target is not None else header.target,
                left=header.left if header.left is not None else card.left,
                colour=card.colour or (header.colour if card.kind == "collect" else None),
                text=header.text or card.text, piece=card.piece or header.piece)  # fmt: skip
