"""LocalFile's commit records are trusted only when sealed by their target and naming only its
files; the commit lock is private, never a followed symlink, and its wait is bounded.

Real directories and real ``flock``s; no Spark (the records and the lock are exercised directly)."""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.files import fencing, records
from airflow_provider_seatunnel.connectors.files.options import COMMITS_DIR, PENDING_DIR, STAGING_DIR
from airflow_provider_seatunnel.connectors.localfile import commits, source
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.spi.journals import TamperedRecord
from airflow_provider_seatunnel.spi.safe_files import UnsafePath


@pytest.fixture
def layout(tmp_path):
    """A target with a staged file, and a private file and directory outside it."""
    target, outside = tmp_path / "target", tmp_path / "outside"
    staging = target / STAGING_DIR / "run" / "p" / "s" / "t" / "token-1"
    staging.mkdir(parents=True)
    (staging / "part-0").write_text("staged\n")
    outside.mkdir()
    (outside / "private.txt").write_text("secret\n")
    (outside / "keep").mkdir()
    (outside / "keep" / "precious").write_text("x")
    return target, staging, outside


def journal_path(target: Path, name: str = "k.json") -> Path:
    return target / COMMITS_DIR / PENDING_DIR / name


def body(target: Path, staged: Path, **changes) -> dict:
    record = {"run_id": "run", "sink": "LocalFile[0]", "table": "t", "token": 1,
              "moves": [[str(staged / "part-0"), str(target / "out_0.txt")]],
              "marker": str(target / COMMITS_DIR / "run" / "p" / "s" / "t.committed"),
              "staging": str(staged), "base": str(target / STAGING_DIR), "drops": [], "dropped_record": None,
              "trash": None}
    return {**record, **changes}


def plant(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def test_a_sealed_journal_of_the_target_is_rolled_forward(layout):
    target, staging, _ = layout
    records.write_record(str(target), str(journal_path(target)), body(target, staging))
    assert commits.settle_target(str(target)) == {str(target / COMMITS_DIR / "run" / "p" / "s" / "t.committed")}
    assert (target / "out_0.txt").read_text() == "staged\n"
    assert not journal_path(target).exists()


def test_a_planted_journal_moving_a_file_from_outside_is_refused(layout):
    target, staging, outside = layout
    (target / COMMITS_DIR).mkdir(parents=True, exist_ok=True)
    plant(journal_path(target), body(target, staging, moves=[[str(outside / "private.txt"), str(target / "x")]],
                                     staging=None, base=None))
    with pytest.raises(TamperedRecord, match=r"refusing the commit record .*k\.json.*not a sealed record"):
        commits.settle_target(str(target))
    assert (outside / "private.txt").read_text() == "secret\n" and not (target / "x").exists()
    assert journal_path(target).exists()  # left for inspection, never acted on


def test_a_planted_journal_deleting_a_directory_outside_is_refused(layout):
    target, staging, outside = layout
    lost = [[str(target / STAGING_DIR / "gone"), str(target / "never")]]  # staged files lost: the roll-back path
    plant(journal_path(target), body(target, staging, moves=lost, trash=str(outside / "keep")))
    with pytest.raises(TamperedRecord):
        commits.settle_target(str(target))
    assert (outside / "keep" / "precious").exists()


@pytest.mark.parametrize("change", [
    {"trash": "OUTSIDE/keep"},
    {"moves": [["OUTSIDE/private.txt", "TARGET/x"]]},
    {"moves": [["STAGING/part-0", "OUTSIDE/published"]]},
    {"moves": [["STAGING/part-0", "TARGET/../outside/published"]]},
    {"staging": "OUTSIDE", "base": "OUTSIDE"},
    {"drops": [["OUTSIDE/private.txt", "TARGET/.seatunnel-commits/.trash/x"]],
     "trash": "TARGET/.seatunnel-commits/.trash"},
    {"marker": "OUTSIDE/private.txt"},
    {"moves": [["STAGING/part-0", "TARGET/.seatunnel-commits/.journal-key"]]},
    {"drops": [["TARGET/.seatunnel-commits", "TARGET/.seatunnel-commits/.trash/x"]],
     "trash": "TARGET/.seatunnel-commits/.trash"},
])
def test_a_sealed_journal_naming_anything_outside_its_target_is_refused(layout, change):
    """Containment holds even for a journal with a valid seal."""
    target, staging, outside = layout

    def fill(value):
        if isinstance(value, list):
            return [fill(v) for v in value]
        return (value.replace("OUTSIDE", str(outside)).replace("TARGET", str(target))
                .replace("STAGING", str(staging)))

    records.write_record(str(target), str(journal_path(target)),
                         body(target, staging, **{k: fill(v) for k, v in change.items()}))
    with pytest.raises(TamperedRecord, match=r"outside its target|not this sink's|bookkeeping"):
        commits.settle_target(str(target))
    assert (outside / "private.txt").read_text() == "secret\n" and (outside / "keep" / "precious").exists()
    assert (staging / "part-0").exists() and not (outside / "published").exists()


def test_an_edited_journal_is_refused(layout):
    target, staging, _ = layout
    path = journal_path(target)
    records.write_record(str(target), str(path), body(target, staging))
    sealed = json.loads(path.read_text())
    sealed["body"]["moves"][0][1] = str(target / "elsewhere.txt")
    path.write_text(json.dumps(sealed))
    with pytest.raises(TamperedRecord, match="seal does not match"):
        commits.settle_target(str(target))
    assert (staging / "part-0").exists() and not (target / "elsewhere.txt").exists()


def test_a_journal_copied_from_another_target_is_refused(layout, tmp_path):
    target, staging, _ = layout
    other = tmp_path / "other"
    records.write_record(str(other), str(journal_path(other)), body(target, staging))
    plant(journal_path(target), json.loads(journal_path(other).read_text()))
    records.target_key(str(target))
    with pytest.raises(TamperedRecord, match="seal does not match"):
        commits.settle_target(str(target))
    assert (staging / "part-0").exists()


def test_a_journal_renamed_to_another_name_is_refused(layout):
    target, staging, _ = layout
    records.write_record(str(target), str(journal_path(target, "a.json")), body(target, staging))
    journal_path(target, "a.json").rename(journal_path(target, "b.json"))
    with pytest.raises(TamperedRecord):
        commits.settle_target(str(target))


def test_staging_under_the_configured_tmp_path_is_accepted(tmp_path):
    target, base = tmp_path / "target", tmp_path / "tmp" / "seatunnel-staging"
    staging = Path(records.staging_roots(str(target), [str(base)])[1]) / "run" / "token-1"
    staging.mkdir(parents=True)
    (staging / "part-0").write_text("staged\n")
    records.write_record(str(target), str(journal_path(target)), body(target, staging, base=str(base)))
    with pytest.raises(TamperedRecord):  # without the sink's tmp_path, that staging is not the sink's
        commits.settle_target(str(target))
    commits.settle_target(str(target), (str(base),))
    assert (target / "out_0.txt").read_text() == "staged\n"


def test_the_source_ignores_a_planted_journal(layout):
    target, staging, _ = layout
    (target / "data.txt").write_text("row\n")
    records.target_key(str(target))
    plant(journal_path(target), body(target, staging, moves=[["/x", str(target / "data.txt")]]))
    assert source._pending_files(str(target / COMMITS_DIR / PENDING_DIR)) == set()
    records.write_record(str(target), str(journal_path(target, "real.json")),
                         body(target, staging, moves=[["/x", str(target / "data.txt")]]))
    assert source._pending_files(str(target / COMMITS_DIR / PENDING_DIR)) == {str(target / "data.txt")}


# ------------------------------------------------------------------------------------------------
# Fence records, markers and save-mode markers
# ------------------------------------------------------------------------------------------------

def test_tokens_are_sealed_and_a_planted_fence_is_refused(tmp_path):
    marker = tmp_path / "t" / COMMITS_DIR / "run" / "p" / "s" / "t.committed"
    assert [fencing.allocate(str(marker), 1), fencing.allocate(str(marker), 2)] == [1, 2]
    plant(Path(fencing.fence_path(str(marker))), {"token": 99})
    with pytest.raises(TamperedRecord):
        fencing.newest_token(str(marker))


def test_a_symlink_at_a_fence_record_is_not_followed(tmp_path):
    marker = tmp_path / "t" / COMMITS_DIR / "run" / "p" / "s" / "t.committed"
    fencing.allocate(str(marker), 1)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(Path(fencing.fence_path(str(marker))).read_text())
    os.remove(fencing.fence_path(str(marker)))
    os.symlink(elsewhere, fencing.fence_path(str(marker)))
    with pytest.raises(TamperedRecord, match="symlink"):
        fencing.newest_token(str(marker))


def test_a_planted_commit_marker_is_refused(layout):
    target, _, _ = layout
    marker = target / COMMITS_DIR / "run" / "p" / "s" / "t.committed"
    plant(marker, {"run_id": "run"})
    with pytest.raises(TamperedRecord):
        commits.is_committed(str(target), str(marker), str(journal_path(target)))


# ------------------------------------------------------------------------------------------------
# The commit lock
# ------------------------------------------------------------------------------------------------

def test_the_commit_lock_is_private(tmp_path):
    target = tmp_path / "t"
    with fencing.commit_lock(str(target), "LocalFile[0]"):
        pass
    assert stat.S_IMODE(os.stat(fencing.lock_path(str(target))).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(target / COMMITS_DIR).st_mode) == 0o700


def test_a_lock_an_older_release_left_open_is_made_private(tmp_path):
    """A commit directory (0755) and lock (0644) left by an older release are closed to others on first use."""
    target = tmp_path / "t"
    (target / COMMITS_DIR).mkdir(parents=True)
    os.chmod(target / COMMITS_DIR, 0o755)
    Path(fencing.lock_path(str(target))).write_text("")
    os.chmod(fencing.lock_path(str(target)), 0o644)
    with fencing.commit_lock(str(target), "LocalFile[0]"):
        assert stat.S_IMODE(os.stat(fencing.lock_path(str(target))).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(target / COMMITS_DIR).st_mode) == 0o700


def test_a_symlink_at_the_commit_lock_is_refused(tmp_path):
    target, victim = tmp_path / "t", tmp_path / "victim"
    victim.write_text("untouched")
    (target / COMMITS_DIR).mkdir(parents=True)
    os.symlink(victim, fencing.lock_path(str(target)))
    with pytest.raises(UnsafePath, match="symlink"), fencing.commit_lock(str(target), "LocalFile[0]"):
        pass
    assert victim.read_text() == "untouched"


def test_the_lock_wait_times_out_naming_the_holder(tmp_path):
    target = tmp_path / "t"
    (target / COMMITS_DIR).mkdir(parents=True)
    path = fencing.lock_path(str(target))
    with open(path, "w") as holder:
        holder.write("pid 4242 on elsewhere\n")
        holder.flush()
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)  # another open file description: a real contender
        with pytest.raises(fencing.CommitLockTimeout, match=r"0\.3 s .* held by pid 4242 on elsewhere") as info, \
                fencing.commit_lock(str(target), "LocalFile[0]", timeout=0.3):
            pass
    assert isinstance(info.value, PipelineError) and not info.value.deterministic
    assert info.value.plugin == "LocalFile[0]"


def test_commit_lock_timeout_is_checked_when_compiling(config_error, plan_of, tmp_path):
    conf = """
source {{ FakeSource {{ plugin_output = "t", row.num = 1, schema = {{ fields {{ id = int }} }} }} }}
sink {{ LocalFile {{ path = "{path}", file_format_type = "json", commit_lock_timeout = {value} }} }}
"""
    error = config_error(conf.format(path=tmp_path / "o", value='"soon"'))
    assert "commit_lock_timeout must be a number of seconds > 0" in str(error)
    assert "commit_lock_timeout must" in str(config_error(conf.format(path=tmp_path / "o", value="0")))
    plan = plan_of(conf.format(path=tmp_path / "o", value="5"))
    assert commits.lock_timeout(plan.pipelines[0].sinks[0]) == 5.0
