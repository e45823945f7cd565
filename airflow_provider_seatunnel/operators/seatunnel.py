"""``SeaTunnelOperator``: run one pipeline of a SeaTunnel job as an Airflow task."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from ..config.errors import ConfigError
from ..hooks.seatunnel import SeaTunnelHook, SeaTunnelPipelineFailed

_FORMATS = {".conf": "hocon", ".hocon": "hocon", ".json": "json", ".sql": "sql"}


def _format_of(config: Any) -> str | None:
    """The format a config path's extension names (kept, because rendering replaces the path by its text)."""
    if isinstance(config, (str, os.PathLike)):
        s = os.fspath(config)
        if "\n" not in s and "{" not in s:
            return _FORMATS.get(Path(s).suffix.lower())
    return None


def _plan_retry(candidates: Sequence[Any], variables: Mapping[str, Any] | None,
                fmt: str | None) -> Mapping[str, Any] | None:
    """The config's restore policy, when it compiles as given (through the plan cache; no Spark)."""
    from ..plan.compiler import compile_job

    for config in candidates:
        if not isinstance(config, (str, os.PathLike)) or "{{" in os.fspath(config):
            continue
        try:
            plan = compile_job(config, variables, format=fmt)
        except (ConfigError, OSError, ValueError):
            continue  # not found here, or templated: execute() reports real errors
        return plan.pipelines[0].retry if plan.pipelines else None
    return None


class SeaTunnelOperator(BaseOperator):
    """Run one pipeline (SubPlan) of a SeaTunnel job with ``spark-submit``; its metrics are the XCom value.

    :param config: a config file (``.conf``/``.hocon``/``.json``/``.sql``, rendered as a Jinja template
        and found on the DAG's template search path) or the config text. Templated.
    :param variables: the job's variables (``{"dt": "{{ ds }}"}``). Templated.
    :param pipeline: the pipeline to run (number or task id); may be omitted when the job has one.
    :param spark_conn_id: the Spark connection (master, deploy mode).
    :param retries: default: the config's ``job.retry.times`` (an Airflow retry is the pipeline restore).
    :param retry_delay: default: the config's ``job.retry.interval.seconds``.
    :param spark_submit_kwargs: further ``SparkSubmitHook`` arguments.

    A ``ConfigError`` or a deterministic failure (a broken Assert rule, bad data, an option only
    checkable at run time) raises ``AirflowFailException``: retrying cannot fix it. Anything else
    raises a retryable ``AirflowException``.
    """

    template_fields: Sequence[str] = ("config", "variables")
    template_ext: Sequence[str] = (".conf", ".hocon", ".json", ".sql")
    ui_color = "#1890ff"
    ui_fgcolor = "#ffffff"

    def __init__(self, *, config: str, variables: Mapping[str, Any] | None = None, pipeline: int | str | None = None,
                 spark_conn_id: str = "spark_default", format: str | None = None, spark_binary: str | None = None,
                 deploy_mode: str | None = None, py_files: str | None = None,
                 spark_submit_kwargs: Mapping[str, Any] | None = None, retries: int | None = None,
                 retry_delay: timedelta | float | None = None, **kwargs: Any) -> None:
        fmt = format or _format_of(config)
        if retries is not None:
            kwargs["retries"] = retries
        if retry_delay is not None:
            kwargs["retry_delay"] = retry_delay
        super().__init__(**kwargs)
        if retries is None or retry_delay is None:
            retry = _plan_retry(self._config_candidates(config), variables, fmt)
            if retry:
                if retries is None and retry.get("times") is not None:
                    self.retries = int(retry["times"])
                if retry_delay is None and retry.get("interval_seconds") is not None:
                    self.retry_delay = timedelta(seconds=float(retry["interval_seconds"]))
        self.config = config
        self.variables = dict(variables or {})
        self.pipeline = pipeline
        self.spark_conn_id = spark_conn_id
        self.format = fmt
        self.spark_binary = spark_binary
        self.deploy_mode = deploy_mode
        self.py_files = py_files
        self.spark_submit_kwargs = dict(spark_submit_kwargs or {})

    def _config_candidates(self, config: Any) -> list[Any]:
        """``config`` itself, then a relative config file on the DAG's template search path and folder."""
        out = [config]
        dag = getattr(self, "dag", None) if self.has_dag() else None
        if dag is not None and _format_of(config) and not os.path.isabs(os.fspath(config)):
            searchpath = getattr(dag, "template_searchpath", None)
            dirs = [searchpath] if isinstance(searchpath, str) else list(searchpath or [])
            dirs.append(getattr(dag, "folder", None))
            out += [str(Path(d) / os.fspath(config)) for d in dirs if d]
        return out

    def render_template(self, content: Any, context: Any, jinja_env: Any = None, seen_oids: Any = None) -> Any:
        """As Airflow's, plus absolute config file paths (Jinja's loader only searches the DAG's folders)."""
        if (isinstance(content, str) and content.endswith(tuple(self.template_ext)) and os.path.isabs(content)
                and os.path.isfile(content)):
            if not jinja_env:
                jinja_env = self.get_template_env()
            return self._render(jinja_env.from_string(Path(content).read_text(encoding="utf-8")), context)
        return super().render_template(content, context, jinja_env, seen_oids)

    @cached_property
    def hook(self) -> SeaTunnelHook:
        return self._get_hook()

    def _get_hook(self) -> SeaTunnelHook:
        return SeaTunnelHook(self.config, self.variables, self.spark_conn_id, format=self.format,
                             spark_binary=self.spark_binary, deploy_mode=self.deploy_mode, py_files=self.py_files,
                             spark_submit_kwargs=self.spark_submit_kwargs)

    def execute(self, context: Any) -> dict[str, Any]:
        from ..plan.render import render_text
        from ..runtime.summary import job_metrics, render_summary

        hook = self.hook
        try:
            plan = hook.plan
            pipeline = hook.pipeline(self.pipeline)
        except ConfigError as e:
            raise AirflowFailException(f"SeaTunnel config error:\n{e}") from None
        except (KeyError, ValueError) as e:
            raise AirflowFailException(str(e.args[0] if e.args else e)) from None
        self.log.info("SeaTunnel job %s, running pipeline %s (%s):\n%s", plan.name, pipeline.id, pipeline.task_id,
                      render_text(plan))
        run_id = f"{context['run_id']}:{self.task_id}"
        ti = context.get("ti")
        attempt = int(getattr(ti, "try_number", None) or 1)
        try:
            metrics = hook.submit(pipeline.id, run_id=run_id, attempt=attempt)
        except SeaTunnelPipelineFailed as e:
            self.log.error("%s", render_summary(job_metrics(plan.name, [e.metrics], e.metrics.get("start", ""),
                                                            e.metrics.get("end", ""))))
            if e.deterministic:
                raise AirflowFailException(f"{e} (not retried: the same input fails the same way)") from None
            raise AirflowException(str(e)) from None
        finally:
            hook.cleanup()
        self.log.info("%s", render_summary(job_metrics(plan.name, [metrics], metrics.get("start", ""),
                                                       metrics.get("end", ""))))
        return metrics

    def on_kill(self) -> None:
        if "hook" in self.__dict__:
            self.hook.on_kill()
