"""Device profiles: TOML round trips, strict validation, atomic saves and lookup order."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import numpy as np
import pytest
import tomli_w

from agent.errors import ProfileError
from agent.vision.classify import Exemplar, exemplars_from_labels
from agent.vision.features import FEATURE_VERSION, cell_features, feature_length
from agent.vision.profile import (
    EXACT,
    SAME_RESOLUTION,
    SCALED,
    DeviceProfile,
    GameProfile,
    dumps_profile,
    find_profile,
    load_profile,
    profile_filename,
    save_profile,
)
from agent.vision.settle import SettleSettings

BBOX = (40, 700, 1040, 1700)


def make_game(game: str = "match3", bbox=BBOX, width: int = 1080, height: int = 2400, **kw) -> GameProfile:
    rng = np.random.default_rng(abs(hash(game)) % 1000)
    exemplars = [Exemplar(lab, rng.normal(0, 30, feature_length())) for lab in "AABC."]
    return GameProfile.from_bbox(game, 8, 8, bbox, width, height, exemplars, **kw)


def make_device(model: str = "Pixel 7", width: int = 1080, height: int = 2400, games=("match3",), **kw):
    sx, sy = width / 1080, height / 2400
    bbox = (round(BBOX[0] * sx), round(BBOX[1] * sy), round(BBOX[2] * sx), round(BBOX[3] * sy))
    gs = {g: make_game(g, bbox, width, height, **kw) for g in games}
    return DeviceProfile(model=model, width=width, height=height, density=420, games=gs)


@pytest.fixture
def rich() -> DeviceProfile:
    """A profile using every optional field."""
    game = make_game(
        swipe_ms=150,
        settle=SettleSettings(poll_ms=30, threshold=3.5, still_frames=3, timeout_s=8.0),
        min_confidence=0.6,
        max_distance=9.25,
        hud={"steps": (0.1, 0.05, 0.3, 0.1), "score board": (0.5, 0.05, 0.9, 0.1)},
    )
    plain = make_game("tiles")
    return DeviceProfile("Pixel 7", 1080, 2400, 420, {"match3": game, "tiles": plain})


# -- names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model,name",
    [
        ("Pixel 7", "pixel-7_1080x2400.toml"),
        ("SM-G991B", "sm-g991b_1080x2400.toml"),
        ("  OnePlus/9 Pro! ", "oneplus-9-pro_1080x2400.toml"),
        ("sdk_gphone64_x86_64", "sdk-gphone64-x86-64_1080x2400.toml"),
    ],
)
def test_profile_filename(model, name):
    assert profile_filename(model, 1080, 2400) == name


# -- round trip and atomic save ---------------------------------------------------------


def test_save_load_round_trip_is_equal(tmp_path, rich):
    path = save_profile(rich, tmp_path / "device_profiles" / "pixel-7_1080x2400.toml")
    assert path.exists()
    back = load_profile(path)
    assert back == rich
    assert back.games["match3"].hud["score board"] == (0.5, 0.05, 0.9, 0.1)
    assert back.games["tiles"].max_distance is None
    text = path.read_text()
    assert "[device]" in text and "[[games.match3.exemplars]]" in text and "[games.match3.settle]" in text
    assert "board_bbox = [40, 700, 1040, 1700]" in text
    doc = tomllib.loads(text)
    assert len(doc["games"]["match3"]["exemplars"]) == 5
    assert all(f == round(f, 4) for f in doc["games"]["match3"]["exemplars"][0]["features"])


def test_density_may_be_absent(tmp_path):
    dev = DeviceProfile("Emulator", 1080, 2400, None, {"match3": make_game()})
    assert load_profile(save_profile(dev, tmp_path / "e.toml")) == dev


def test_save_into_a_directory_uses_the_profile_filename(tmp_path, rich):
    assert save_profile(rich, tmp_path) == tmp_path / "pixel-7_1080x2400.toml"


def test_save_leaves_no_temporary_files(tmp_path, rich):
    save_profile(rich, tmp_path / "p.toml")
    save_profile(rich.with_game(make_game("other")), tmp_path / "p.toml")  # overwrite
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]
    assert set(load_profile(tmp_path / "p.toml").games) == {"match3", "tiles", "other"}


def test_a_failed_save_keeps_the_old_file_and_cleans_up(tmp_path, rich, monkeypatch):
    path = save_profile(rich, tmp_path / "p.toml")
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        save_profile(rich.with_game(make_game("other")), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


def test_an_invalid_profile_is_not_written(tmp_path):
    bad = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": make_game(swipe_ms=0)})
    path = tmp_path / "p.toml"
    with pytest.raises(ProfileError, match=r"p\.toml: games\.match3\.swipe_ms: expected an integer"):
        save_profile(bad, path)
    assert list(tmp_path.iterdir()) == []


# -- validation -------------------------------------------------------------------------


def _valid_doc() -> dict:
    return tomllib.loads(dumps_profile(make_device()))


def _set(*keys_and_value):
    *keys, value = keys_and_value

    def edit(doc):
        t = doc
        for k in keys[:-1]:
            t = t[k]
        t[keys[-1]] = value

    return edit


def _drop(*keys):
    def edit(doc):
        t = doc
        for k in keys[:-1]:
            t = t[k]
        del t[keys[-1]]

    return edit


def _exemplar(i, key, value):
    def edit(doc):
        doc["games"]["match3"]["exemplars"][i][key] = value

    return edit


G = ("games", "match3")
N = feature_length()
BROKEN = [
    (_set(*G, "rows", "eight"), 'games.match3.rows: expected an integer 3..12, got "eight"'),
    (_set(*G, "cols", 13), "games.match3.cols: expected an integer 3..12, got 13"),
    (_set(*G, "rows", True), "games.match3.rows: expected an integer 3..12, got true"),
    (_drop("device", "width"), "device.width: missing"),
    (_set("device", "height", 0), "device.height: expected an integer"),
    (_set("device", "density", "high"), 'device.density: expected an integer 1..10000, got "high"'),
    (_set("device", "model", ""), 'device.model: expected a non-empty string, got ""'),
    (_drop("device"), "device: missing"),
    (_set("extra", 1), "extra: unknown key"),
    (_set(*G, "board_bbox", [40, 700, 1040]), "board_bbox: expected 4 integers [x0, y0, x1, y1], got [40, 700, 1040]"),
    (_set(*G, "board_bbox", [40, 700, 1100, 1700]), "games.match3.board_bbox: expected 0 <= x0 < x1 <= 1080"),
    (_set(*G, "board_bbox", [40.5, 700, 1040, 1700]), "board_bbox: expected 4 integers [x0, y0, x1, y1], got [40.5, "),
    (_set(*G, "board_frac", [0.5, 0.29, 0.96, 0.71]), "games.match3.board_frac: gives"),
    (_set(*G, "board_frac", [0.5, 0.29, 0.4, 0.71]), "games.match3.board_frac: expected screen fractions"),
    (_set(*G, "feature_version", 0), "games.match3.feature_version: the exemplars were made with feature version 0"),
    (_drop(*G, "feature_version"), "games.match3.feature_version: missing"),
    (_set(*G, "min_confidence", 1.5), "games.match3.min_confidence: expected a number 0..1, got 1.5"),
    (_set(*G, "max_distance", -1), "games.match3.max_distance: expected a number above 0"),
    (_set(*G, "swipe_ms", "fast"), 'games.match3.swipe_ms: expected an integer 1..10000, got "fast"'),
    (_set(*G, "patch", 5), f"games.match3.exemplars[0].features: expected {feature_length(5)} numbers"),
    (_set(*G, "settle", "thresold", 3), "games.match3.settle.thresold: unknown key"),
    (_set(*G, "settle", "still_frames", 0), "games.match3.settle.still_frames: expected an integer 1..100, got 0"),
    (_set(*G, "settle", "threshold", 0), "games.match3.settle.threshold: expected a number above 0"),
    (_set(*G, "settle", 5), "games.match3.settle: expected a table, got 5"),
    (_set(*G, "hud", {"steps": [0.1, 0.2, 1.3, 0.4]}), "games.match3.hud.steps: expected screen fractions"),
    (_set(*G, "exemplars", []), "games.match3.exemplars: no exemplars"),
    (_drop(*G, "exemplars"), "games.match3.exemplars: missing, expected [[games.match3.exemplars]] tables"),
    (_exemplar(1, "features", [1.0] * (N - 1)), f"games.match3.exemplars[1].features: expected {N} numbers"),
    (_exemplar(2, "features", "1, 2, 3"), f"games.match3.exemplars[2].features: expected an array of {N}"),
    (_exemplar(0, "label", "?"), "games.match3.exemplars[0].label"),
    (_exemplar(0, "label", 7), "games.match3.exemplars[0].label: expected a non-empty string, got 7"),
    (_exemplar(0, "colour", "red"), "games.match3.exemplars[0].colour: unknown key"),
    (_set("games", "match 3", {}), 'games."match 3": a game name is'),
    (_set(*G, "hud", {"steps": "top"}), 'games.match3.hud.steps: expected 4 numbers [x0, y0, x1, y1], got "top"'),
    # finite in TOML but not as the float32 exemplars, or too big for a float at all
    (_exemplar(0, "features", [1e39] + [1.0] * (N - 1)), "games.match3.exemplars[0].features: value 0 is 1e+39"),
    (_exemplar(1, "features", [1.0, -2e6] + [1.0] * (N - 2)), "exemplars[1].features: value 1 is -2000000.0"),
    (_exemplar(0, "features", [10**400] + [1.0] * (N - 1)), "exemplars[0].features: expected an array of"),
    (_set(*G, "max_distance", 10**400), "games.match3.max_distance: expected a number above 0 and at most 1000, got a"),
    (_set(*G, "board_bbox", [10**400, 700, 1040, 1700]), "games.match3.board_bbox: expected 4 integers"),
    (_set(*G, "swipe_ms", 10**400), "games.match3.swipe_ms: expected an integer 1..10000, got a 401-digit number"),
]


@pytest.mark.parametrize("edit,message", BROKEN, ids=[f"{i}-{m.split(':')[0]}" for i, (_, m) in enumerate(BROKEN)])
def test_validation_errors_name_the_file_and_the_key(tmp_path, edit, message):
    doc = _valid_doc()
    edit(doc)
    path = tmp_path / "device_profiles" / "x.toml"
    path.parent.mkdir()
    path.write_text(tomli_w.dumps(doc))
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "agent calibrate" in info.value.hint


def test_toml_syntax_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('[device]\nmodel = "Pixel 7"\nwidth = = 1080\n')
    with pytest.raises(ProfileError, match=r"x\.toml: invalid TOML: .*line 3"):
        load_profile(path)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(ProfileError, match=r"nope\.toml: no such profile file"):
        load_profile(tmp_path / "nope.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe[device]")
    with pytest.raises(ProfileError, match=r"bin\.toml: not UTF-8"):
        load_profile(tmp_path / "bin.toml")


def test_board_frac_may_be_left_out(tmp_path):
    doc = _valid_doc()
    del doc["games"]["match3"]["board_frac"]
    path = tmp_path / "x.toml"
    path.write_text(tomli_w.dumps(doc))
    assert load_profile(path) == make_device()


# -- scaling and reading ----------------------------------------------------------------


def test_scaled_to_recomputes_the_bbox_from_fractions():
    game = make_game()
    big = game.scaled_to(1440, 3200)
    assert big.board_bbox == (53, 933, 1387, 2267)
    assert big.board_frac == game.board_frac
    assert big.exemplars == game.exemplars and big.rows == 8
    assert game.board_bbox == BBOX  # the original is untouched
    assert big.scaled_to(1080, 2400).board_bbox == BBOX


def test_a_saved_profile_reads_the_board_it_learned(tmp_path):
    colours = {"A": (40, 40, 220), "B": (60, 200, 60), "C": (220, 120, 40), ".": (30, 30, 30)}
    labels = [list("ABC"), list("CA."), list("B.A")]
    frame = np.zeros((600, 300, 3), np.uint8)
    bbox = (0, 150, 300, 450)
    for r, row in enumerate(labels):
        for c, lab in enumerate(row):
            frame[150 + r * 100 : 250 + r * 100, c * 100 : c * 100 + 100] = colours[lab]
    ex = exemplars_from_labels(cell_features(frame, bbox, 3, 3), labels)
    dev = DeviceProfile("Sim", 300, 600, None, {"match3": GameProfile.from_bbox("match3", 3, 3, bbox, 300, 600, ex)})
    game = load_profile(save_profile(dev, tmp_path)).games["match3"]
    assert game.feature_version == FEATURE_VERSION
    assert game.read(frame).text == "ABC\nCA.\nB.A"


# -- lookup -----------------------------------------------------------------------------


def _write(directory: Path, dev: DeviceProfile) -> Path:
    return save_profile(dev, directory / dev.filename)


def test_find_exact_beats_same_resolution(tmp_path):
    _write(tmp_path, make_device("Aardvark Phone"))  # sorts first, same resolution
    exact = _write(tmp_path, make_device("Pixel 7"))
    m = find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert (m.how, m.path) == (EXACT, exact)
    assert m.profile == make_device("Pixel 7").games["match3"]
    assert "exact" in m.describe()


def test_find_same_resolution_from_another_model(tmp_path):
    other = _write(tmp_path, make_device("Galaxy S21"))
    m = find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert (m.how, m.path) == (SAME_RESOLUTION, other)
    assert m.profile.board_bbox == BBOX
    assert "Galaxy S21" in m.describe()


def test_find_scaled_from_the_same_aspect_ratio(tmp_path):
    src = _write(tmp_path, make_device("Galaxy S21", 1080, 2400))
    _write(tmp_path, make_device("Tablet", 1600, 2560))  # another aspect ratio: never used
    m = find_profile("Pixel 7 Pro", 1440, 3200, "match3", [tmp_path])
    assert (m.how, m.path) == (SCALED, src)
    assert m.profile.board_bbox == (53, 933, 1387, 2267)
    assert "1080x2400" in m.describe()


def test_scaling_prefers_the_same_model_then_the_nearest_resolution(tmp_path):
    _write(tmp_path, make_device("Galaxy S21", 1080, 2400))
    own = _write(tmp_path, make_device("Pixel 7", 720, 1600))
    assert find_profile("Pixel 7", 1440, 3200, "match3", [tmp_path]).path == own
    near = _write(tmp_path, make_device("Galaxy S21", 1260, 2800))
    assert find_profile("Moto G", 1440, 3200, "match3", [tmp_path]).path == near


def test_earlier_search_dirs_win(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    p2 = _write(second, make_device("Pixel 7"))
    assert find_profile("Pixel 7", 1080, 2400, "match3", [first, second]).path == p2  # a missing dir is fine
    p1 = _write(first, make_device("Pixel 7"))
    assert find_profile("Pixel 7", 1080, 2400, "match3", [first, second]).path == p1


def test_no_profile_is_a_clear_error(tmp_path):
    _write(tmp_path, make_device("Pixel 7", 1080, 2400))
    with pytest.raises(ProfileError) as info:
        find_profile("Pixel 7", 1080, 2340, "match3", [tmp_path])  # another aspect ratio
    assert str(info.value) == "no profile for Pixel 7 1080x2340 and game match3"
    assert "agent calibrate" in info.value.hint and "pixel-7_1080x2340.toml" in info.value.hint


def test_the_phones_file_without_the_game_is_named_in_the_error(tmp_path):
    own = _write(tmp_path, make_device("Pixel 7", games=("tiles",)))
    with pytest.raises(ProfileError) as info:
        find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    msg = str(info.value)
    assert msg.startswith("no profile for Pixel 7 1080x2400 and game match3")
    assert f"{own} has no game 'match3' (it has: tiles)" in msg
    # another phone's profile with the game is still used
    other = _write(tmp_path, make_device("Galaxy S21"))
    assert find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path]).path == other


def test_broken_profiles(tmp_path):
    (tmp_path / "galaxy-s21_1080x2400.toml").write_text("[device]\nmodel = 1\n")
    good = _write(tmp_path, make_device("Moto G"))
    # another phone's broken file does not stop this one, and the match says it was skipped
    match = find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert match.path == good
    assert len(match.skipped) == 1 and "galaxy-s21_1080x2400.toml: device.model" in match.skipped[0]
    assert match.notes() == [f"note: skipped an unreadable profile of another phone: {match.skipped[0]}"]
    with pytest.raises(ProfileError, match="skipped unreadable profiles: .*galaxy-s21"):
        find_profile("Pixel 7", 1080, 2340, "match3", [tmp_path])
    # but the phone's own broken file is reported as it is, with how to replace it
    (tmp_path / "pixel-7_1080x2400.toml").write_text("[device\n")
    with pytest.raises(ProfileError, match=r"pixel-7_1080x2400\.toml: invalid TOML") as info:
        find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert "agent calibrate --game match3 --yes" in info.value.hint


def test_source_says_who_made_a_profile_and_survives_a_round_trip(tmp_path):
    device = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": make_game(source="calibrated"), "tiles": make_game("tiles")})
    back = load_profile(save_profile(device, tmp_path))
    assert back == device
    assert back.games["match3"].source == "calibrated" and back.games["tiles"].source is None
    text = (tmp_path / device.filename).read_text()
    assert 'source = "calibrated"' in text and text.count("source =") == 1


def test_a_bad_source_is_named(tmp_path):
    doc = _valid_doc()
    doc["games"]["match3"]["source"] = 3
    path = tmp_path / "x.toml"
    path.write_text(tomli_w.dumps(doc))
    with pytest.raises(ProfileError, match=r"x\.toml: games\.match3\.source: expected a non-empty string, got 3"):
        load_profile(path)


# -- files that are no profile at all ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000],
    ids=["arrays", "inline tables"],
)
def test_deep_nesting_is_a_profile_error(tmp_path, text):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    with pytest.raises(ProfileError, match=r"deep\.toml: arrays or tables nested too deeply"):
        load_profile(path)


def test_what_is_not_a_regular_file_is_refused_without_reading_it(tmp_path):
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ProfileError, match=r"dir\.toml: is a folder, not a profile file"):
        load_profile(tmp_path / "dir.toml")
    os.mkfifo(tmp_path / "pipe.toml")  # reading it would wait for a writer forever
    with pytest.raises(ProfileError, match=r"pipe\.toml: not a regular file"):
        load_profile(tmp_path / "pipe.toml")
    with open(tmp_path / "big.toml", "wb") as f:
        f.truncate(17 * 1024 * 1024)  # sparse: nothing is written
    with pytest.raises(ProfileError, match=r"big\.toml: 17825792 bytes is not a profile"):
        load_profile(tmp_path / "big.toml")


def test_lookup_skips_each_unreadable_file_of_another_phone(tmp_path):
    good = _write(tmp_path, make_device("Moto G"))
    (tmp_path / "a-deep_1080x2400.toml").write_text("a = " + "[" * 5000 + "]" * 5000)
    (tmp_path / "b-folder_1080x2400.toml").mkdir()
    os.mkfifo(tmp_path / "c-pipe_1080x2400.toml")
    (tmp_path / "d-binary_1080x2400.toml").write_bytes(bytes(range(256)))
    match = find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert match.path == good
    assert [s.split(":")[0] for s in match.skipped] == [
        str(tmp_path / n) for n in ("a-deep_1080x2400.toml", "b-folder_1080x2400.toml", "c-pipe_1080x2400.toml",
                                    "d-binary_1080x2400.toml")
    ]  # fmt: skip
    assert len(match.notes()) == 4


def test_the_phones_own_folder_is_named_not_replaced(tmp_path):
    from agent.vision.profile import save_game_profile

    (tmp_path / "pixel-7_1080x2400.toml").mkdir()
    with pytest.raises(ProfileError, match="is a folder") as info:
        find_profile("Pixel 7", 1080, 2400, "match3", [tmp_path])
    assert "move the folder" in info.value.hint
    with pytest.raises(ProfileError, match="is a folder where this phone's profile file goes"):
        save_game_profile("Pixel 7", 1080, 2400, make_game(), tmp_path)
    assert (tmp_path / "pixel-7_1080x2400.toml").is_dir()


@pytest.mark.parametrize("content", [b"a = " + b"[" * 5000, b"\xff\xfe", b"", b"[device]\nmodel = 1\n"],
                         ids=["deep", "non-UTF-8", "empty", "wrong type"])
def test_save_game_profile_replaces_an_unreadable_file_and_keeps_it_beside(tmp_path, content):
    from agent.vision.profile import save_game_profile, write_game_profile

    path = tmp_path / "pixel-7_1080x2400.toml"
    path.write_bytes(content)
    assert save_game_profile("Pixel 7", 1080, 2400, make_game(), tmp_path) == path
    assert "match3" in load_profile(path).games
    assert (tmp_path / "pixel-7_1080x2400.toml.unreadable").read_bytes() == content
    path.write_bytes(content + b"\n# broken again")
    saved = write_game_profile("Pixel 7", 1080, 2400, make_game(), tmp_path)
    assert (saved.path, saved.kept) == (path, tmp_path / "pixel-7_1080x2400.toml.unreadable-2")
    assert str(saved.kept) in saved.told("written")
    assert write_game_profile("Pixel 7", 1080, 2400, make_game(), tmp_path).kept is None  # a readable file is kept in place
    assert (tmp_path / "pixel-7_1080x2400.toml.unreadable").read_bytes() == content  # the first is not overwritten
    assert (tmp_path / "pixel-7_1080x2400.toml.unreadable-2").read_bytes() == content + b"\n# broken again"


def test_save_profile_refuses_a_folder_named_as_the_file(tmp_path, rich):
    (tmp_path / rich.filename).mkdir()
    with pytest.raises(ProfileError, match="is a folder where this phone's profile file goes"):
        save_profile(rich, tmp_path / rich.filename)
    assert list((tmp_path / rich.filename).iterdir()) == []


# -- colour kinds per class -------------------------------------------------------------------


def test_class_kinds_survive_a_round_trip_and_map_labels(tmp_path):
    device = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": make_game(kinds={"A": "A", "B": "A", "C": "C"})})
    back = load_profile(save_profile(device, tmp_path))
    assert back == device
    gp = back.games["match3"]
    assert gp.kinds == {"A": "A", "B": "A", "C": "C"}
    assert gp.kind_grid([["A", "B", "C"], [".", "?", "B"]]) == [["A", "A", "C"], [".", "?", "A"]]
    text = (tmp_path / device.filename).read_text()
    assert '[games.match3.classes.B]\nkind = "A"' in text


def test_a_profile_without_kinds_reads_each_class_as_its_own_kind(tmp_path):
    doc = _valid_doc()
    assert "classes" not in doc["games"]["match3"]  # profiles written before kinds existed
    path = tmp_path / "old.toml"
    path.write_text(tomli_w.dumps(doc))
    gp = load_profile(path).games["match3"]
    assert gp.kinds == {}
    assert gp.kind_grid([["A", "B", "C", "."]]) == [["A", "B", "C", "."]]
    assert "classes" not in dumps_profile(load_profile(path))


BAD_KINDS = [
    ({"B": {"kind": 1}}, 'games.match3.classes.B.kind: expected letters (a kind such as "A"), "." or "?" (not known yet), got 1'),
    ({"B": {"kind": "A1"}}, 'games.match3.classes.B.kind: expected letters (a kind such as "A"), "." or "?" (not known yet), got "A1"'),
    ({"B": {"kind": ""}}, "games.match3.classes.B.kind: expected letters"),
    ({"B": {"kind": "??"}}, "games.match3.classes.B.kind: expected letters"),
    ({"B": {}}, "games.match3.classes.B: an empty table"),
    ({"B": {"kind": "A", "colour": "red"}}, "games.match3.classes.B.colour: unknown key (expected one of: kind, role, name)"),
    ({"B": {"role": "wall"}}, 'games.match3.classes.B.role: expected one of tile, special, colourless, blocker, hole, layer, got "wall"'),
    ({"B": {"role": 3}}, "games.match3.classes.B.role: expected one of"),
    ({"B": {"name": ""}}, "games.match3.classes.B.name: expected a non-empty string"),
    ({"B": {"name": "x" * 81}}, "games.match3.classes.B.name: expected a printable name of at most 80"),
    ({"B": {"name": "a\nb"}}, "games.match3.classes.B.name: expected a printable name"),
    ({"B": "A"}, 'games.match3.classes.B: expected a table, got "A"'),
    ({"Z": {"kind": "A"}}, "games.match3.classes.Z: no tile class 'Z' among the exemplars (they have: A, B, C)"),
    ({".": {"kind": "A"}}, 'games.match3.classes.".": no tile class'),
]


@pytest.mark.parametrize("classes,message", BAD_KINDS, ids=[m.split(":")[1].strip() for _, m in BAD_KINDS])
def test_bad_class_kinds_are_named(tmp_path, classes, message):
    doc = _valid_doc()
    doc["games"]["match3"]["classes"] = classes
    path = tmp_path / "x.toml"
    path.write_text(tomli_w.dumps(doc))
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_a_class_may_map_to_no_kind(tmp_path):
    doc = _valid_doc()
    doc["games"]["match3"]["classes"] = {"C": {"kind": "."}}
    path = tmp_path / "x.toml"
    path.write_text(tomli_w.dumps(doc))
    assert load_profile(path).games["match3"].kind_grid([["C", "A"]]) == [[".", "A"]]


def test_a_profile_with_kinds_of_unknown_classes_is_not_saved(tmp_path):
    device = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": make_game(kinds={"Q": "A"})})
    with pytest.raises(ProfileError, match="classes.Q: no tile class"):
        save_profile(device, tmp_path)
    assert not list(tmp_path.iterdir())


def test_roles_and_names_round_trip_and_decide_the_kinds_view(tmp_path):
    game = make_game(kinds={"B": "A"}, roles={"B": "special", "C": "blocker"}, names={"A": "red tile", "C": "crate"})
    device = DeviceProfile("Pixel 7", 1080, 2400, None, {"match3": game})
    path = save_profile(device, tmp_path / "p.toml")
    text = path.read_text()
    assert '[games.match3.classes.C]\nrole = "blocker"\nname = "crate"' in text
    back = load_profile(path).games["match3"]
    assert back == game
    assert back.kind_grid([["A", "B", "C", ".", "?"]]) == [["A", "A", "#", ".", "?"]]
    assert (back.role_of("A"), back.role_of("B"), back.role_of("C")) == ("tile", "special", "blocker")


@pytest.mark.parametrize("role,shown", [("hole", "."), ("layer", "."), ("blocker", "#"), ("colourless", "C"), ("tile", "C")])
def test_a_person_sets_a_role_by_editing_the_profile(tmp_path, role, shown):
    doc = _valid_doc()
    doc["games"]["match3"]["classes"] = {"C": {"role": role}}
    path = tmp_path / "x.toml"
    path.write_text(tomli_w.dumps(doc))
    assert load_profile(path).games["match3"].kind_grid([["C", "A"]]) == [[shown, "A"]]
