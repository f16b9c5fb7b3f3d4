"""Board text from where `agent solve --board` says: a file, or '-' for stdin.

Games whose boards also fit on the command line (lightsout's `10010/01100`, junqi's text
with newlines) decide that themselves before asking for a file; a file that is not there
or cannot be read is a `BoardFileError` naming the file and the fix.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.files import InputProblem, read_capped
from agent.errors import AgentError

STDIN = "-"
# A board is a few hundred bytes and a file of several (match3) a few KB; a bigger input
# is a mistake, refused before it fills memory.
MAX_BOARD_BYTES = 4 * 1024 * 1024
_TOO_BIG = "{where}: more than " + str(MAX_BOARD_BYTES // (1024 * 1024)) + " MiB is not a board file"


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


@contextmanager
def naming(source: str | None) -> Iterator[None]:
    """Errors about the board read from `source` (a file, or stdin) name where it came
    from, so a user with many board files knows which one is wrong; board text given on
    the command line is its own name."""
    try:
        yield
    except AgentError as exc:
        if source is not None and is_board_file(source):
            where = "stdin" if source == STDIN else source
            if not str(exc).startswith(where):
                exc.args = (f"{where}: {exc}", *exc.args[1:])
        raise


def read_board_text(source: str) -> str:
    """The text of the board file `source`, or of stdin for '-': UTF-8, at most
    MAX_BOARD_BYTES (boards are a few hundred bytes; a file of many is still small)."""
    if source == STDIN:
        raw = getattr(sys.stdin, "buffer", None)  # None when stdin was replaced by a text stream
        if raw is None:
            return _decode(sys.stdin.read(MAX_BOARD_BYTES + 1).encode("utf-8", "surrogateescape"), "stdin")
        return _decode(raw.read(MAX_BOARD_BYTES + 1), "stdin")
    path = Path(source)
    try:
        data = read_capped(path, MAX_BOARD_BYTES)
    except InputProblem as p:
        if p.kind == "missing":
            raise BoardFileError(f"no board file {path}") from None
        if p.kind == "folder":
            raise BoardFileError(f"{path} is a folder, not a board file") from None
        if p.kind == "too big":
            raise BoardFileError(_TOO_BIG.format(where=path)) from None
        raise BoardFileError(f"cannot read {path}: {p.detail}", hint="give a text file with one line per row") from None
    return _decode(data, str(path))


def _decode(data: bytes, where: str) -> str:
    if len(data) > MAX_BOARD_BYTES:
        raise BoardFileError(_TOO_BIG.format(where=where))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BoardFileError(f"{where}: not UTF-8 text (byte {exc.start})",
                             hint="give a text file with one line per row") from None  # fmt: skip
