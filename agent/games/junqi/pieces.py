"""Junqi pieces and sides, and the one-letter legend the board notation uses.

A piece is a side and a kind. In text the kind is one letter, UPPERCASE for red and
lowercase for blue; `X`/`x` is a face-down piece whose rank is not known (the opponent's
pieces are hidden in the usual game).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Side(Enum):
    RED = "red"  # UPPERCASE letters
    BLUE = "blue"  # lowercase letters

    @property
    def other(self) -> "Side":
        return Side.BLUE if self is Side.RED else Side.RED


class Kind(Enum):
    """Each kind's value is its letter. Officers are listed from the highest rank down."""

    MARSHAL = "M"  # 司令
    GENERAL = "G"  # 军长
    DIVISION = "D"  # 师长
    BRIGADE = "B"  # 旅长
    REGIMENT = "R"  # 团长
    BATTALION = "T"  # 营长
    COMPANY = "C"  # 连长
    PLATOON = "P"  # 排长
    ENGINEER = "E"  # 工兵
    LANDMINE = "L"  # 地雷
    BOMB = "Z"  # 炸弹 (zhàdàn; B is the brigade commander)
    FLAG = "F"  # 军旗
    HIDDEN = "X"  # face-down: rank unknown

    @property
    def chinese(self) -> str:
        return _CHINESE[self]

    @property
    def english(self) -> str:
        return self.name.lower()

    @property
    def moves(self) -> bool:
        """Landmines and the flag never move (a hidden piece's moves are unknown)."""
        return self not in (Kind.LANDMINE, Kind.FLAG)


_CHINESE = {
    Kind.MARSHAL: "司令", Kind.GENERAL: "军长", Kind.DIVISION: "师长", Kind.BRIGADE: "旅长",
    Kind.REGIMENT: "团长", Kind.BATTALION: "营长", Kind.COMPANY: "连长", Kind.PLATOON: "排长",
    Kind.ENGINEER: "工兵", Kind.LANDMINE: "地雷", Kind.BOMB: "炸弹", Kind.FLAG: "军旗", Kind.HIDDEN: "暗子",
}

EMPTY_CHAR = "."


@dataclass(frozen=True, order=True)
class Piece:
    side: Side
    kind: Kind

    @property
    def char(self) -> str:
        return self.kind.value if self.side is Side.RED else self.kind.value.lower()

    @classmethod
    def from_char(cls, ch: str) -> "Piece | None":
        """The piece a letter stands for, or None if it is not a piece letter."""
        if len(ch) != 1 or not ch.isalpha():
            return None
        try:
            kind = Kind(ch.upper())
        except ValueError:
            return None
        return cls(Side.RED if ch.isupper() else Side.BLUE, kind)

    def describe(self) -> str:
        return f"{self.side.value} {self.kind.english} ({self.char}, {self.kind.chinese})"


LEGEND = (
    "'.' empty station; "
    + ", ".join(f"{k.value} {k.english}" for k in Kind)
    + "; UPPERCASE is red, lowercase is blue"
)
