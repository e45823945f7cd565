"""Checking an SFTP server's host key before anything is sent to it.

Sources of trust, first that is set wins:

1. ``host_key_fingerprint``: the key's fingerprint as ``ssh-keygen -lf`` prints it
   (``SHA256:<base64>``); a few may be given, separated by commas;
2. ``host_key``: the base64 public key (an Airflow SSH/SFTP connection's ``host_key`` extra), with
   or without its type in front;
3. ``known_hosts``: an OpenSSH known-hosts file (default ``~/.ssh/known_hosts`` when it exists),
   looked up under ``host`` or ``[host]:port``.

A key none of them vouches for is refused (deterministic: a retry meets the same key) unless the
block sets ``strict_host_key_checking = false`` (or the connection ``no_host_key_check = true``):
then the key is accepted and a warning is logged.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError

log = logging.getLogger("seatunnel.remotefile")
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


@dataclass(frozen=True)
class HostKeyPolicy:
    fingerprints: tuple[str, ...] = ()
    host_key: str | None = None
    known_hosts: str | None = None
    strict: bool = True


def _flag(plugin: str, key: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise RuntimeConfigError(f"{plugin}: {key} must be true or false, found {value!r}")


def host_key_policy(plugin: str, config: Mapping[str, Any]) -> HostKeyPolicy:
    """The block's host-key options, checked."""
    raw = config.get("host_key_fingerprint")
    fingerprints = tuple(p.strip() for p in str(raw).split(",") if p.strip()) if raw is not None else ()
    for f in fingerprints:
        if not f.startswith("SHA256:") or len(f) < 20:
            raise RuntimeConfigError(f"{plugin}: host_key_fingerprint {f!r} is not a SHA256 fingerprint: write it as "
                                     "`ssh-keygen -lf <host key>.pub` prints it, e.g. \"SHA256:nThbg6kXUpJW...\"")
    host_key = config.get("host_key")
    strict = True
    if config.get("strict_host_key_checking") is not None:
        strict = _flag(plugin, "strict_host_key_checking", config["strict_host_key_checking"])
    elif config.get("no_host_key_check") is not None:
        strict = not _flag(plugin, "no_host_key_check", config["no_host_key_check"])
    known = config.get("known_hosts")
    return HostKeyPolicy(fingerprints, str(host_key).strip() if host_key else None,
                         str(known) if known else None, strict)


def fingerprint(key_bytes: bytes) -> str:
    """``SHA256:<base64 without padding>`` of a public key blob (OpenSSH's format)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key_bytes).digest()).decode().rstrip("=")


def _known(policy: HostKeyPolicy, host: str, port: int) -> tuple[list[bytes], str] | None:
    path = os.path.expanduser(policy.known_hosts or DEFAULT_KNOWN_HOSTS)
    if not os.path.isfile(path):
        if policy.known_hosts:
            raise RuntimeConfigError(f"known_hosts {policy.known_hosts!r} is not a file")
        return None
    import paramiko

    keys = paramiko.HostKeys(path)
    found = keys.lookup(host if port == 22 else f"[{host}]:{port}") or {}
    return [k.asbytes() for k in found.values()], f"known_hosts {path}"


def check(policy: HostKeyPolicy, plugin: str, host: str, port: int, key: Any) -> None:
    """Refuse ``key`` (a paramiko ``PKey``) unless the policy vouches for it (module docstring)."""
    blob = key.asbytes()
    seen = fingerprint(blob)
    where = f"{plugin}: the SFTP server {host}:{port}"
    trusted: list[bytes] | None = None
    if policy.fingerprints:
        if seen in policy.fingerprints:
            return
        source = "host_key_fingerprint"
    elif policy.host_key:
        trusted, source = [base64.b64decode(policy.host_key.split()[-1])], "host_key"
    else:
        known = _known(policy, host, port)
        trusted, source = known if known else ([], "no known_hosts, host_key_fingerprint or host_key")
    if trusted and blob in trusted:
        return
    if not policy.strict:
        log.warning("%s offered host key %s that %s does not vouch for; accepted because strict_host_key_checking "
                    "= false", where, seen, source)
        return
    raise RuntimeConfigError(f"{where} offered host key {seen}, which {source} does not vouch for: refused before "
                             "logging in. If the key is the server's, set host_key_fingerprint = \"" + seen + "\" "
                             "(or add it to known_hosts); strict_host_key_checking = false turns the check off")
