"""The driver's clients of a file server: FTP (the standard library's ``ftplib``) and SFTP
(``paramiko``), each the primitives of :class:`..files.filestore.FileStore`.

FTP lists with ``MLSD`` (RFC 3659) and falls back to a Unix ``LIST`` for servers without it
(vsftpd); a refused command (a 5xx reply) on an absent file or a non-empty target is "not there"
or "refused", never an error. SFTP renames with the protocol's plain ``rename`` (never OpenSSH's
``posix-rename``, which would replace a non-empty target).
"""

from __future__ import annotations

import contextlib
import ftplib
import io
import os
import posixpath
import stat
from typing import Any

from ..files.filestore import FileStore
from .hostkeys import HostKeyPolicy, check


def _path(key: str) -> str:
    return "/" + key.lstrip("/")


class FtpStore(FileStore):
    """A file server over FTP: ``passive`` picks passive data connections (``passive_local``),
    else active (``active_local``, SeaTunnel's default)."""

    def __init__(self, host: str, port: int, user: str, password: str, passive: bool, timeout: float = 60.0):
        self.name = f"ftp://{user}@{host}:{port}"
        self._ftp = ftplib.FTP(timeout=timeout)
        self._ftp.connect(host, port)
        self._ftp.login(user, password)
        self._ftp.set_pasv(passive)
        self._mlsd = True

    def alive(self) -> bool:
        try:
            self._ftp.voidcmd("NOOP")
            return True
        except Exception:
            return False

    def _list_lines(self, path: str) -> list[str]:
        lines: list[str] = []
        self._ftp.retrlines(f"LIST -a {path}" if path != "/" else "LIST -a", lines.append)
        return lines

    def entries(self, directory: str) -> list[tuple[str, bool, int]] | None:
        path = _path(directory)
        if self._mlsd:
            try:
                found = []
                for name, facts in self._ftp.mlsd(path, facts=["type", "size"]):
                    kind = facts.get("type", "").lower()
                    if kind in ("cdir", "pdir") or name in (".", ".."):
                        continue
                    found.append((name, kind == "dir", int(facts.get("size", 0) or 0)))
                return found
            except ftplib.error_perm as e:
                if not str(e).startswith("500") and not str(e).startswith("502"):
                    return None  # 550: no such directory
                self._mlsd = False
        try:
            self._ftp.cwd(path)
        except ftplib.error_perm:
            return None
        self._ftp.cwd("/")
        return [parsed for line in self._list_lines(path) if (parsed := _unix_entry(line)) is not None]

    def mkdirs(self, directory: str) -> None:
        parts = [p for p in directory.split("/") if p]
        for i in range(1, len(parts) + 1):
            with contextlib.suppress(ftplib.error_perm):  # exists (or a later step says what is wrong)
                self._ftp.mkd(_path("/".join(parts[:i])))

    def put(self, key: str, data: bytes) -> None:
        self._ftp.storbinary(f"STOR {_path(key)}", io.BytesIO(data))

    def get(self, key: str) -> bytes | None:
        out = io.BytesIO()
        try:
            self._ftp.retrbinary(f"RETR {_path(key)}", out.write)
        except ftplib.error_perm:
            return None
        return out.getvalue()

    def rename(self, src: str, dst: str) -> bool:
        try:
            self._ftp.rename(_path(src), _path(dst))
            return True
        except ftplib.error_perm:
            return False

    def remove(self, key: str) -> None:
        with contextlib.suppress(ftplib.error_perm):
            self._ftp.delete(_path(key))

    def rmdir(self, directory: str) -> None:
        with contextlib.suppress(ftplib.error_perm):
            self._ftp.rmd(_path(directory))

    def upload(self, local: str, key: str) -> None:
        with open(local, "rb") as fh:
            self._ftp.storbinary(f"STOR {_path(key)}", fh)

    def download(self, key: str, local: str) -> None:
        with open(local, "wb") as fh:
            self._ftp.retrbinary(f"RETR {_path(key)}", fh.write)

    def close(self) -> None:
        try:
            self._ftp.quit()
        except Exception:
            self._ftp.close()


def _unix_entry(line: str) -> tuple[str, bool, int] | None:
    """(name, is a directory, size) of a Unix ``ls -l`` line; None for ``.``, ``..``, links and totals."""
    fields = line.split(None, 8)
    if len(fields) < 9 or fields[0][:1] not in ("d", "-"):
        return None
    name = fields[8]
    if name in (".", ".."):
        return None
    return name, fields[0].startswith("d"), int(fields[4]) if fields[4].isdigit() else 0


class SftpStore(FileStore):
    """A file server over SFTP (``paramiko``): a password, or a private key file, or both."""

    def __init__(self, host: str, port: int, user: str, password: str | None, key_file: str | None,
                 host_keys: HostKeyPolicy | None = None, timeout: float = 60.0, plugin: str = "SftpFile"):
        import paramiko

        self.name = f"sftp://{user}@{host}:{port}"
        self._transport = paramiko.Transport((host, port))
        self._transport.banner_timeout = timeout
        pkey = _private_key(key_file, password) if key_file else None
        self._transport.start_client(timeout=timeout)
        try:  # the host key is checked before any credential is sent
            check(host_keys or HostKeyPolicy(), plugin, host, port, self._transport.get_remote_server_key())
        except Exception:
            self._transport.close()
            raise
        if pkey is not None:
            try:
                self._transport.auth_publickey(user, pkey)
            except paramiko.AuthenticationException:
                if not password:
                    raise
        elif password is not None:
            self._transport.auth_password(user, password)
        if not self._transport.is_authenticated() and password and pkey is not None:
            self._transport.auth_password(user, password)
        client = paramiko.SFTPClient.from_transport(self._transport)
        if client is None:
            raise OSError(f"{self.name}: the server opened no SFTP channel")
        self._sftp = client

    def alive(self) -> bool:
        return bool(self._transport.is_active())

    def entries(self, directory: str) -> list[tuple[str, bool, int]] | None:
        try:
            attrs = self._sftp.listdir_attr(_path(directory))
        except FileNotFoundError:
            return None
        return [(a.filename, stat.S_ISDIR(a.st_mode or 0), int(a.st_size or 0)) for a in attrs]

    def mkdirs(self, directory: str) -> None:
        parts = [p for p in directory.split("/") if p]
        for i in range(1, len(parts) + 1):
            with contextlib.suppress(OSError):
                self._sftp.mkdir(_path("/".join(parts[:i])))

    def put(self, key: str, data: bytes) -> None:
        with self._sftp.open(_path(key), "wb") as fh:
            fh.write(data)

    def get(self, key: str) -> bytes | None:
        try:
            with self._sftp.open(_path(key), "rb") as fh:
                return bytes(fh.read())
        except FileNotFoundError:
            return None

    def rename(self, src: str, dst: str) -> bool:
        try:
            self._sftp.rename(_path(src), _path(dst))
            return True
        except OSError:
            return False

    def remove(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._sftp.remove(_path(key))

    def rmdir(self, directory: str) -> None:
        with contextlib.suppress(OSError):
            self._sftp.rmdir(_path(directory))

    def upload(self, local: str, key: str) -> None:
        self._sftp.put(local, _path(key))

    def download(self, key: str, local: str) -> None:
        self._sftp.get(_path(key), local)

    def close(self) -> None:
        self._sftp.close()
        self._transport.close()


def _private_key(key_file: str, passphrase: str | None) -> Any:
    """The private key in ``key_file`` (RSA, ECDSA or Ed25519; ``passphrase`` tried when encrypted)."""
    import paramiko

    path = os.path.expanduser(key_file)
    last: Exception | None = None
    for kind in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return kind.from_private_key_file(path)
        except paramiko.PasswordRequiredException:
            return kind.from_private_key_file(path, password=passphrase)
        except paramiko.SSHException as e:
            last = e
    raise OSError(f"{posixpath.basename(path)} holds no private key paramiko reads: {last}")
