"""The red-team suite: one module per category of hostile input. At the end pytest
prints, per category, how many cases were tried and how many were handled."""

from __future__ import annotations

from collections import defaultdict

import pytest

_tried: dict[str, int] = defaultdict(int)
_handled: dict[str, int] = defaultdict(int)


def _category(nodeid: str) -> str | None:
    if "tests/reliability/test_" not in nodeid:
        return None
    return nodeid.split("tests/reliability/test_", 1)[1].split(".py", 1)[0].replace("_", " ")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _category(item.nodeid) is not None:
            item.add_marker(pytest.mark.reliability)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cat = _category(report.nodeid)
    if cat is None:
        return
    # A case is tried once (its call phase, or the setup that failed or skipped it).
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.skipped:
            return
        _tried[cat] += 1
        if report.passed:
            _handled[cat] += 1


def pytest_terminal_summary(terminalreporter) -> None:
    if not _tried:
        return
    tr = terminalreporter
    tr.section("reliability: red-team cases by category")
    for cat in sorted(_tried):
        tr.write_line(f"  {cat:<24} {_handled[cat]:>4} of {_tried[cat]:>4} handled")
    tried, handled = sum(_tried.values()), sum(_handled.values())
    tr.write_line(f"  {'all':<24} {handled:>4} of {tried:>4} handled")
