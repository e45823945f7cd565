"""A lean Spark home for pipelines whose driver runs the whole application on this machine.

The installed PySpark's ``jars/`` holds everything a Spark distribution ships: machine learning
(spark-mllib and its numeric stack), graphs, the Kubernetes and YARN cluster managers. The driver JVM's
classpath is ``$SPARK_HOME/jars/*``: a session then loads what those jars register through Java's
``ServiceLoader`` (spark-mllib's session extension, for one: Scala reflection at every session's start),
and every class lookup and service scan walks all their indexes. No SeaTunnel job uses any of them.

The lean home is a directory of symbolic links: each top-level entry of the installed PySpark
(``bin``, ``python``, ``conf``...) links to the package's own, and ``jars/`` is a directory of links to
the package's jars except :data:`EXCLUDED_JARS`. spark-submit started with ``SPARK_HOME`` naming it runs
the same scripts, the same Python and the same remaining jars. Rules:

* **Used only where it cannot be missed**: a ``local`` master (a cluster's driver and executors have
  their own Spark), ``SPARK_HOME`` unset or naming the installed PySpark (a Spark of the user's own is
  left alone), and no Spark setting that asks for what is left out (:func:`asks_for_excluded`: a
  setting naming ``mllib``, ``graphx``, ``org.apache.spark.ml``...). A Spark Connect server keeps the full
  home (it serves machine learning to its clients).
* **Keyed to the installation**: the directory's name is a hash of the package's path, its top-level
  entries, its jars (names, sizes, times) and the exclusions (:func:`home_key`); a PySpark installed
  anew gets a new directory, never an old one. The driver JVM's class archive is keyed to
  ``SPARK_HOME`` and its jars (:mod:`.jvm_startup`), so the lean home has its own.
* **Trusted only as far as it is what it must be** (:func:`problems`): before each use every entry is
  checked to be a symbolic link to the package's entry of the same name (a jar: one of the kept
  jars), with nothing else in it. A directory that differs in any way is never used: it is removed and
  built again; if that fails, the pipeline runs with PySpark's own home.
* Built beside its final name and renamed into place, so a concurrent launch never sees half of one;
  the parent directory is private (0700, this user's); the two most recently used homes are kept.

``[seatunnel] lean_spark_home`` (or ``SEATUNNEL_LEAN_SPARK_HOME``) names the parent directory; ``off``
turns this off.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from .. import settings

#: jars a SeaTunnel job never needs, as name patterns: machine learning and its numeric libraries,
#: graphs, and the cluster managers a ``local`` master does not use (with Kubernetes' HTTP client)
EXCLUDED_JARS = (
    "spark-mllib_*", "spark-mllib-local_*", "spark-graphx_*", "breeze_*", "breeze-macros_*", "spire_*",
    "spire-*", "algebra_*", "cats-kernel_*", "arpack-*", "arpack_combined_all-*", "lapack-*", "blas-*",
    "JTransforms-*", "JLargeArrays-*",
    "spark-kubernetes_*", "kubernetes-*", "spark-yarn_*", "vertx-*",
)
#: a Spark setting mentioning one of these asks for a left-out jar: such a pipeline gets the full home
_ASKS = re.compile(r"mllib|graphx|org\.apache\.spark\.ml\b|breeze|spire|kubernetes|spark-yarn", re.IGNORECASE)
JARS = "jars"
#: lean homes kept (one per PySpark installation in use; each a few hundred links)
KEEP_HOMES = 2
#: a half-built home this old (seconds) belongs to a launch that died: removed
STALE_SECONDS = 3600


def excluded(jar_name: str) -> bool:
    """Whether ``jar_name`` is one of :data:`EXCLUDED_JARS`."""
    return any(fnmatch.fnmatchcase(jar_name, pattern) for pattern in EXCLUDED_JARS)


def asks_for_excluded(*confs: Mapping[str, str]) -> bool:
    """Whether any setting of ``confs`` (the job's, ``spark-defaults.conf``'s) names a left-out jar or
    its classes (``spark.jars.packages`` with ``spark-mllib``, an ``org.apache.spark.ml`` extension...)."""
    return any(_ASKS.search(f"{key}={value}") for conf in confs for key, value in conf.items())


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


def home_key(source: Path) -> str:
    """What a lean home of ``source`` (the PySpark package) depends on, hashed: its real path, its
    top-level entries, its jars (names, sizes, times) and :data:`EXCLUDED_JARS`."""
    real = source.resolve()
    parts = [str(real), *sorted(p.name for p in real.iterdir()), *EXCLUDED_JARS]
    parts += sorted(_stamp(jar) for jar in (real / JARS).iterdir())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def expected(source: Path) -> tuple[dict[str, str], dict[str, str]]:
    """What a lean home of ``source`` holds: its top-level links (name → target) and its jar links."""
    real = source.resolve()
    top = {p.name: str(real / p.name) for p in real.iterdir() if p.name != JARS}
    jars = {p.name: str(real / JARS / p.name) for p in (real / JARS).iterdir() if not excluded(p.name)}
    return top, jars


def problems(home: Path, source: Path) -> list[str]:
    """How ``home`` differs from a lean home of ``source`` (empty: it is one): a symlink or another
    user's directory in its place, an entry missing, one too many, or a link to anything else."""
    out: list[str] = []
    top, jars = expected(source)
    for directory, links in ((home, top), (home / JARS, jars)):
        try:
            info = directory.lstat()
        except OSError:
            return [f"{directory} is missing"]
        if directory.is_symlink() or not directory.is_dir() or info.st_uid != os.getuid():
            return [f"{directory} is not this user's directory"]
        found = set(os.listdir(directory)) - ({JARS} if directory == home else set())
        out += [f"{directory / name} is not expected" for name in sorted(found - set(links))]
        out += [f"{directory / name} is missing" for name in sorted(set(links) - found)]
        for name in sorted(found & set(links)):
            try:
                target = os.readlink(directory / name)
            except OSError:
                target = None
            if target != links[name]:
                out.append(f"{directory / name} is not a link to {links[name]}")
    return out


def build(source: Path, home: Path) -> None:
    """Create the lean home of ``source`` at ``home`` (which must not exist): built under a temporary
    name beside it and renamed into place; when another launch put one there first, this one's goes."""
    top, jars = expected(source)
    part = home.with_name(f"{home.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        (part / JARS).mkdir(parents=True, mode=0o700)
        for name, target in top.items():
            os.symlink(target, part / name)
        for name, target in jars.items():
            os.symlink(target, part / JARS / name)
        try:
            os.rename(part, home)
        except OSError:
            if not home.is_dir():  # not another launch's, finished first
                raise
    finally:
        shutil.rmtree(part, ignore_errors=True)


def lean_home(source: Path, directory: Path) -> Path | None:
    """The lean home of ``source`` (the PySpark package) under ``directory``, built when missing and
    rebuilt when it is not exactly what it must be (:func:`problems`); None when ``directory`` is not
    this user's private one or the home cannot be made (the caller then uses ``source`` itself)."""
    from ..spi.safe_files import UnsafePath, ensure_private_dir

    try:
        ensure_private_dir(str(directory))
        home = directory / f"spark-{home_key(source)}"
        if home.is_symlink() or (home.exists() and problems(home, source)):
            _remove(home)
        if not home.exists():
            _prune(directory)
            build(source, home)
        if problems(home, source):
            return None
        with contextlib.suppress(OSError):
            os.utime(home)  # in use: the last to be pruned
        return home
    except (OSError, UnsafePath):
        return None


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _prune(directory: Path) -> None:
    """Before a home is built: the least recently used homes past :data:`KEEP_HOMES` - 1 and the parts
    killed launches left are removed (their links only: never what they point to)."""
    homes = sorted((p for p in directory.glob("spark-*") if not p.name.endswith(".part")),
                   key=lambda p: p.lstat().st_mtime, reverse=True)
    parts = [p for p in directory.glob("spark-*.part") if time.time() - p.lstat().st_mtime > STALE_SECONDS]
    for old in [*homes[KEEP_HOMES - 1:], *parts]:
        with contextlib.suppress(OSError):
            _remove(old)


def lean_environment(environ: Mapping[str, str], source: Path, master: str | None,
                     *confs: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``SPARK_HOME`` naming the lean home of ``source`` (the installed PySpark) when
    this launch may use it (module docstring: a local ``master``, ``SPARK_HOME`` unset or ``source``, no
    setting of ``confs`` asking for a left-out jar, the setting not ``off``); else ``environ`` as it is."""
    from .jvm_startup import is_local_master

    env = dict(environ)
    home = env.get("SPARK_HOME")
    if not is_local_master(master) or (home and os.path.realpath(home) != os.path.realpath(source)):
        return env
    directory = settings.cache_directory(settings.LEAN_SPARK_HOME, "spark-home", env)
    if directory is None or asks_for_excluded(*confs):
        return env
    lean = lean_home(source, directory)
    if lean is not None:
        env["SPARK_HOME"] = str(lean)
    return env
