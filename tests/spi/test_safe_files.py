"""spi.safe_files: a planted symlink or FIFO never redirects (or blocks) a write, O_EXCL means
create-only, new files are 0600 and new directories 0700, and an atomic replace of a symlink
replaces the link itself, never its target."""

from __future__ import annotations

import os
import stat

import pytest

from airflow_provider_seatunnel.spi.safe_files import (
    UnsafePath,
    ensure_private_dir,
    make_private_dir,
    open_write,
    read_regular,
    write_atomic,
    write_json_atomic,
)


@pytest.fixture
def victim(tmp_path):
    """A file someone else owns in spirit: what a planted link points at."""
    path = tmp_path / "victim"
    path.write_text("precious\n")
    return path


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("kwargs", [{}, {"append": True}, {"exclusive": True}])
def test_open_write_refuses_a_symlink_and_leaves_its_target_alone(tmp_path, victim, kwargs):
    link = tmp_path / "out.log"
    link.symlink_to(victim)
    with pytest.raises(OSError) as info, open_write(str(link), what="the log", **kwargs) as f:
        f.write("redirected")
    assert victim.read_text() == "precious\n" and link.is_symlink()
    if not kwargs:  # the plain refusal names the file and says what to do
        assert isinstance(info.value, UnsafePath) and "symlink" in str(info.value) and str(link) in str(info.value)


def test_open_write_refuses_a_dangling_symlink_without_creating_its_target(tmp_path):
    target = tmp_path / "elsewhere" / "created"
    target.parent.mkdir()
    link = tmp_path / "out.log"
    link.symlink_to(target)
    with pytest.raises(UnsafePath), open_write(str(link)) as f:
        f.write("x")
    assert not target.exists()


def test_open_write_refuses_a_fifo_instead_of_blocking(tmp_path):
    fifo = tmp_path / "metrics.json"
    os.mkfifo(fifo)
    with pytest.raises(UnsafePath), open_write(str(fifo)) as f:  # O_NONBLOCK: ENXIO without a reader, no hang
        f.write("x")
    with pytest.raises(UnsafePath):
        read_regular(str(fifo))


def test_exclusive_creates_only(tmp_path):
    path = tmp_path / "lock"
    with open_write(str(path), exclusive=True) as f:
        f.write("one")
    with pytest.raises(FileExistsError), open_write(str(path), exclusive=True) as f:
        f.write("two")
    assert path.read_text() == "one"


def test_new_files_are_0600_and_truncate_or_append_a_regular_file(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "server.log"
        with open_write(str(path)) as f:
            f.write("first\n")
        assert _mode(path) == 0o600
        with open_write(str(path), append=True) as f:
            f.write("second\n")
        assert path.read_text() == "first\nsecond\n"
        with open_write(str(path)) as f:
            f.write("again\n")
        assert path.read_text() == "again\n"
        write_atomic(str(tmp_path / "m.json"), "{}")
        assert _mode(tmp_path / "m.json") == 0o600
    finally:
        os.umask(old)


def test_atomic_replace_of_a_symlink_replaces_the_link_not_its_target(tmp_path, victim):
    link = tmp_path / "metrics.json"
    link.symlink_to(victim)
    write_json_atomic(str(link), {"status": "FINISHED"})
    assert victim.read_text() == "precious\n"
    assert not link.is_symlink() and link.is_file() and _mode(link) == 0o600
    assert '"FINISHED"' in link.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json", "victim"]  # no temporary left


def test_read_regular_refuses_a_symlink_and_a_file_over_the_limit(tmp_path, victim):
    link = tmp_path / "server.pid"
    link.symlink_to(victim)
    with pytest.raises(UnsafePath):
        read_regular(str(link))
    assert read_regular(str(victim)) == b"precious\n"
    with pytest.raises(OSError, match="larger than 3 bytes"):
        read_regular(str(victim), 3)


def test_read_regular_private_refuses_a_file_others_may_read(tmp_path):
    path = tmp_path / "token"
    path.write_text("t0ken")
    os.chmod(path, 0o644)
    with pytest.raises(UnsafePath, match="0644"):
        read_regular(str(path), private=True)
    os.chmod(path, 0o600)
    assert read_regular(str(path), private=True) == b"t0ken"


def test_private_directories_are_0700_and_a_symlinked_one_is_refused(tmp_path):
    old = os.umask(0o022)
    try:
        made = tmp_path / "a" / "private"
        make_private_dir(str(made))
        assert _mode(made) == 0o700
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        ensure_private_dir(str(shared))  # an existing directory of this user: narrowed to 0700
        assert _mode(shared) == 0o700
    finally:
        os.umask(old)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)
    link = tmp_path / "dir-link"
    link.symlink_to(elsewhere)
    for make in (make_private_dir, ensure_private_dir):
        with pytest.raises(UnsafePath):
            make(str(link))
    assert _mode(elsewhere) == 0o755  # not chmod-ed through the link
