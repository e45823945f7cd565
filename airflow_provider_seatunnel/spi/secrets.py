"""Which values are secrets, and how they are masked in plans, identities, logs and metrics.

A value is a secret when its key is one of these, compared case-insensitively:

* a name in :data:`SECRET_OPTIONS`, or one the block's connector declares
  (:attr:`.connector.Connector.secrets`), exactly;
* a key Spark's redaction rule matches (a regex search, as Spark applies it): the default of
  ``spark.redaction.regex`` (:data:`SPARK_REDACTION_REGEX`), and the job's own
  ``spark.redaction.regex`` when its ``env`` sets one. The job's pattern adds to the default,
  never replaces it: a job can hide more, never show what the default hides.

For the job's ``spark.*`` settings, as Spark does for its configuration, a *value* the rule
matches hides that setting too. A hidden value shows as :data:`REDACTED`; the credentials a
connection URL embeds are masked wherever a string is shown (:func:`mask_credentials`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

#: Option names whose values are secrets: kept out of identities, plans and logs.
SECRET_OPTIONS = frozenset({"password", "username", "user", "auth", "token", "secret", "access_key",
                            "secret_key", "passwd", "credential", "credentials"})
REDACTED = "******"
#: Spark's default ``spark.redaction.regex`` (Spark 4).
SPARK_REDACTION_REGEX = r"(?i)secret|password|token|access[.]?key"
#: The ``env`` key a job sets its own redaction regex with.
REDACTION_REGEX_KEY = "spark.redaction.regex"
#: OpenLineage transport settings that carry credentials (``...auth.apiKey``, ``...headers.*``),
#: which Spark's default rule does not hide; ``auth.type`` is not a secret.
OPENLINEAGE_SECRET_REGEX = r"(?i:openlineage[.]transport[.].*([.]auth[.](?!type$)|apikey|[.]headers[.]))"
OPENLINEAGE_SECRET = re.compile(OPENLINEAGE_SECRET_REGEX)
#: Secret values shorter than this are hidden where their key is known, never searched for in free
#: text (a one-letter password would mask every such letter of a message).
MIN_SCRUBBED_LENGTH = 5

#: Parameter names (of a URL's query ``?a=b&c=d``, a JDBC URL's ``;key=value`` properties, or a
#: ``key=value`` word in free text) whose values are credentials: Spark's default redaction rule
#: plus the credential-like words connection URLs use. Matched against the URL-decoded name.
CREDENTIAL_PARAM_REGEX = (r"(?i)secret|passw|pwd|token|access[._-]?key|api[._-]?key|signature|credential"
                          r"|private[._-]?key|session[._-]?key|(?:^|[._-])(?:sig|auth|user|username)$")
CREDENTIAL_PARAM = re.compile(CREDENTIAL_PARAM_REGEX)
_URL_PARAM = re.compile(r"(?P<pre>^|[?&;\s,(])(?P<name>[^=&;?#\s/,()]+)=(?P<value>[^&;#\s,)]*)")
# ``scheme://user:password@host``: the password may hold any character but a space, ``/``, ``?`` or
# ``#`` (RFC 3986 has ``@`` and ``/`` percent-encoded; an ``@`` left raw is covered up to the last one).
_URL_USERINFO = re.compile(r"(?P<pre>//[^/:@\s?#]*):(?P<pw>[^\s/?#]*)@")
# Oracle's ``jdbc:oracle:thin:user/password@host``.
_ORACLE_USERINFO = re.compile(r"(?i)(?P<pre>:oracle:[a-z0-9]+:[^/@:\s]+)/(?P<pw>[^@\s]*)@")


@dataclass(frozen=True)
class Redaction:
    """Spark's redaction rule: a key (or a ``spark.*`` value) any of ``patterns`` finds is secret."""

    patterns: tuple[re.Pattern[str], ...]

    def matches(self, text: Any) -> bool:
        return any(p.search(str(text)) for p in self.patterns)


SPARK_RULE = Redaction((re.compile(SPARK_REDACTION_REGEX),))


@functools.lru_cache(maxsize=64)
def _with_job_pattern(pattern: str) -> Redaction:
    try:
        return Redaction((*SPARK_RULE.patterns, re.compile(pattern)))
    except re.error:
        return SPARK_RULE  # Spark itself refuses such a job at start-up; the default still hides


def redaction(env: Mapping[str, Any] | None = None) -> Redaction:
    """The redaction rule of a job whose ``env`` is ``env``: Spark's default, plus the job's own
    ``spark.redaction.regex`` when set."""
    own = (env or {}).get(REDACTION_REGEX_KEY)
    return _with_job_pattern(str(own)) if own not in (None, "") else SPARK_RULE


def is_secret(key: Any, secrets: frozenset[str] = SECRET_OPTIONS, rule: Redaction = SPARK_RULE) -> bool:
    """Whether the value of option ``key`` is a secret: its name is one of ``secrets`` (lower-case)
    or ``rule`` matches it."""
    return str(key).lower() in secrets or rule.matches(key)


def is_credential_param(name: str) -> bool:
    """Whether a URL parameter named ``name`` (percent-encoded or not) carries a credential
    (:data:`CREDENTIAL_PARAM_REGEX`)."""
    return bool(CREDENTIAL_PARAM.search(unquote(name)))


def _param(match: re.Match[str]) -> str:
    if not match.group("value") or not is_credential_param(match.group("name")):
        return match.group(0)
    return f"{match.group('pre')}{match.group('name')}={REDACTED}"


def mask_credentials(text: str) -> str:
    """``text`` with every credential a URL in it may embed masked, by shape rather than by a list
    of option names: the password of a ``scheme://user:password@`` user info (and Oracle's
    ``user/password@``), and the value of every query, ``;``-property or ``key=value`` parameter
    whose name is credential-like (:func:`is_credential_param`). Text without such credentials is
    returned unchanged."""
    text = _URL_PARAM.sub(_param, str(text))
    text = _URL_USERINFO.sub(lambda m: f"{m.group('pre')}:{REDACTED}@", text)
    return _ORACLE_USERINFO.sub(lambda m: f"{m.group('pre')}/{REDACTED}@", text)


def public_uri(uri: str) -> str:
    """``uri`` as a public name (an asset URI, a lineage dataset): its user info dropped when it
    holds a password (``s3a://KEY:SECRET@bucket`` names ``s3a://bucket``), Oracle's
    ``user/password@`` dropped, and credential parameters masked (:func:`mask_credentials`)."""
    text = _URL_USERINFO.sub(lambda m: m.group("pre").split("//", 1)[0] + "//", str(uri))
    text = _ORACLE_USERINFO.sub(lambda m: m.group("pre").rsplit(":", 1)[0] + ":@", text)
    return mask_credentials(text)


def public_identity(value: Any, secrets: frozenset[str] = SECRET_OPTIONS) -> Any:
    """The masked identity of an options tree: what an identifier (a task id's hash, an asset name)
    may be derived from. Secret options are hidden and URL credentials masked (:func:`redact`), so
    two configs that differ only in a credential share every identifier, and no identifier can be
    searched for a credential."""
    return redact(value, secrets)


def redact(value: Any, secrets: frozenset[str] = SECRET_OPTIONS, rule: Redaction = SPARK_RULE) -> Any:
    """A copy of an options tree with the values of secret keys (:func:`is_secret`) replaced by
    ``******``, and the credentials embedded in URLs masked."""
    if isinstance(value, Mapping):
        return {k: (REDACTED if v is not None and is_secret(k, secrets, rule) else redact(v, secrets, rule))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets, rule) for v in value]
    if isinstance(value, str) and ("=" in value or "@" in value):
        return mask_credentials(value)  # a URL's embedded credentials
    return value


def redact_env(env: Mapping[str, Any], rule: Redaction | None = None) -> dict[str, Any]:
    """A job's ``env`` as it may be shown: :func:`redact` by the job's rule (:func:`redaction`), and
    each ``spark.*`` setting whose value the rule matches hidden whole."""
    rule = rule or redaction(env)
    shown = redact(env, SECRET_OPTIONS, rule)
    for key, value in env.items():
        if str(key).startswith("spark.") and isinstance(value, str) and rule.matches(value):
            shown[key] = REDACTED
    return shown


def hidden(full: Any, shown: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """``(path, value)`` of each value of the tree ``full`` that its redacted copy ``shown`` hides or
    masks: what redaction keeps out of sight, where it is (keys and list indexes from the root)."""
    if isinstance(full, Mapping) and isinstance(shown, Mapping):
        for k, v in full.items():
            yield from hidden(v, shown.get(k), (*path, k))
    elif isinstance(full, list) and isinstance(shown, list) and len(full) == len(shown):
        for i, (a, b) in enumerate(zip(full, shown, strict=True)):
            yield from hidden(a, b, (*path, i))
    elif full != shown or type(full) is not type(shown):
        yield path, full


def embedded(value: Any, rule: Redaction = SPARK_RULE) -> list[str]:
    """The values of the ``name=value`` words in ``value`` (a string) whose name ``rule`` matches,
    such as the password in ``-Djavax.net.ssl.trustStorePassword=...``: a hidden setting's parts
    that a log may show alone."""
    if not isinstance(value, str):
        return []
    pairs = (word.split("=", 1) for word in value.split() if "=" in word)
    return [v.strip("\"'") for k, v in pairs if rule.matches(k) and v.strip("\"'")]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif value is not None:
        yield str(value)


def scrub(text: str, values: Iterable[Any]) -> str:
    """``text`` with each secret of ``values`` (the strings in them, at least
    :data:`MIN_SCRUBBED_LENGTH` characters) replaced by ``******``, longest first, and URL
    credentials masked."""
    for value in sorted({s for v in values for s in _strings(v)}, key=len, reverse=True):
        if len(value) >= MIN_SCRUBBED_LENGTH:
            text = text.replace(value, REDACTED)
    return mask_credentials(text)
