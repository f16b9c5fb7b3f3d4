"""Cause 9: what a user is told names the real problem and its fix (an empty list of
solvers is not an empty table and exit 0)."""

from __future__ import annotations

import pytest

from redteam import agent, assert_handled

LISTS = [
    ("bench", "play", "--games", "1", "--moves", "2", "--solvers"),
    ("bench", "lines", "--games", "1", "--solvers"),
]


@pytest.mark.parametrize("value,says", [("", "at least one"), (",", "at least one"), (" , ", "at least one"),
                                        ("plan,,greedy", "empty"), ("plan,plan", "twice"), ("bogus", "bogus")])  # fmt: skip
@pytest.mark.parametrize("command", LISTS, ids=["bench play", "bench lines"])
def test_a_list_of_choices_is_checked(tmp_path, command, value, says):
    if command[1] == "lines" and value in ("plan,,greedy", "plan,plan"):
        value = value.replace("plan", "greedy").replace("greedy,,greedy", "greedy,,random")
    r = agent(*command, value, cwd=tmp_path, timeout=60)
    assert_handled(r, 2, says=("--solvers", says))
