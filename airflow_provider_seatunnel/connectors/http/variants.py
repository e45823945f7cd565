"""The Http source under a service's name: Github, Gitlab, Jira, Klaviyo, Lemlist, Notion, OneSignal and
Persistiq, as SeaTunnel ships them. Each is the Http source (every option of :data:`.options.SPEC`) plus a
few options of its own, credentials and a version, that become request headers:

========== ============================ ===========================================================
plugin     its options (all required)   headers it sends
========== ============================ ===========================================================
Github     ``access_token``             ``Authorization: Bearer <access_token>`` (none when blank)
Gitlab     ``access_token``             ``PRIVATE-TOKEN: <access_token>``
Jira       ``email``, ``api_token``     ``Authorization: Basic base64(<email>:<api_token>)``
Klaviyo    ``private_key``, ``revision`` ``Authorization: Klaviyo-API-Key <private_key>``,
                                        ``revision: <revision>``, ``Accept: application/json``
Lemlist    ``password``                 ``Authorization: Basic base64(:<password>)``
Notion     ``password``, ``version``    ``Authorization: Bearer <password>``, ``Notion-Version``
OneSignal  ``password``                 ``Authorization: Basic <password>`` (as given),
                                        ``Content-Type: application/json``
Persistiq  ``password``                 ``x-api-key: <password>``
========== ============================ ===========================================================

A header the variant sets replaces a ``headers`` entry of the same name (in any case), as SeaTunnel's
variant overwrites the block's. Gitlab and Jira read in BATCH jobs only (SeaTunnel refuses them in a
STREAMING job); the others stream as Http does. The credentials are secret options (kept out of plans,
task ids and logs); the headers made from them exist only when the task runs, inside the read's redacted
spec. Deviations: :data:`DEVIATIONS`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ...spi import SOURCE, Capabilities, Dataset, RunContext, Vertex
from ...spi.errors import RuntimeConfigError
from ...spi.options import JobConfig, PluginConfig, Problem, option
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema
from . import AUTH_HEADERS, Http, checks
from .options import SPEC

__all__ = ["DEVIATIONS", "GITHUB", "GITLAB", "JIRA", "KLAVIYO", "LEMLIST", "NOTION", "ONESIGNAL", "PERSISTIQ",
           "HttpVariant"]

DEVIATIONS = (
    "Jira and Lemlist: the Basic credentials are standard base64 with padding (RFC 7617); SeaTunnel sends "
    "URL-safe base64 without padding, which a server decoding standard base64 refuses for some credentials",
    "a headers entry named like a header the variant sets but in another case (authorization) gives way to "
    "the variant's; SeaTunnel sends both names and which value wins depends on its hash order",
)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


@dataclass(frozen=True)
class _AsHttp:
    """A variant's vertex as the Http source reads it: the same vertex with the translated options."""

    vertex: Vertex
    config: Mapping[str, Any]

    @property
    def id(self) -> str:
        return self.vertex.id

    @property
    def ref(self) -> str:
        return self.vertex.ref

    @property
    def kind(self) -> str:
        return self.vertex.kind

    @property
    def plugin(self) -> str:
        return self.vertex.plugin

    @property
    def parallelism(self) -> int:
        return self.vertex.parallelism

    @property
    def output(self) -> str | None:
        return self.vertex.output

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.vertex.inputs

    @property
    def schema(self) -> Mapping[str, Any] | None:
        return self.vertex.schema


class HttpVariant(Http):
    """The Http source whose own options (:attr:`own`) become headers (:meth:`auth_headers`)."""

    capabilities = Capabilities(sections=frozenset({SOURCE}), inserts_only=True)
    sink_option_spec = None
    #: the options this variant adds to the Http source's
    own: ClassVar[tuple[Option, ...]] = ()
    #: SeaTunnel refuses the variant in a STREAMING job
    batch_only: ClassVar[bool] = False

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        """The headers the variant's own option values (all given, as text) make."""
        return {}

    def http_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The block as the Http source's: its own options turned into headers, which replace the block's
        headers of the same name (any case)."""
        keys = {o.key for o in self.own}
        values = {key: "" if option(options, key) is None else str(option(options, key)) for key in keys}
        made = self.auth_headers(values)
        given = option(options, "headers")
        headers = {str(k): v for k, v in (given.items() if isinstance(given, Mapping) else ())
                   if str(k).lower() not in {h.lower() for h in made}}
        out = {k: v for k, v in options.items() if k not in keys}
        out["headers"] = {**headers, **made}
        return out

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The Http source's rules on the translated block, and BATCH only where SeaTunnel says so."""
        assert self.option_spec is not None
        if self.option_spec.valid(plugin.options, SOURCE) is None:
            return []  # the spec's problems say what is wrong
        found = checks.check(replace(plugin, options=self.http_options(plugin.options)), job)
        if self.batch_only and str(job.env_get("job.mode", "BATCH")).upper() == "STREAMING":
            found.append(job.problem(f"{self.name} reads in BATCH jobs only", plugin, key=None,
                                     hint="set job.mode = BATCH, or read the API with the Http source"))
        return found

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Any) -> tuple[Schema | None, list[Problem]]:
        return checks.schema(replace(plugin, options=self.http_options(plugin.options)), job, inputs)

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        """Never: the block carries its own credentials (name a connection with http_conn_id to use one)."""
        return False

    def _as_http(self, vertex: Vertex) -> Vertex:
        return _AsHttp(vertex, self.http_options(vertex.config))

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return super().read(ctx, self._as_http(vertex))

    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        if self.batch_only:
            raise RuntimeConfigError(f"{self.name} reads in BATCH jobs only")
        return super().read_stream(ctx, self._as_http(vertex))


def _spec(*own: Option) -> OptionSpec:
    return OptionSpec((*SPEC.options, *own))


def _secret(key: str, what: str) -> Option:
    return Option(key, required=True, secret=True, description=what)


class Github(HttpVariant):
    name = "Github"
    own = (_secret("access_token", "A GitHub token, sent as Authorization: Bearer (none when blank)."),)
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads a GitHub API (the Http source with a bearer token)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        token = values["access_token"]
        return {"Authorization": f"Bearer {token}"} if token else {}


class Gitlab(HttpVariant):
    name = "Gitlab"
    own = (_secret("access_token", "A GitLab token, sent as the PRIVATE-TOKEN header."),)
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS | {"private-token"}
    description = "Reads a GitLab API (the Http source with a PRIVATE-TOKEN header); BATCH only."
    batch_only = True

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"PRIVATE-TOKEN": values["access_token"]}


class Jira(HttpVariant):
    name = "Jira"
    own = (Option("email", required=True, description="The Jira account's email (the basic-auth user)."),
           _secret("api_token", "A Jira API token (the basic-auth password)."))
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads a Jira API (the Http source with basic auth from email and api_token); BATCH only."
    batch_only = True

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"Authorization": _basic(values["email"], values["api_token"])}


class Klaviyo(HttpVariant):
    name = "Klaviyo"
    own = (_secret("private_key", "A Klaviyo private API key, sent as Authorization: Klaviyo-API-Key."),
           Option("revision", required=True, description="The API revision (YYYY-MM-DD), sent as the revision "
                  "header."))
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads the Klaviyo API (the Http source with its API key and revision headers)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"Accept": "application/json", "Authorization": f"Klaviyo-API-Key {values['private_key']}",
                "revision": values["revision"]}


class Lemlist(HttpVariant):
    name = "Lemlist"
    own = (_secret("password", "A Lemlist API key, sent as basic auth with an empty user."),)
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads the Lemlist API (the Http source with basic auth from its API key)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"Authorization": _basic("", values["password"])}


class Notion(HttpVariant):
    name = "Notion"
    own = (_secret("password", "A Notion integration token, sent as Authorization: Bearer."),
           Option("version", required=True, description="The Notion API version (a date), sent as Notion-Version."))
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads the Notion API (the Http source with a bearer token and Notion-Version)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {values['password']}", "Notion-Version": values["version"]}


class OneSignal(HttpVariant):
    name = "OneSignal"
    own = (_secret("password", "A OneSignal REST API key, sent as Authorization: Basic <key> (not encoded)."),)
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads the OneSignal API (the Http source with its REST API key and a JSON Content-Type)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"Content-Type": "application/json", "Authorization": f"Basic {values['password']}"}


class Persistiq(HttpVariant):
    name = "Persistiq"
    own = (_secret("password", "A PersistIQ API key, sent as the x-api-key header."),)
    option_spec = _spec(*own)
    secrets = AUTH_HEADERS
    description = "Reads the PersistIQ API (the Http source with an x-api-key header)."

    def auth_headers(self, values: Mapping[str, str]) -> dict[str, str]:
        return {"x-api-key": values["password"]}


GITHUB, GITLAB, JIRA, KLAVIYO = Github(), Gitlab(), Jira(), Klaviyo()
LEMLIST, NOTION, ONESIGNAL, PERSISTIQ = Lemlist(), Notion(), OneSignal(), Persistiq()
