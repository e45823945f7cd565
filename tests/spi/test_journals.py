"""The sealing and containment rules every sink's restore path uses (spi.journals)."""

from __future__ import annotations

import json
import os

import pytest

from airflow_provider_seatunnel.spi import journals
from airflow_provider_seatunnel.spi.journals import TamperedRecord


def test_a_sealed_record_round_trips_and_any_edit_or_rename_is_refused(tmp_path):
    key = journals.local_key(str(tmp_path / ".seatunnel-commits"))
    record = journals.seal({"moves": [["a", "b"]]}, key, ".pending/x.json")
    assert journals.unseal(record, key, ".pending/x.json", "x") == {"moves": [["a", "b"]]}
    edited = json.loads(json.dumps(record))
    edited["body"]["moves"][0][1] = "/etc/passwd"
    with pytest.raises(TamperedRecord, match="seal does not match"):
        journals.unseal(edited, key, ".pending/x.json", "x")
    with pytest.raises(TamperedRecord):  # the same record under another name
        journals.unseal(record, key, ".pending/y.json", "y")
    with pytest.raises(TamperedRecord, match="not a sealed record"):
        journals.unseal({"moves": []}, key, ".pending/x.json", "x")
    other = journals.local_key(str(tmp_path / "other" / ".seatunnel-commits"))
    with pytest.raises(TamperedRecord):  # sealed by another target
        journals.unseal(record, other, ".pending/x.json", "x")


def test_the_local_key_is_private_made_once_and_refused_when_planted(tmp_path):
    commits = tmp_path / ".seatunnel-commits"
    key = journals.local_key(str(commits))
    assert journals.local_key(str(commits)) == key and len(key) == 32
    assert os.stat(commits / journals.KEY_FILE).st_mode & 0o777 == 0o600
    os.chmod(commits / journals.KEY_FILE, 0o644)
    with pytest.raises(TamperedRecord, match="0600"):
        journals.local_key(str(commits))
    planted = tmp_path / "planted"
    (planted / ".seatunnel-commits").mkdir(parents=True)
    (tmp_path / "known").write_bytes(b"k" * 32)
    os.chmod(tmp_path / "known", 0o600)
    os.symlink(tmp_path / "known", planted / ".seatunnel-commits" / journals.KEY_FILE)
    with pytest.raises(TamperedRecord):
        journals.local_key(str(planted / ".seatunnel-commits"))


def test_paths_and_keys_outside_the_target_are_refused(tmp_path):
    root = tmp_path / "out"
    (root / "sub").mkdir(parents=True)
    assert journals.local_path_inside(str(root), "sub/f.csv", "j") == str(root / "sub" / "f.csv")
    assert journals.local_path_inside(str(root), str(root / "f.csv"), "j") == str(root / "f.csv")
    outside = tmp_path / "private"
    outside.mkdir()
    os.symlink(outside, root / "link")
    for bad in ("../private/x", "/etc/passwd", str(outside / "x"), "link/x", "", ".", "sub/../.."):
        with pytest.raises(TamperedRecord):
            journals.local_path_inside(str(root), bad, "j")
    assert journals.key_inside("data/out", "data/out/part-0.csv", "j") == "data/out/part-0.csv"
    for bad in ("data/other/x", "data/out/../other/x", "data/outside", "/data/out/../../x"):
        with pytest.raises(TamperedRecord):
            journals.key_inside("data/out", bad, "j")


def test_a_store_without_modes_needs_a_secret_and_binds_its_key_to_the_target():
    a = journals.derived_key("secret", "s3a://b/out", "S3File s3a://b/out")
    assert a != journals.derived_key("secret", "s3a://b/other", "x") != journals.derived_key("other", "s3a://b/out", "x")
    with pytest.raises(TamperedRecord, match="journal_key"):
        journals.derived_key(None, "s3a://b/out", "S3File s3a://b/out")
