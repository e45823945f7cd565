"""Reading an FtpFile or SftpFile block: the server, the credentials, where the files are, and
how Spark reaches them.

SeaTunnel's options: ``host``, ``port``, ``user``, ``password``, ``path`` (a directory or file on
the server; absolute, ``/`` is the server's root as the login sees it) and, for FtpFile,
``connection_mode`` (``active_local``, the default, or ``passive_local``). The file options
(formats, codecs, names, partitions, save modes, filters) are LocalFile's.

Or an Airflow connection, named by ``ftp_conn_id`` (type ``ftp``: host, port, login, password,
extra ``passive``) or ``sftp_conn_id`` (type ``sftp``/``ssh``: host, port, login, password, extra
``key_file`` or ``private_key``, and ``private_key_passphrase``). The options a block sets win.

How Spark reaches the files:

* **SFTP**: Spark reads and writes ``sftp://user@host:port/...`` through Hadoop's SFTP file
  system, on the executors, in parallel. The password and key file are set in the session's
  Hadoop configuration when the block runs: never on a command line, never in a log. Hadoop's
  SFTP client does not check the server's host key, so the driver's ``paramiko`` client checks it
  (:mod:`.hostkeys`) before any login and before Spark connects: an unknown or mismatching key
  fails the run before either side sends a credential.
* **FTP**: Hadoop's FTP file system can neither seek (Parquet, ORC and split text reads need it)
  nor rename across directories (Spark's commit needs it), so the driver moves the files: the
  source downloads them into a local spool directory that Spark reads, the sink's Spark write goes
  into a local spool that the driver uploads into the staging directory on the server. The spool
  (under ``spark.local.dir``, else the system's temp directory) must be reachable by the
  executors: local mode, or a cluster on one host (a shared directory otherwise).
"""

from __future__ import annotations

import logging
import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ...spi.errors import RuntimeConfigError
from ..files.optionspec import FTP_SPEC, SFTP_SPEC
from ..files.s3options import Traits
from .hostkeys import HostKeyPolicy, host_key_policy

log = logging.getLogger("seatunnel.remotefile")

FTP_CONN_OPTION = "ftp_conn_id"
SFTP_CONN_OPTION = "sftp_conn_id"
CONNECTION_MODES = ("active_local", "passive_local")
SFTP_FS_CLASS = "org.apache.hadoop.fs.sftp.SFTPFileSystem"
#: the options that say where the server is and who logs in (a ``tables_configs`` item takes them from its block)
SHARED = ("host", "port", "user", "password", "connection_mode", FTP_CONN_OPTION, SFTP_CONN_OPTION, "key_file",
          "private_key", "host_key_fingerprint", "host_key", "known_hosts", "strict_host_key_checking",
          "no_host_key_check")


@dataclass(frozen=True)
class ServerSettings:
    """Where a block's files are and how to log in. ``prefix`` is ``path`` as a key: no leading or
    trailing '/'; keys are paths from the server's root."""

    plugin: str
    scheme: str  # ftp, sftp
    host: str
    port: int
    user: str
    prefix: str
    passive: bool = False
    password: str | None = field(default=None, repr=False)
    key_file: str | None = field(default=None, repr=False)
    host_keys: HostKeyPolicy = field(default_factory=HostKeyPolicy)

    @property
    def traits(self) -> Traits:
        return Traits(plugin=self.plugin, scheme=self.scheme)

    @property
    def bucket(self) -> str:
        """The server, as messages name it."""
        return f"{self.user}@{self.host}:{self.port}"

    def where(self, key: str = "") -> str:
        """``key`` (default: the prefix) as a URI for messages and logs (no credentials)."""
        return f"{self.scheme}://{self.bucket}/{key if key else self.prefix}"

    def key(self, *parts: str) -> str:
        return posixpath.join(self.prefix, *parts) if self.prefix else posixpath.join(*parts)

    def uri(self, key: str) -> str:
        """The URI Spark reads and writes ``key`` with (SFTP only: FTP goes through a spool)."""
        return f"sftp://{quote(self.user, safe='')}@{self.host}:{self.port}/{key}"


def config_error(plugin: str, message: str) -> RuntimeConfigError:
    return RuntimeConfigError(f"{plugin}: {message}")


#: each scheme's spec (the file options and the server's)
_SPECS = {"ftp": FTP_SPEC, "sftp": SFTP_SPEC}


def key_prefix(plugin: str, path: Any) -> str:
    """``path`` as a key: no leading or trailing '/', no '.' or '..' segments."""
    text = str(path or "").strip()
    if not text:
        raise config_error(plugin, "path is required")
    parts = [p for p in text.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise config_error(plugin, f"path {text!r} may not hold '.' or '..' segments")
    return "/".join(parts)


def settings(plugin: str, scheme: str, config: Mapping[str, Any]) -> ServerSettings:
    """The server settings of a block (a table's options), typed by the plugin's spec."""
    o = _SPECS[scheme].run_time(config)
    host, user = o["host"], o["user"]
    if not host or not user:
        raise config_error(plugin, "host and user are required (or name an Airflow connection with "
                                   f"{FTP_CONN_OPTION if scheme == 'ftp' else SFTP_CONN_OPTION})")
    port = o["port"] if o["port"] is not None else 21 if scheme == "ftp" else 22
    try:
        port = int(port)
    except (TypeError, ValueError):
        raise config_error(plugin, f"port {port!r} is not a number") from None
    mode = str(o.get("connection_mode") or "active_local").strip().lower()
    key_file = o.get("key_file")
    if not key_file and o.get("private_key"):
        key_file = _key_file(o["private_key"])
    return ServerSettings(plugin=plugin, scheme=scheme, host=host.strip(), port=port, user=user,
                          prefix=key_prefix(plugin, o["path"]), passive=mode == "passive_local",
                          password=o["password"], key_file=key_file or None,
                          host_keys=host_key_policy(plugin, config))


def _key_file(text: str) -> str:
    """A private key given as text (an Airflow connection's ``private_key``) as a file only this
    user can read, in a private temp directory removed when the process ends (one per key)."""
    import atexit
    import hashlib
    import shutil
    import tempfile

    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    known = _KEY_FILES.get(digest)
    if known and os.path.isfile(known):
        return known
    directory = tempfile.mkdtemp(prefix="seatunnel-key-")
    path = os.path.join(directory, "id")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
    atexit.register(shutil.rmtree, directory, True)
    _KEY_FILES[digest] = path
    return path


_KEY_FILES: dict[str, str] = {}


def store(s: ServerSettings) -> Any:
    """A logged-in client of the block's server (:mod:`.clients`)."""
    from .clients import FtpStore, SftpStore

    try:
        if s.scheme == "ftp":
            client: Any = FtpStore(s.host, s.port, s.user, s.password or "", s.passive)
        else:
            client = SftpStore(s.host, s.port, s.user, s.password, s.key_file, s.host_keys, plugin=s.plugin)
    except RuntimeConfigError:
        raise
    except Exception as e:
        raise _login_error(s, e) from e
    client.traits = s.traits
    client.journal_secret = s.password or _key_text(s.key_file)
    return client


def _key_text(path: str | None) -> str | None:
    """The private key in ``path`` (the secret its commit records are keyed by when there is no
    password); None when there is none or it cannot be read."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 16) or None
    except OSError:
        return None


def _login_error(s: ServerSettings, error: Exception) -> Exception:
    """A refused login is the config's fault (deterministic); a refused connection is transient."""
    text = str(error)
    if "530" in text[:4] or type(error).__name__ in ("AuthenticationException", "BadAuthenticationType"):
        return config_error(s.plugin, f"{s.where('')} refused the login of {s.user!r}: check user and password "
                                      "(or the key file)")
    return OSError(f"{s.plugin}: cannot reach {s.where('')}: {text or type(error).__name__}")


def spool_root(spark: Any) -> str:
    """Where FTP spools live: the first of ``spark.local.dir``, else the system's temp directory."""
    import tempfile

    local = spark.conf.get("spark.local.dir", None) if spark is not None else None
    root = str(local).split(",")[0] if local else tempfile.gettempdir()
    os.makedirs(root, exist_ok=True)
    return root


def ensure_sftp(spark: Any, s: ServerSettings) -> None:
    """Make ``sftp://`` usable for the block's server in the session: Hadoop's SFTP file system,
    the password for (host, user) and the key file."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("fs.sftp.impl", SFTP_FS_CLASS)
    if s.password is not None and not s.key_file:
        conf.set(f"fs.sftp.password.{s.host}.{s.user}", s.password)
    if s.key_file:
        conf.set("fs.sftp.keyfile", os.path.expanduser(s.key_file))
