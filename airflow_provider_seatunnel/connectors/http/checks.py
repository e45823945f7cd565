"""The Http source at compile time (no Spark, no request): the block's problems, located at their keys,
and the schema it gives (``schema`` with ``format = json``, else the one field ``content``).

Errors: each option's own (the spec, :data:`.options.SPEC`), then the first rule across options SeaTunnel
would refuse (:func:`.options.parse`). Not runnable here (plans,
fails ``validate``): JSONPath filters and functions, ``pageing.page_type = Cursor``. Warnings: options
that change nothing where they stand (SeaTunnel ignores them too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...spi import SOURCE
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.optionspec import ParsedOptions
from ...spi.schema import Schema
from .jsonpath import UnsupportedPath, compile_path
from .options import SPEC, HttpOptions, OptionError, parse

#: options SeaTunnel's JSON format of this source reads only with ``format = json``
JSON_ONLY = ("json_field", "content_field")


def _unsupported_paths(plugin: PluginConfig, job: JobConfig, typed: ParsedOptions) -> list[Problem]:
    """A not-runnable warning per JSONPath that uses a filter or a function."""
    paths: list[tuple[str, Any]] = []
    if typed["content_field"] is not None:
        paths.append(("content_field", typed["content_field"]))
    paths.extend((f"json_field.{k}", v) for k, v in (typed["json_field"] or {}).items())
    problems = []
    for key, text in paths:
        try:
            compile_path(text)
        except UnsupportedPath as e:
            problems.append(job.cannot_run(f"{e}", plugin, key=key,
                                           hint="use member names, indexes, slices, wildcards (*) and deep scans "
                                                "(..); filter the rows with a transform instead"))
        except ValueError:
            pass  # parse() reports it
    return problems


def _parsed(plugin: PluginConfig) -> HttpOptions:
    return parse(plugin.options, lenient=True)


def _warnings(plugin: PluginConfig, job: JobConfig, o: HttpOptions) -> list[Problem]:
    def warn(message: str, key: str, hint: str | None = None) -> Problem:
        return job.problem(message, plugin, key=key, hint=hint, severity="warning")

    problems = []
    if o.format == "text":
        problems += [warn(f"{key} is ignored: without format json each response is the one field 'content'", key,
                          "set format = json and a schema") for key in JSON_ONLY if plugin.has(key)]
    if o.content_field is not None and o.json_field is not None:
        problems.append(warn("json_field is ignored when content_field is set", "json_field"))
    if o.json_field is not None and o.schema is not None:
        unknown = [name for name in o.json_field if o.schema.get(name) is None]
        if unknown:
            problems.append(warn(f"json_field names {', '.join(unknown)}, not a field of the schema: ignored",
                                 "json_field", f"the fields are: {', '.join(o.schema.names)}"))
    if o.body is not None and o.method == "GET":
        problems.append(warn("body is not sent with method GET", "body", "set method = POST"))
    elif o.body is not None and o.params and o.keep_params_as_form is not False:
        problems.append(warn("body is not sent: with params a POST sends the params as a form (SeaTunnel 2.3.9)",
                             "body", "set keep_params_as_form = false to send params in the URL and body as JSON"))
    mode = str(job.env_get("job.mode", "BATCH")).upper()
    if o.poll_interval_ms and mode != "STREAMING":
        problems.append(warn("poll_interval_millis is ignored in a BATCH job: the source reads once",
                             "poll_interval_millis"))
    return problems


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The first rule across options SeaTunnel would refuse (an error at its key), then what cannot run
    here and what is ignored (warnings); nothing when an option is wrong (the spec's problems say which)."""
    typed = SPEC.valid(plugin.options, SOURCE)
    if typed is None:
        return []
    try:
        o = _parsed(plugin)
    except OptionError as e:
        return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
    problems = _unsupported_paths(plugin, job, typed)
    if o.paging is not None and o.paging.page_type != "pagenumber":
        problems.append(job.cannot_run("pageing.page_type Cursor (a later SeaTunnel version's option) is not "
                                       "supported by this package", plugin, key="pageing.page_type",
                                       hint="use page numbers (page_field, total_page_size or batch_size)"))
    return problems + _warnings(plugin, job, o)


def schema(plugin: PluginConfig, job: JobConfig,
           inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """The rows: ``schema`` (``format = json``) or ``content string``. Problems are :func:`check`'s."""
    try:
        return _parsed(plugin).output_schema(), []
    except (OptionError, ValueError):
        return None, []
