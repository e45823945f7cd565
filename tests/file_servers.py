"""Private file servers for the FtpFile and SftpFile tests, on free loopback ports.

* **FTP**: pyftpdlib's server (PyPI) in its own process, one user with a random password whose
  home is a temp directory (the FTP root ``/``).
* **SFTP**: Debian's OpenSSH ``sshd`` on a private port with its own host key and config: the
  current user logs in with a fresh ECDSA key (PEM, which Hadoop's JSch client reads); password
  logins are off (a test cannot give a system user a password). The SFTP root is the machine's
  ``/``: the files live in a temp directory, ``root`` here.

Tests look at the files directly on disk, never through the code under test.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .servers import free_port, stop_process

SSHD = "/usr/sbin/sshd"
INSTALL_HINT = ("the SftpFile tests need Debian's openssh-server: run `make test-deps`, or as root "
                "`apt-get install -y --no-install-recommends openssh-server`")

_FTP_MAIN = """
import sys
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer
user, password, home, port = sys.argv[1:5]
authorizer = DummyAuthorizer()
authorizer.add_user(user, password, home, perm="elradfmwMT")
FTPHandler.authorizer = authorizer
FTPHandler.permit_foreign_addresses = False
server = FTPServer(("127.0.0.1", int(port)), FTPHandler)
server.serve_forever()
"""


class ServerUnavailable(RuntimeError):
    """The server is not installed, or it does not start."""


@dataclass
class FileServer:
    scheme: str
    root: Path  # where the files are on disk
    port: int
    user: str
    process: subprocess.Popen
    password: str | None = None
    key_file: str | None = None
    home: Path | None = None  # the server's '/' for FTP
    host: str = "127.0.0.1"
    host_key_fingerprint: str | None = None  # SFTP: the server's key as ssh-keygen -lf prints it

    def path(self, *parts: str) -> str:
        """The server-side path of ``parts`` under the file root."""
        base = "/" if self.scheme == "ftp" else str(self.root) + "/"
        return base + "/".join(parts)

    def local(self, *parts: str) -> Path:
        """The same file on this machine's disk."""
        return self.root.joinpath(*parts)

    def options(self) -> str:
        """HOCON options of a block logging in to this server."""
        auth = f'password = "{self.password}"' if self.password else f'key_file = "{self.key_file}"'
        trust = f', host_key_fingerprint = "{self.host_key_fingerprint}"' if self.host_key_fingerprint else ""
        return f'host = "{self.host}", port = {self.port}, user = "{self.user}", {auth}{trust}'

    def stop(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.home or self.root, ignore_errors=True)


def _wait_port(port: int, process: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            if s.recv(64):  # both greet first
                return True
        time.sleep(0.05)
    return False


def start_ftp(timeout: float = 20.0) -> FileServer:
    home = Path(tempfile.mkdtemp(prefix="st-ftp-"))
    user, password = "seatunnel", "pw-" + secrets.token_hex(10)
    for _ in range(3):
        port = free_port()
        process = subprocess.Popen([sys.executable, "-c", _FTP_MAIN, user, password, str(home), str(port)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # it logs every command
        if _wait_port(port, process, timeout):
            return FileServer("ftp", home, port, user, process, password=password, home=home)
        process.kill()
        process.wait(10)
    shutil.rmtree(home, ignore_errors=True)
    raise ServerUnavailable("the FTP server (pyftpdlib) did not start: is pyftpdlib installed (pip install pyftpdlib)?")


def start_sftp(timeout: float = 20.0) -> FileServer:
    if not os.access(SSHD, os.X_OK):
        raise ServerUnavailable(f"{SSHD} not found: {INSTALL_HINT}")
    home = Path(tempfile.mkdtemp(prefix="st-sftp-"))
    os.chmod(home, 0o755)
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-m", "PEM", "-N", "", "-f", str(home / name)], check=True)
    (home / "authorized_keys").write_text((home / "client.pub").read_text())
    root = home / "files"
    root.mkdir()
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    for _ in range(3):
        port = free_port()
        (home / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {home}/host\nPidFile {home}/sshd.pid\n"
            f"AuthorizedKeysFile {home}/authorized_keys\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
            "Subsystem sftp internal-sftp\nAllowTcpForwarding no\nX11Forwarding no\nMaxStartups 50\n"
            "MaxSessions 50\n")
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(home / "sshd_config")],
                                   stdout=subprocess.DEVNULL, stderr=open(home / "sshd.log", "wb"))  # noqa: SIM115
        if _wait_port(port, process, timeout):
            printed = subprocess.run(["ssh-keygen", "-lf", str(home / "host.pub")], check=True,
                                     capture_output=True, text=True).stdout.split()
            return FileServer("sftp", root, port, getpass.getuser(), process, key_file=str(home / "client"),
                              home=home, host_key_fingerprint=printed[1])
        process.kill()
        process.wait(10)
    text = (home / "sshd.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(home, ignore_errors=True)
    raise ServerUnavailable(f"sshd did not start: {text}")


@contextlib.contextmanager
def running(scheme: str) -> Iterator[FileServer]:
    import pytest

    try:
        server = start_ftp() if scheme == "ftp" else start_sftp()
    except ServerUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()
