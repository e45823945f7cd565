"""The provider's settings: Airflow's ``[seatunnel]`` configuration section, environment variables as fallbacks.

A setting is read at call time (never frozen at import), from the first of:

1. Airflow's configuration: ``airflow.cfg``'s ``[seatunnel]`` section, ``AIRFLOW__SEATUNNEL__<OPTION>``,
   a secrets backend, as Airflow's ``conf.get`` resolves them. Only in a process that has loaded
   Airflow (the scheduler, the DAG processor, a task): this module never imports Airflow, so
   compiling a job imports no Airflow, and the command line and the Spark application, which do
   not load it, go on to
2. ``AIRFLOW__SEATUNNEL__<OPTION>`` in the environment (Airflow's spelling, read directly);
3. the setting's own environment variable (``SEATUNNEL_PLAN_CACHE``...), the spelling of earlier releases;
4. nothing (None): the reader applies its default.

A blank value counts as unset. :func:`environment` hands the values to a child process (spark-submit)
under the environment variables' names, so that a Spark application sees what the Airflow task saw.
The same definitions are the provider's ``config`` metadata (:func:`provider_config`), which Airflow
shows in ``airflow config list`` and its UI.

Standard library only (platformdirs when a default cache directory is asked for), and nothing from this
package: every layer may read it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SECTION = "seatunnel"
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


@dataclass(frozen=True)
class Setting:
    """One option of the ``[seatunnel]`` section and the environment variable it falls back to."""

    option: str
    env: str
    type: str  # "string" or "boolean", as Airflow's provider config metadata names types
    description: str
    example: str | None
    version_added: str = "0.1.0"
    #: a secret: Airflow masks it (``airflow config list``, the UI), and it is never logged
    sensitive: bool = False

    @property
    def airflow_env(self) -> str:
        """The variable Airflow reads for this option: ``AIRFLOW__SEATUNNEL__<OPTION>``."""
        return f"AIRFLOW__{SECTION.upper()}__{self.option.upper()}"


PLAN_CACHE_DIR = Setting(
    "plan_cache_dir", "SEATUNNEL_PLAN_CACHE", "string",
    "Where compiled plans are cached, so that parsing a DAG file does not compile its jobs again: a "
    "directory this user owns and others cannot write to (created 0700). ``off`` disables the cache. "
    "Unset: the environment variable SEATUNNEL_PLAN_CACHE, else the user cache directory.",
    "/var/cache/airflow/seatunnel-plans")
PLAN_CACHE_MAX_ENTRIES = Setting(
    "plan_cache_max_entries", "SEATUNNEL_PLAN_CACHE_MAX_ENTRIES", "string",
    "How many compiled plans the plan cache keeps; past it, the least recently used are removed. "
    "Unset: the environment variable SEATUNNEL_PLAN_CACHE_MAX_ENTRIES, else 1000.",
    "1000")
PLAN_CACHE_MAX_BYTES = Setting(
    "plan_cache_max_bytes", "SEATUNNEL_PLAN_CACHE_MAX_BYTES", "string",
    "The total size of the plan cache in bytes (a suffix K, M or G multiplies by 1024s); past it, the least "
    "recently used plans are removed. Unset: the environment variable SEATUNNEL_PLAN_CACHE_MAX_BYTES, else 256M.",
    "256M")
PLAN_CACHE_MAX_ENTRY_BYTES = Setting(
    "plan_cache_max_entry_bytes", "SEATUNNEL_PLAN_CACHE_MAX_ENTRY_BYTES", "string",
    "The largest plan the plan cache stores, in bytes (K, M, G suffixes); a larger plan is compiled every time "
    "and not stored (logged). Unset: the environment variable SEATUNNEL_PLAN_CACHE_MAX_ENTRY_BYTES, else 16M.",
    "16M")
CHECKPOINT_ROOT = Setting(
    "checkpoint_root", "SEATUNNEL_CHECKPOINT_ROOT", "string",
    "Where STREAMING pipelines keep their checkpoints when the job sets no env option checkpoint.root: a "
    "directory, or a URI Spark can write to (hdfs://, s3a://). Unset: the environment variable "
    "SEATUNNEL_CHECKPOINT_ROOT, else the user data directory.",
    "s3a://bucket/seatunnel/checkpoints")
JDBC_DRIVER_PATH = Setting(
    "jdbc_driver_path", "SEATUNNEL_JDBC_DRIVER_PATH", "string",
    "JDBC driver jars for Jdbc blocks: jar files or directories of jars, separated by ':' or ','. Unset: the "
    "environment variable SEATUNNEL_JDBC_DRIVER_PATH, else a driver_path in the block's Airflow connection, "
    "else env spark.jars or the system's well-known location for the driver (/usr/share/java/...).",
    "/opt/jdbc/postgresql-42.7.4.jar")
STRICT = Setting(
    "strict", "SEATUNNEL_STRICT", "boolean",
    "What a DAG file does when a job could not run here (a plugin this package cannot run, an option a "
    "connector cannot honour): False shows a DAG warning and the task fails before Spark starts; True makes it "
    "the DAG's import error. True also makes an option key a plugin does not declare an error (else a warning). "
    "An operator's or task group's own strict argument wins. Unset: the environment "
    "variable SEATUNNEL_STRICT, else False.",
    "True")
JOURNAL_KEY = Setting(
    "journal_key", "SEATUNNEL_JOURNAL_KEY", "string",
    "A secret, the same on every worker, that authenticates the commit journals and fence records of sinks on "
    "stores without file modes (object stores, HDFS, FTP/SFTP): a record that was not sealed with it is refused. "
    "Unset: the environment variable SEATUNNEL_JOURNAL_KEY, else the sink's own secret credential. Local targets "
    "keep a private key file beside their commit log instead (docs/security.md).",
    None, sensitive=True)
INCLUDE_PATHS = Setting(
    "include_paths", "SEATUNNEL_INCLUDE_PATHS", "string",
    "Directories a job config's ``include`` may read from, besides the config's own directory tree (and the DAG's "
    "folder and template_searchpath for an operator's config): separated by ':' or ','. Anything else (/etc, "
    "/proc, a symlink leading out, a device or a FIFO) is refused. Unset: the environment variable "
    "SEATUNNEL_INCLUDE_PATHS, else only those.",
    "/opt/airflow/shared-configs")
JVM_ARCHIVE_DIR = Setting(
    "jvm_archive_dir", "SEATUNNEL_JVM_ARCHIVE_DIR", "string",
    "Where the class-data sharing archive of the pipelines' driver JVM is kept (one per Java and Spark install, "
    "about 150 MB; made by the first spark-submit run, then mapped by every later one to start faster): a "
    "directory only this user may enter (created 0700). ``off`` disables class-data sharing. Unset: the "
    "environment variable SEATUNNEL_JVM_ARCHIVE_DIR, else the user cache directory.",
    "/var/cache/airflow/seatunnel-jvm")
LEAN_SPARK_HOME = Setting(
    "lean_spark_home", "SEATUNNEL_LEAN_SPARK_HOME", "string",
    "Where the lean Spark home of pipelines with a local master is kept: the installed PySpark's files as "
    "symbolic links, without the jars no SeaTunnel job uses (machine learning, graphs, Kubernetes, YARN), so the "
    "driver JVM does not load them. A directory only this user may enter (created 0700). ``off`` runs every "
    "pipeline with the installed PySpark's own home. Unset: the environment variable SEATUNNEL_LEAN_SPARK_HOME, "
    "else the user cache directory.",
    "/var/cache/airflow/seatunnel-spark-home")
SETTINGS = (PLAN_CACHE_DIR, PLAN_CACHE_MAX_ENTRIES, PLAN_CACHE_MAX_BYTES, PLAN_CACHE_MAX_ENTRY_BYTES, CHECKPOINT_ROOT,
            JDBC_DRIVER_PATH, STRICT, JOURNAL_KEY, INCLUDE_PATHS, JVM_ARCHIVE_DIR, LEAN_SPARK_HOME)


def airflow_conf() -> Any | None:
    """Airflow's configuration object when this process has loaded Airflow, else None (nothing is imported)."""
    module = sys.modules.get("airflow.configuration")
    return getattr(module, "conf", None)


def dags_folder() -> str | None:
    """Airflow's ``[core] dags_folder`` in a process that has loaded Airflow, else None."""
    conf = airflow_conf()
    if conf is None:
        return None
    try:
        found = conf.get("core", "dags_folder", fallback=None)
    except Exception:  # an Airflow configuration that cannot answer: no DAG folder known
        return None
    return os.path.expanduser(found) if found else None


def value(setting: Setting, environ: Mapping[str, str] | None = None) -> str | None:
    """The setting's value (stripped), in the order the module docstring gives; None when unset.

    ``environ`` (default ``os.environ``) is where steps 2 and 3 look."""
    conf = airflow_conf()
    if conf is not None:
        found = conf.get(SECTION, setting.option, fallback=None)
        if found is not None and str(found).strip():
            return str(found).strip()
    env = os.environ if environ is None else environ
    for name in (setting.airflow_env, setting.env):
        found = env.get(name)
        if found is not None and found.strip():
            return found.strip()
    return None


def flag(setting: Setting, environ: Mapping[str, str] | None = None, default: bool = False) -> bool:
    """A boolean setting (``true``/``false``, ``1``/``0``, ``yes``/``no``, ``on``/``off``); ``default`` when unset.

    Raises ValueError naming the option and its environment variable for any other value."""
    raw = value(setting, environ)
    if raw is None:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ValueError(f"[{SECTION}] {setting.option} (or ${setting.env}) must be true or false, found {raw!r}")


def size(setting: Setting, environ: Mapping[str, str] | None = None, default: int = 0) -> int:
    """A count or byte-size setting: a non-negative integer, optionally with a K, M or G suffix (powers of
    1024); ``default`` when unset. Raises ValueError naming the option and its environment variable."""
    raw = value(setting, environ)
    if raw is None:
        return default
    text = raw.upper().removesuffix("B")
    factor = 1024 ** (" KMG".index(text[-1]) if text and text[-1] in "KMG" else 0)
    digits = text[:-1] if factor > 1 else text
    if not digits.strip().isdigit():
        raise ValueError(f"[{SECTION}] {setting.option} (or ${setting.env}) must be a whole number "
                         f"(with an optional K, M or G suffix), found {raw!r}")
    return int(digits) * factor


def cache_directory(setting: Setting, name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory a setting names (read at call time); None when it is ``off`` (or ``0``, ``false``,
    ``no``, ``none``); unset: ``name`` under the user cache directory (platformdirs, imported only then)."""
    raw = value(setting, environ) or ""
    if raw.lower() in ("off", "0", "false", "no", "none"):
        return None
    if raw:
        return Path(raw)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("airflow-provider-seatunnel")) / name


def strict(environ: Mapping[str, str] | None = None) -> bool:
    """``[seatunnel] strict``: whether a job that cannot run here is a DAG import error (default False)."""
    return flag(STRICT, environ)


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings that have a value, under their environment variables' names (``SEATUNNEL_...``):
    what a child process (spark-submit and the Spark application) needs to see what this one sees."""
    out: dict[str, str] = {}
    for setting in SETTINGS:
        found = value(setting, environ)
        if found is not None:
            out[setting.env] = found
    return out


def provider_config() -> dict[str, Any]:
    """The ``config`` entry of the provider's metadata (Airflow's provider info schema): the
    ``[seatunnel]`` section. No option has a default there: unset, the environment variable decides."""
    return {SECTION: {
        "description": "Apache SeaTunnel provider: where plans, checkpoints and JDBC drivers live, and how a "
                       "job that cannot run here is reported. Every option falls back to an environment "
                       "variable of the same meaning (SEATUNNEL_...).",
        "options": {s.option: {"description": s.description, "version_added": s.version_added, "type": s.type,
                               "example": s.example, "default": None, "sensitive": s.sensitive}
                    for s in SETTINGS},
    }}
