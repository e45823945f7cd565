"""The start-up check that the PySpark a pipeline runs on is one release: Python files and Spark jars.

Two distributions install the ``pyspark`` package: ``pyspark`` (the Python files and Spark's jars)
and ``pyspark-client`` (the same Python files without jars; the Spark provider requires it). They
write the same files into the same directory and pip does not know it, so with two releases
installed (pyspark 4.2.1 beside pyspark-client 4.2.0) whichever was installed last wins every
shared file, ``pyspark/version.py`` among them: Python code of one release drives the jars of
another. Version ranges cannot tie the two together (a constraint file can: docs/install.md), so
the launcher refuses such an install before ``spark-submit`` starts, naming both versions and the
fix, rather than letting a pipeline fail later in a way that names neither.

What is checked is the Spark that ``spark-submit`` runs. Without ``SPARK_HOME`` (or with it naming
the installed package) that is the installed PySpark: its ``pyspark/version.py`` (what ``import
pyspark`` reports), the ``pyspark`` and ``pyspark-client`` distributions installed beside it and the
version of its ``jars/spark-core_*.jar`` must agree. With ``SPARK_HOME`` naming another Spark, the
driver imports that Spark's own ``python/lib/pyspark.zip`` (``runtime/pyspark_internals.py`` keeps
it), so the installed package does not matter: that Spark's Python files and jars must agree, and
its release must be one this package declares it runs on (its ``pyspark`` requirement).

The check reads files only, never imports PySpark; what it cannot find it does not judge (a Spark
home without jars, a package without version file).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

_VERSION = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_CORE_JAR = re.compile(r"^spark-core_[\d.]+-(.+)\.jar$")
DISTRIBUTIONS = ("pyspark", "pyspark-client")


class PySparkMismatch(RuntimeError):
    """The installed PySpark mixes releases; the message names the versions and the fix."""


@dataclass(frozen=True)
class PySparkInstall:
    """The Spark ``spark-submit`` runs: the installed package (``package``, its ``version.py`` as
    ``python``, the distributions beside it), or, when ``spark_home`` names another Spark, that one
    (``python`` is then its ``pyspark.zip``'s version); ``jars`` the version of its jars in
    ``jars_dir``; ``supported`` this package's ``pyspark`` requirement (e.g. ``<5,>=4.1``)."""

    package: Path
    python: str | None
    distributions: Mapping[str, str] = field(default_factory=dict)
    jars_dir: Path | None = None
    jars: str | None = None
    spark_home: str | None = None  # SPARK_HOME, when it names a Spark other than the installed package
    supported: str | None = None

    def problems(self) -> list[str]:
        """Each disagreement, with its fix; empty when the Spark is one release."""
        return self._external_problems() if self.spark_home else self._installed_problems()

    def _installed_problems(self) -> list[str]:
        out: list[str] = []
        pyspark, client = (self.distributions.get(name) for name in DISTRIBUTIONS)
        if pyspark and client and pyspark != client:
            out.append(
                f"pyspark {pyspark} and pyspark-client {client} are installed together in {self.package.parent}; "
                f"they write the same files, so the Python package is a mix of both releases (its version.py "
                f"says {self.python or 'nothing'}) beside Spark {self.jars or pyspark} jars. Install one release "
                f"of both, e.g. pyspark-client's: pip install --force-reinstall --no-deps "
                f"'pyspark=={client}' 'pyspark-client=={client}' (or pin both to one version in your "
                f"constraint file)")
        elif pyspark and self.python and self.python != pyspark:
            out.append(
                f"the pyspark package in {self.package} says it is {self.python} (version.py) but the installed "
                f"pyspark distribution is {pyspark}: reinstall it: pip install --force-reinstall --no-deps "
                f"'pyspark=={pyspark}'" + (f" 'pyspark-client=={pyspark}'" if client else ""))
        elif self.python and self.jars and self.python != self.jars:
            out.append(
                f"the PySpark Python package is {self.python} but its Spark jars ({self.jars_dir}) are "
                f"{self.jars}: a mixed install; reinstall one release of both: pip install "
                f"--force-reinstall --no-deps 'pyspark=={self.python}' 'pyspark-client=={self.python}'")
        return out

    def _external_problems(self) -> list[str]:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        out: list[str] = []
        fix = "unset SPARK_HOME to use the installed PySpark" + (f" {self.distributions['pyspark']}"
                                                               if self.distributions.get("pyspark") else "")
        if self.python and self.jars and self.python != self.jars:
            out.append(f"SPARK_HOME={self.spark_home} mixes releases: its Python files (python/lib/pyspark.zip) "
                       f"are {self.python}, its jars ({self.jars_dir}) {self.jars}: reinstall that Spark, or {fix}")
        try:
            outside = bool(self.jars and self.supported and
                           not SpecifierSet(self.supported).contains(self.jars, prereleases=True))
        except InvalidSpecifier:
            outside = False
        if outside:
            out.append(f"SPARK_HOME={self.spark_home} holds Spark {self.jars} (jars in {self.jars_dir}), which "
                       f"spark-submit would run, but this package runs on PySpark {self.supported}: point "
                       f"SPARK_HOME at a Spark of those releases, or {fix}")
        return out


def _read_version(path: Path) -> str | None:
    try:
        found = _VERSION.search(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return found.group(1) if found else None


def _jars_version(directory: Path) -> str | None:
    try:
        names = os.listdir(directory)
    except OSError:
        return None
    versions = {m.group(1) for m in map(_CORE_JAR.match, names) if m}
    return versions.pop() if len(versions) == 1 else None


def _distributions(site: Path) -> dict[str, str]:
    """The versions of the distributions in :data:`DISTRIBUTIONS` installed in ``site``: only the
    metadata directories named for them are read (not every distribution's metadata in ``site``)."""
    out: dict[str, str] = {}
    for wanted in DISTRIBUTIONS:
        for dist in importlib.metadata.distributions(name=wanted, path=[str(site)]):
            name = str(dist.metadata["Name"] or "").lower().replace("_", "-")
            if name in DISTRIBUTIONS and name not in out:
                out[name] = dist.version
    return out


def _zip_version(spark_home: Path) -> str | None:
    """The version in a Spark distribution's ``python/lib/pyspark.zip`` (else its ``python/pyspark``)."""
    try:
        with zipfile.ZipFile(spark_home / "python" / "lib" / "pyspark.zip") as bundled:
            found = _VERSION.search(bundled.read("pyspark/version.py").decode("utf-8"))
            return found.group(1) if found else None
    except (OSError, KeyError, zipfile.BadZipFile):
        return _read_version(spark_home / "python" / "pyspark" / "version.py")


def _supported() -> str | None:
    """The Spark releases this package runs on, from its installed ``pyspark`` requirement (None when
    not installed): its floor, and below the next major version. The requirement's ``<=`` cap only ties
    the two pip distributions to one release both publish (docs/install.md); a Spark distribution of
    the same major line is judged by its own files."""
    try:
        requires = importlib.metadata.requires("airflow-provider-seatunnel") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for line in requires:
        found = re.match(r"^pyspark\s*(\[[^\]]*\])?\s*([^;]*)", line)
        if found and found.group(2).strip():
            specifiers = [s.strip() for s in found.group(2).strip().strip("()").split(",") if s.strip()]
            return ",".join(_line_cap(s) for s in specifiers)
    return None


def _line_cap(specifier: str) -> str:
    """``<=4.2.0`` as ``<5`` (the major line); any other specifier as it is."""
    found = re.match(r"^<=\s*(\d+)", specifier)
    return f"<{int(found.group(1)) + 1}" if found else specifier


def inspect(package: Path | None = None, environ: Mapping[str, str] | None = None) -> PySparkInstall | None:
    """The Spark ``spark-submit`` would run (see the module docstring), for the ``pyspark`` package
    ``package`` (default: the importable one, found without importing it) and ``environ``'s
    ``SPARK_HOME`` (default ``os.environ``); None when no PySpark is installed."""
    if package is None:
        spec = importlib.util.find_spec("pyspark")
        if spec is None or not spec.submodule_search_locations:
            return None
        package = Path(next(iter(spec.submodule_search_locations)))
    env = os.environ if environ is None else environ
    home = (env.get("SPARK_HOME") or "").strip()
    distributions = _distributions(package.parent)
    if home and os.path.realpath(home) != os.path.realpath(package):
        jars_dir = Path(home) / "jars"
        return PySparkInstall(package=package, python=_zip_version(Path(home)), distributions=distributions,
                              jars_dir=jars_dir, jars=_jars_version(jars_dir), spark_home=home, supported=_supported())
    return PySparkInstall(package=package, python=_read_version(package / "version.py"), distributions=distributions,
                          jars_dir=package / "jars", jars=_jars_version(package / "jars"))


def check(install: PySparkInstall | None) -> None:
    """Raise :class:`PySparkMismatch` when ``install`` mixes releases (nothing to check: no error)."""
    problems = install.problems() if install is not None else []
    if problems:
        raise PySparkMismatch("not starting spark-submit: the Spark it would run is not one usable release:\n- "
                              + "\n- ".join(problems))


@cache
def _checked(package: str | None, spark_home: str | None) -> None:
    check(inspect(Path(package) if package else None))


def ensure_consistent() -> None:
    """:func:`check` the importable PySpark with this process's ``SPARK_HOME``, once per process
    (per package and Spark home). Raises :class:`PySparkMismatch`."""
    spec = importlib.util.find_spec("pyspark")
    package = next(iter(spec.submodule_search_locations), None) if spec and spec.submodule_search_locations else None
    _checked(package, os.environ.get("SPARK_HOME"))
