"""Board text from where `agent solve --board` says: a file, or '-' for stdin.

Games whose boards also fit on the command line (lightsout's `10010/01100`, junqi's text
with newlines) decide that themselves before asking for a file; a file that is not there
or cannot be read is a `BoardFileError` naming the file and the fix.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent.errors import AgentError

STDIN = "-"


class BoardFileError(AgentError):
    """A board file that is missing or cannot be read as text."""

    hint = "give a text file, or '-' to read the board from stdin"


def is_board_file(source: str) -> bool:
    """Whether `source` names stdin or an existing file (rather than, say, board text)."""
    if source == STDIN:
        return True
    try:
        return Path(source).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL in it
        return False


def read_board_text(source: str) -> str:
    """The text of the board file `source`, or of stdin for '-'."""
    if source == STDIN:
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoardFileError(f"no board file {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardFileError(f"cannot read {path}: {exc}", hint="give a text file with one line per row") from None
