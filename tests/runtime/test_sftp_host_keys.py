"""The SFTP server's host key is checked, before any login, against the real OpenSSH server of
tests/file_servers.py: the right fingerprint (or host_key, or a known_hosts entry) is accepted; a
wrong fingerprint and an unknown key are refused as a deterministic config error; checking turned off
explicitly accepts with a warning."""

from __future__ import annotations

import logging

import pytest

from airflow_provider_seatunnel.connectors.remotefile.options import settings, store
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError


@pytest.fixture(scope="module")
def sshd():
    from tests import file_servers

    with file_servers.running("sftp") as server:
        yield server


def _store(server, monkeypatch, tmp_path, **trust):
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh/known_hosts of this machine's user
    s = settings("SftpFile", "sftp", {"host": server.host, "port": server.port, "user": server.user,
                                      "key_file": server.key_file, "path": server.path("hk"), **trust})
    return store(s)


def test_the_right_fingerprint_is_accepted(sshd, monkeypatch, tmp_path):
    client = _store(sshd, monkeypatch, tmp_path, host_key_fingerprint=sshd.host_key_fingerprint)
    try:
        assert client.alive()
    finally:
        client.close()


def test_the_servers_public_key_as_host_key_or_in_known_hosts_is_accepted(sshd, monkeypatch, tmp_path):
    public = (sshd.home / "host.pub").read_text().split()
    _store(sshd, monkeypatch, tmp_path, host_key=public[1]).close()
    known = tmp_path / "kh"
    known.write_text(f"[{sshd.host}]:{sshd.port} {public[0]} {public[1]}\n")
    _store(sshd, monkeypatch, tmp_path, known_hosts=str(known)).close()


def test_a_wrong_fingerprint_is_refused(sshd, monkeypatch, tmp_path):
    with pytest.raises(RuntimeConfigError, match="does not vouch") as e:
        _store(sshd, monkeypatch, tmp_path, host_key_fingerprint="SHA256:" + "A" * 43)
    assert sshd.host_key_fingerprint in str(e.value)


def test_an_unknown_key_is_refused_by_default(sshd, monkeypatch, tmp_path):
    with pytest.raises(RuntimeConfigError, match="refused before logging in"):
        _store(sshd, monkeypatch, tmp_path)


def test_a_key_of_another_host_in_known_hosts_is_refused(sshd, monkeypatch, tmp_path):
    other = (sshd.home / "client.pub").read_text().split()
    known = tmp_path / "kh"
    known.write_text(f"[{sshd.host}]:{sshd.port} {other[0]} {other[1]}\n")
    with pytest.raises(RuntimeConfigError, match="known_hosts"):
        _store(sshd, monkeypatch, tmp_path, known_hosts=str(known))


def test_checking_turned_off_explicitly_accepts_with_a_warning(sshd, monkeypatch, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="seatunnel.remotefile"):
        _store(sshd, monkeypatch, tmp_path, strict_host_key_checking="false").close()
    assert any("strict_host_key_checking = false" in r.getMessage() for r in caplog.records)
