"""A Ray farm's profiles: the driver's go to each run's node folder, and what a run changed
comes back."""

from __future__ import annotations

from agent.farm.profile_sync import changed_profiles, keep_profiles, profile_files, seed_profiles


def test_the_drivers_profiles_seed_a_node_folder_and_only_changes_come_back(tmp_path):
    driver, node = tmp_path / "driver", tmp_path / "node"
    driver.mkdir()
    (driver / "phone_1080x2400.toml").write_bytes(b"[a]\n")
    (driver / "tablet_1600x2560.toml").write_bytes(b"[b]\n")
    (driver / "overlay.png").write_bytes(b"png")  # not a profile: stays
    files, left = profile_files(driver)
    assert set(files) == {"phone_1080x2400.toml", "tablet_1600x2560.toml"} and not left
    seed_profiles(node, files)
    assert (node / "phone_1080x2400.toml").read_bytes() == b"[a]\n" and not (node / "overlay.png").exists()
    assert changed_profiles(node, files) == {}
    # the run learned a look on one phone and calibrated another
    (node / "phone_1080x2400.toml").write_bytes(b"[a]\nlearned = 1\n")
    (node / "new_720x1600.toml").write_bytes(b"[c]\n")
    back = changed_profiles(node, files)
    assert back == {"phone_1080x2400.toml": b"[a]\nlearned = 1\n", "new_720x1600.toml": b"[c]\n"}
    assert keep_profiles(driver, back) == ["new_720x1600.toml", "phone_1080x2400.toml"]
    assert (driver / "phone_1080x2400.toml").read_bytes() == b"[a]\nlearned = 1\n"
    assert keep_profiles(driver, back) == []  # the same again: nothing written
    assert not list(driver.glob(".*"))


def test_a_retry_on_the_node_keeps_what_the_nodes_runs_learned(tmp_path):
    node = tmp_path / "node"
    given = {"phone_1080x2400.toml": b"[a]\n"}
    seed_profiles(node, given)
    (node / "phone_1080x2400.toml").write_bytes(b"[a]\nlearned = 1\n")  # its actor then died
    seed_profiles(node, given)  # the retry
    assert (node / "phone_1080x2400.toml").read_bytes() == b"[a]\nlearned = 1\n"
    assert changed_profiles(node, given) == {"phone_1080x2400.toml": b"[a]\nlearned = 1\n"}


def test_names_that_would_leave_the_folder_are_never_written(tmp_path):
    driver = tmp_path / "driver" / "profiles"
    assert keep_profiles(driver, {"../evil.toml": b"x", ".hidden.toml": b"y", "x.png": b"z"}) == []
    assert not (tmp_path / "driver" / "evil.toml").exists()
    seed_profiles(tmp_path / "node", {"../evil.toml": b"x"})
    assert not (tmp_path / "evil.toml").exists()


def test_a_folder_too_big_for_profiles_leaves_the_rest_out(tmp_path):
    (tmp_path / "a.toml").write_bytes(b"x" * 100)
    (tmp_path / "b.toml").write_bytes(b"y" * 100)
    files, left = profile_files(tmp_path, most_bytes=150)
    assert list(files) == ["a.toml"] and left == ["b.toml"]
    assert profile_files(tmp_path / "none") == ({}, [])
