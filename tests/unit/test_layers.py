"""The layers import downward only: device -> vision -> games -> play -> farm -> report -> cli.

Read from the source (imports inside functions included), so a lazy import that runs
back up is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agent

ROOT = Path(agent.__file__).parent


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _modules(folder: str) -> dict[str, set[str]]:
    return {str(p.relative_to(ROOT)): _imports(p) for p in sorted((ROOT / folder).rglob("*.py"))}


def _offenders(folder: str, banned: tuple[str, ...]) -> list[str]:
    return [f"{name} imports {imp}" for name, imps in _modules(folder).items() for imp in sorted(imps)
            if any(imp == b or imp.startswith(b + ".") for b in banned)]  # fmt: skip


def test_device_imports_no_game_no_vision_and_nothing_above():
    assert _offenders("device", ("agent.games", "agent.vision", "agent.simphone", "agent.play", "agent.farm",
                                 "agent.cli")) == []  # fmt: skip


def test_simulated_phones_common_parts_import_only_the_device_layer():
    assert _offenders("simphone", ("agent.games", "agent.vision", "agent.play", "agent.farm", "agent.cli")) == []


def test_vision_imports_no_game_and_nothing_above():
    assert _offenders("vision", ("agent.games", "agent.simphone", "agent.play", "agent.farm", "agent.cli")) == []


def test_games_import_neither_the_loop_nor_the_farm_nor_the_cli():
    assert _offenders("games", ("agent.farm", "agent.cli", "agent.play")) == []


def test_the_play_loop_imports_neither_the_farm_nor_the_report_nor_the_cli():
    assert _offenders("play", ("agent.farm", "agent.report", "agent.cli")) == []


def test_the_farm_imports_neither_the_report_nor_the_cli():
    assert _offenders("farm", ("agent.report", "agent.cli")) == []


def test_the_report_imports_no_cli():
    assert _offenders("report", ("agent.cli",)) == []


def test_only_the_cli_imports_typer_or_rich():
    outside = [f for f in ROOT.rglob("*.py") if "cli" not in f.relative_to(ROOT).parts[:1]]
    bad = [f"{f.relative_to(ROOT)} imports {imp}" for f in outside for imp in sorted(_imports(f))
           if imp.split(".")[0] in ("typer", "rich")]  # fmt: skip
    assert bad == []


def test_the_list_of_games_is_written_once():
    """No module but the registry names the set of games."""
    names = ('"match3"', '"lines"', '"lightsout"', '"junqi"')
    lists = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
             if sum(n in p.read_text(encoding="utf-8") for n in names) >= 3]  # fmt: skip
    assert lists == ["games/registry.py"]
