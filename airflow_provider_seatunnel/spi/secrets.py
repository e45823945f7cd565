"""Which option values are secrets, and how they are masked in plans, identities and logs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Option names whose values are secrets: kept out of identities, plans and logs.
SECRET_OPTIONS = frozenset({"password", "username", "user", "auth", "token", "secret", "access_key",
                            "secret_key", "passwd", "credential", "credentials"})
REDACTED = "******"

_URL_SECRET = re.compile(r"(?i)\b(password|passwd|pwd|secret|token|user|username)=([^&;\s]*)")
_URL_USERINFO = re.compile(r"(//[^/:@\s]*):([^@/\s]*)@")


def mask_credentials(text: str) -> str:
    """``text`` with the credentials a connection URL may embed masked: ``password=``/``user=``
    parameters and ``user:password@`` user info."""
    text = _URL_SECRET.sub(lambda m: f"{m.group(1)}={REDACTED}", str(text))
    return _URL_USERINFO.sub(rf"\1:{REDACTED}@", text)


def redact(value: Any, secrets: frozenset[str] = SECRET_OPTIONS) -> Any:
    """A copy of an options tree with the values of the ``secrets`` options (lower-case names)
    replaced by ``******``, and the credentials embedded in URLs masked."""
    if isinstance(value, Mapping):
        return {k: (REDACTED if str(k).lower() in secrets and v is not None else redact(v, secrets))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    if isinstance(value, str) and ("=" in value or "@" in value):
        return mask_credentials(value)  # a URL's embedded credentials
    return value
