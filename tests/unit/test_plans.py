"""The match-3 plan library: generation (complete and as the seed printed it), the
committed file, its format, verification and statistics."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agent.cli import app
from agent.games.match3.plan_library import (
    DEFAULT_LIBRARY,
    Plan,
    PlanLibrary,
    PlanLibraryError,
    PlanStep,
    library_header,
    load_library,
    save_library,
    verify_library,
    verify_plan,
)
from agent.games.match3.plans import (
    BASE_SHAPES,
    COMPLETE,
    FAITHFUL,
    build_plans,
    normalized,
    orientations,
)

runner = CliRunner()

# The four 1-swap plans for 7 tiles the seed prints (target -> final).
SEED_SEVEN_PLANS = [
    ("00100/11011/00100/00100", "00000/11111/00100/00100"),
    ("0010/0010/1101/0010/0010", "0010/0010/1110/0010/0010"),
    ("00100/00100/11011/00100", "00100/00100/11111/00000"),
    ("0100/0100/1011/0100/0100", "0100/0100/0111/0100/0100"),
]


@pytest.fixture(scope="module")
def committed() -> PlanLibrary:
    if not DEFAULT_LIBRARY.exists():
        pytest.fail(f"the committed library {DEFAULT_LIBRARY} is missing: run `agent plans build`")
    return load_library(DEFAULT_LIBRARY)


@pytest.fixture(scope="module")
def rebuilt():
    return build_plans(COMPLETE)


@pytest.fixture(scope="module")
def seed_method():
    return build_plans(FAITHFUL)


@pytest.fixture(scope="module")
def faithful(seed_method) -> PlanLibrary:
    return seed_method[0]


def _cells(pattern: str) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(pattern.split("/")) for c, ch in enumerate(row) if ch == "1"}


def _runs_of_three(cells: set[tuple[int, int]]) -> bool:
    return any({(r, c + 1), (r, c + 2)} <= cells or {(r + 1, c), (r + 2, c)} <= cells for r, c in cells)


# -- the committed file ---------------------------------------------------------------------


def test_rebuilding_gives_the_committed_file_byte_for_byte(rebuilt, committed):
    library, _ = rebuilt
    assert library.to_json().encode("utf-8") == DEFAULT_LIBRARY.read_bytes()
    assert len(library) == len(committed)


def test_build_command_writes_the_library_atomically(tmp_path, seed_method):
    out = tmp_path / "plans" / "seed.json"
    result = runner.invoke(app, ["plans", "build", "--faithful", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["plans"] == len(seed_method[0]) and figures["variant"] == "faithful"
    assert out.read_bytes() == seed_method[0].to_json().encode("utf-8")
    assert [p.name for p in out.parent.iterdir()] == ["seed.json"]  # no temporary file left


def test_committed_library_verifies_and_its_header_matches(committed):
    assert list(verify_library(committed)) == []
    h = committed.header
    assert h["format"] == 1 and h["variant"] == "complete" and h["generator"]
    assert h["total"] == len(committed) == sum(sum(row.values()) for row in h["counts"].values())
    result = runner.invoke(app, ["plans", "verify"])
    assert result.exit_code == 0 and f"{len(committed)} plans verified" in result.stdout


def test_every_record_is_a_plan_the_window_replay_confirms(committed):
    """Independently of `verify_plan`: replay each plan with sets of cells."""
    for plan in committed:
        tiles = _cells(plan.target)
        assert len(tiles) == plan.count and not _runs_of_three(tiles)
        for i, step in enumerate(plan.steps):
            dr, dc = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}[step.direction]
            assert (step.row, step.col) in tiles and (step.row + dr, step.col + dc) not in tiles
            tiles = (tiles - {(step.row, step.col)}) | {(step.row + dr, step.col + dc)}
            if i < len(plan.steps) - 1:
                assert not _runs_of_three(tiles), plan
        assert tiles == _cells(plan.final), plan


# -- what the complete library holds ----------------------------------------------------------


def test_all_eight_symmetries_of_every_shape_are_eliminations(committed):
    finals = {normalized(_cells(p.final)) for p in committed}
    for shape in BASE_SHAPES:
        rows = list(shape.rows)
        variants = set()
        for _ in range(4):
            rows = ["".join(col) for col in zip(*rows[::-1])]  # rotate
            variants.add(normalized(_cells("/".join(rows))))
            variants.add(normalized(_cells("/".join(r[::-1] for r in rows))))  # mirror
        assert variants <= finals, shape.name
    # the 6-shape has no symmetry: 8 orientations, 6 of them in the seed's method
    assert sum(1 for o in orientations(COMPLETE) if o.count == 6) == 8
    seed_sixes = {normalized(o.cells) for o in orientations(FAITHFUL) if o.count == 6}
    assert len(seed_sixes) == 6


def _one_swap_setups():
    """Every position one swap (a tile into an empty neighbour) before an elimination of
    one of the seed's shapes, with no three in a row yet: enumerated directly."""
    shapes = {normalized(o.cells) for o in orientations(COMPLETE)}
    for shape in shapes:
        cells = set(shape)
        for r, c in cells:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                src = (r + dr, c + dc)
                if src in cells:
                    continue
                before = (cells - {(r, c)}) | {src}
                if _runs_of_three(before):
                    continue
                both = before | cells
                r0 = min(a for a, _ in both)
                c0 = min(b for _, b in both)
                h = max(a for a, _ in both) - r0 + 1
                w = max(b for _, b in both) - c0 + 1

                def pattern(s):
                    return "/".join("".join("1" if (r0 + i, c0 + j) in s else "0" for j in range(w)) for i in range(h))

                yield pattern(before), pattern(cells), len(cells)


def test_every_one_swap_elimination_of_the_seed_shapes_is_a_plan(committed):
    plans = {(p.target, p.final): p for p in committed}
    setups = list(_one_swap_setups())
    for target, final, count in setups:
        plan = plans.get((target, final))
        assert plan is not None, (target, final)
        assert plan.count == count and len(plan.steps) == 1
    assert len({(t, f) for t, f, _ in setups}) == sum(1 for p in committed if len(p.steps) == 1)


def test_true_step_counts_are_kept_and_windows_are_not_framed(committed):
    steps = {len(p.steps) for p in committed}
    assert {1, 2, 3, 4, 5, 6} <= steps  # set up from 1-4 swaps, but often longer without three in a row
    assert max(max(p.height, p.width) for p in committed) > 6  # the seed's 6x6 frame would cut these
    # a target may lead to several eliminations: each is its own plan
    targets = [p.target for p in committed]
    assert len(set(targets)) < len(targets)


# -- the seed's printed method --------------------------------------------------------------


def test_faithful_build_reproduces_the_seeds_printed_plans_and_defects(faithful, committed):
    pairs = {(p.target, p.final): p for p in faithful}
    for target, final in SEED_SEVEN_PLANS:
        assert (target, final) in pairs and len(pairs[(target, final)].steps) == 1
        assert (target, final) in {(p.target, p.final) for p in committed}
    assert faithful.variant == "faithful" and list(verify_library(faithful)) == []
    # one final per target, every window inside the 6x6 frame, fewer plans than complete
    assert len({p.target for p in faithful}) == len(faithful)
    assert max(max(p.height, p.width) for p in faithful) <= 6
    assert len(faithful) < len(committed)
    # its own paths are true shortest paths too: some take 5 or 6 swaps
    assert any(len(p.steps) >= 5 for p in faithful)


def test_blocked_targets_are_a_seed_defect(seed_method, rebuilt):
    _, seed = seed_method
    _, complete = rebuilt
    assert seed.claimed_then_failed > 0 and seed.claimed_then_failed == seed.clipped + seed.no_path
    assert complete.claimed_then_failed == complete.clipped == complete.no_path == complete.abandoned == 0


# -- format, errors, verify, stats -----------------------------------------------------------


def _library(plans: list[Plan]) -> PlanLibrary:
    return PlanLibrary.from_plans(library_header(plans, generator="test", variant="test"), plans)


GOOD = Plan(3, "1101", "1110", (PlanStep(0, 3, "Left"),))


@pytest.mark.parametrize(
    "plan, problem",
    [
        (Plan(3, "1101", "0111", (PlanStep(0, 3, "Left"),)), "does not produce the final"),
        (Plan(3, "1101", "1110", (PlanStep(0, 3, "Right"),)), "leaves the window"),
        (Plan(3, "1101", "1110", (PlanStep(0, 2, "Left"),)), "does not move a tile"),
        (Plan(3, "111/000", "000/111", (PlanStep(0, 0, "Down"),)), "already lines up three"),
        (Plan(4, "11010", "11100", (PlanStep(0, 3, "Left"),)), "count 4"),
        # 2 swaps where the first already lines up three (it would clear too early)
        (Plan(4, "1101/0010", "1111/0000", (PlanStep(0, 3, "Left"), PlanStep(1, 2, "Up"))), "before the last"),
        (Plan(4, "1101/0001", "1110/0001", (PlanStep(0, 3, "Left"),)), "one elimination"),
    ],
)
def test_verify_names_what_is_wrong_with_a_plan(plan, problem):
    assert verify_plan(GOOD) is None
    found = verify_plan(plan)
    assert found is not None and problem in found


def test_round_trip_and_atomic_save(tmp_path):
    lib = _library([GOOD, Plan(5, "0010/1101/0010", "1110/0010/0010", (PlanStep(1, 3, "Up"), PlanStep(0, 3, "Left")))])
    path = tmp_path / "sub" / "lib.json"
    save_library(lib, path)
    again = load_library(path)
    assert list(again) == list(lib) and again.header == lib.header and again.counts() == {"3": {"1": 1}, "5": {"2": 1}}
    assert path.read_text().count("\n") == len(lib) + 2  # header line, one line per plan, closing line


def test_verify_command_fails_with_the_broken_plan(tmp_path):
    broken = Plan(3, "1101", "0111", (PlanStep(0, 3, "Left"),))
    path = tmp_path / "bad.json"
    save_library(_library([GOOD, broken]), path)
    result = runner.invoke(app, ["plans", "verify", "--library", str(path)])
    assert result.exit_code != 0
    assert "plan 2" in result.output and "1101 -> 0111" in result.output
    # a header that disagrees with the plans is caught too
    data = json.loads(path.read_text())
    data["total"] = 7
    path.write_text(json.dumps(data))
    assert any("header says 7" in f.problem for f in verify_library(load_library(path)))


@pytest.mark.parametrize(
    "content, fragment",
    [
        (None, "no plan library"),
        ("{not json", "not valid JSON"),
        ('{"format": 99, "plans": []}', "format 99"),
        ('{"format": 1, "fields": ["a"], "plans": []}', "does not hold plans"),
    ],
)
def test_bad_library_files_are_clear_errors(tmp_path, content, fragment):
    path = tmp_path / "lib.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(PlanLibraryError, match=fragment) as info:
        load_library(path)
    assert "agent plans build" in info.value.hint


def test_cli_reports_a_missing_library_without_a_traceback(tmp_path):
    result = runner.invoke(app, ["plans", "verify", "--library", str(tmp_path / "none.json")])
    assert result.exit_code == 1
    assert isinstance(result.exception, PlanLibraryError)  # main() prints it as error/fix


def test_stats_counts_the_library_and_the_seed_method(committed, faithful):
    result = runner.invoke(app, ["plans", "stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["library"]["total"] == len(committed) and stats["library"]["counts"] == committed.counts()
    assert stats["faithful"]["total"] == len(faithful)
    assert set(stats["library"]["counts"]) == {"3", "4", "5", "6", "7"}
    assert stats["seed_reported"] == 20036


# -- record shapes: checked on load, reported by verify ---------------------------------------

GOOD_RECORD = [3, "1101", "1110", "0,3,Left"]
BAD_RECORDS = {
    "short": ([3, "1101", "1110"], "expected [count, target, final, steps]"),
    "null": (None, "got null"),
    "an object": ({"count": 3}, "expected [count, target, final, steps]"),
    "count a string": (["3", "1101", "1110", "0,3,Left"], 'count "3"'),
    "count true": ([True, "1101", "1110", "0,3,Left"], "count true"),
    "count huge": ([10**30, "1101", "1110", "0,3,Left"], "not a whole number 3..4"),
    "count below three": ([2, "1101", "1110", "0,3,Left"], "not a whole number 3..4"),
    "target a number": ([3, 1101, "1110", "0,3,Left"], "target 1101 is not rows"),
    "target empty": ([3, "", "", "0,3,Left"], "target"),
    "target not binary": ([3, "1121", "1110", "0,3,Left"], "target"),
    "rows of two widths": ([3, "11/1/111", "11/1/111", "0,0,Down"], "one width"),
    "empty row": ([3, "11//11", "11//11", "0,0,Right"], "one width"),
    "final of another shape": ([3, "1101", "11/10", "0,3,Left"], "final"),
    "window too big": ([3, "1" * 58, "1" * 58, "0,0,Right"], "bigger than 57 cells"),
    "window too wide": ([3, "1" * 13, "1" * 13, "0,0,Right"], "12 rows or columns"),
    "steps a list": ([3, "1101", "1110", ["0,3,Left"]], "steps"),
    "steps empty": ([3, "1101", "1110", ""], 'step 1 "" is not row,col,Direction'),
    "unknown direction": ([3, "1101", "1110", "0,3,Sideways"], "is not row,col,Direction"),
    "step outside": ([3, "1101", "1110", "0,9,Left"], "leaves the 1x4 window"),
    "step moving off": ([3, "1101", "1110", "0,3,Right"], "leaves the 1x4 window"),
    "second step bad": ([3, "1101", "1110", "0,3,Left;x"], "step 2"),
}


@pytest.mark.parametrize("name", list(BAD_RECORDS))
def test_record_problem_names_each_bad_shape(name):
    record, says = BAD_RECORDS[name]
    from agent.games.match3.plan_library import _records_valid, record_problem

    assert record_problem(GOOD_RECORD) is None and _records_valid([GOOD_RECORD])
    problem = record_problem(record)
    assert problem is not None and says in problem
    # the whole-library check agrees with the definition, wherever the record is
    assert not _records_valid([GOOD_RECORD, record, GOOD_RECORD])
    assert not _records_valid([record])


def test_the_whole_library_check_agrees_with_the_record_check_on_the_committed_file(committed):
    from agent.games.match3.plan_library import _records_valid, record_problem

    assert _records_valid(committed.records)
    assert all(record_problem(r) is None for r in committed.records[:2000])


@pytest.mark.parametrize("name", ["short", "unknown direction", "step outside", "count huge"])
def test_loading_names_the_file_and_the_first_bad_record_and_verify_reports_every_one(tmp_path, name):
    record, says = BAD_RECORDS[name]
    path = tmp_path / "lib.json"
    lib = _library([GOOD])
    lib.records.extend([record, record])
    path.write_text(lib.to_json())
    with pytest.raises(PlanLibraryError, match="plan 2 is unreadable") as info:
        load_library(path)
    assert str(path) in str(info.value) and says in str(info.value)
    unchecked = load_library(path, check=False)
    bad = [f for f in verify_library(unchecked) if f.index >= 0]
    assert [f.index for f in bad] == [1, 2] and all(says in f.problem for f in bad)
    result = runner.invoke(app, ["plans", "verify", "--library", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, PlanLibraryError)
    assert "plan 2: unreadable record" in result.output


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"format": 1, "x": ' + "9" * 5000 + "}", "not a plan library"),
        (b"\xff\xfe{}", "not UTF-8"),
        ('{"format": 1, "fields": ["count", "target", "final", "steps"], "plans": []}', "holds no plans"),
    ],
    ids=["nesting", "5000 digits", "non-UTF-8", "no plans"],
)
def test_unreadable_library_files_are_clear_errors(tmp_path, content, fragment):
    path = tmp_path / "lib.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(PlanLibraryError, match=fragment) as info:
        load_library(path)
    assert str(path) in str(info.value)


def test_a_folder_is_not_a_library(tmp_path):
    with pytest.raises(PlanLibraryError, match="is a folder"):
        load_library(tmp_path)


def test_the_variable_naming_a_missing_file_is_an_error_not_a_rebuilt_library(tmp_path, monkeypatch):
    from agent.games.match3 import plan_library, plan_solver

    missing = tmp_path / "none.json"
    monkeypatch.setenv(plan_library.LIBRARY_ENV, str(missing))
    monkeypatch.setattr(plan_solver, "_LIBRARY_CACHE", {})
    with pytest.raises(PlanLibraryError, match=f"PUZZLE_AGENT_PLANS names {missing}, which does not exist") as info:
        plan_solver.default_library()
    assert "agent plans build" in info.value.hint and not missing.exists()
    # a file the variable names is loaded as it is
    path = tmp_path / "lib.json"
    save_library(_library([GOOD]), path)
    monkeypatch.setenv(plan_library.LIBRARY_ENV, str(path))
    assert list(plan_solver.default_library()) == [GOOD]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_RECORDS = [
    [3, "1101", "1110", "0,3,Left"],
    [5, "0010/1101/0010", "1110/0010/0010", "1,3,Up;0,3,Left"],
    [4, "11/00/11", "11/11/00", "2,0,Up;2,1,Up"],
]
_FIELD = st.sampled_from([0, 1, 2, 3])
_PIECES = st.sampled_from(["0", "1", "/", ",", ";", "Up", "Down", "Left", "Right", "9", "12", "-", "", "x", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_RECORDS), _FIELD, st.integers(0, 20), _PIECES, st.integers(-2, 60))
def test_the_whole_library_check_agrees_with_the_record_check(record, field, at, piece, count):
    """Whatever one edit does to a record, the fast check says what record_problem says."""
    from agent.games.match3.plan_library import _records_valid, record_problem

    rec = list(record)
    if field == 0:
        rec[0] = count
    else:
        text = rec[field]
        at = min(at, len(text))
        rec[field] = text[:at] + piece + text[at + 1 :]
    library = [list(r) for r in _RECORDS] + [rec]
    assert _records_valid(library) == (record_problem(rec) is None), (rec, record_problem(rec))
