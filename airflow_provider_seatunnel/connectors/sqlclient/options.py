"""Reading the options of a block that names a database: single values with their defaults, and
messages without secrets (:func:`mask`). Shared by every connector of the SQL family."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi.errors import RuntimeConfigError
from ...spi.options import MISSING, checked_bool, checked_int, lookup
from ...spi.secrets import mask_credentials

DEFAULT_TIMEOUT_SEC = 30


def opt(config: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """The value of ``key`` (a dotted path too), ``default`` when it is missing or null."""
    value = lookup(config, key)
    return default if value is MISSING or value is None else value


def opt_text(config: Mapping[str, Any], key: str) -> str | None:
    """The value of ``key`` as stripped text; None when missing or blank."""
    value = opt(config, key)
    if value is None:
        return None
    stripped = str(value).strip()
    return stripped or None


def config_error(message: str) -> RuntimeConfigError:
    return RuntimeConfigError(message)


def opt_bool(config: Mapping[str, Any], key: str, default: bool) -> bool:
    return checked_bool(opt(config, key), key, default, config_error)


def opt_int(config: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
    return checked_int(opt(config, key), key, default, minimum, config_error)


def mask(message: str, password: str | None = None) -> str:
    """``message`` without secrets: URL ``password=``/``user=`` parameters, ``user:password@``
    user info, and the literal ``password`` wherever it appears."""
    message = mask_credentials(message)
    if password:
        message = message.replace(password, "******")
    return message
