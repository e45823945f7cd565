"""What makes a pipeline's driver JVM start faster on this machine, the pipeline's output unchanged.

* **Class-data sharing.** A driver JVM spends seconds loading and verifying Spark's classes. The first
  launch for a given Java and Spark writes the classes it loaded to an archive when it exits
  (``-XX:ArchiveClassesAtExit``); every later launch maps that archive (``-XX:SharedArchiveFile``).
  Archives live in a private directory (0700: an archive is code the JVM runs), one per key: the Java
  installation and Spark's jars (:func:`archive_key`), so a new Java or Spark makes a new archive and
  never meets an old one. One launch at a time creates an archive (a lock file made with ``O_EXCL``);
  it is published by a rename only when that launch exited 0 (:meth:`ClassArchive.finish`), so a
  reader never sees a half-written one. An archive the JVM finds unusable all the same is ignored by
  the JVM itself, which then loads classes as usual. ``[seatunnel] jvm_archive_dir`` (or
  ``SEATUNNEL_JVM_ARCHIVE_DIR``) names the directory; ``off`` turns this off.
* **No Spark UI for a local master.** A ``local`` application's UI lives as long as the pipeline, on
  this machine; starting it costs its web server's start. A cluster's driver keeps its UI (the
  resource manager links to it).
* **The optimising compiler later for a local master** (:data:`LATE_C2`). Most of a small local
  job's CPU time is the JVM compiling Spark's start-up and planning code, which runs warm but never
  hot: the server compiler (C2) comes in after 20 times the JVM's default invocation and loop counts,
  so it compiles only what stays hot. A large job's per-row code reaches those counts within its first
  fraction of a second and is compiled as before; until then the client compiler's (C1) code runs.

A setting the job (or ``spark-defaults.conf``) gives wins: ``spark.ui.enabled`` is left as set, and
``spark.driver.extraJavaOptions`` that already choose a class-data sharing mode (``-Xshare``,
``-XX:SharedArchiveFile``, ``-XX:ArchiveClassesAtExit``) get no archive, those that already choose
how the JVM compiles (``-XX:Tier...``, ``-XX:[+-]TieredCompilation``, ``-XX:CompileThreshold...``,
``-Xint``, ``-Xcomp``) no compiler thresholds; other options are kept and ours follow them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import settings

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
UI_ENABLED = "spark.ui.enabled"
CLASS_PATH = "spark.driver.extraClassPath"
#: options by which the user already chose what the JVM does with class-data sharing
_OWN_SHARING = re.compile(r"(^|\s)(-Xshare:|-XX:SharedArchiveFile=|-XX:ArchiveClassesAtExit=)")
#: options by which the user already chose how the JVM compiles
_OWN_COMPILATION = re.compile(r"(^|\s)(-XX:[+-]?Tiered|-XX:Tier\d|-XX:CompileThreshold|-Xint(\s|$)|-Xcomp(\s|$))")
#: the server compiler (C2) for code 20 times hotter than the JVM's defaults (5,000 invocations,
#: 600 with loops, 15,000 invocations and loop iterations, 40,000 loop iterations)
LATE_C2 = ("-XX:Tier4InvocationThreshold=100000 -XX:Tier4MinInvocationThreshold=12000 "
           "-XX:Tier4CompileThreshold=300000 -XX:Tier4BackEdgeThreshold=800000")
#: a creation lock this old (seconds) belongs to a launch that died before finishing: taken over
STALE_LOCK_SECONDS = 3600
#: archives kept (about 150 MB each): one per Java, Spark and driver classpath in use
KEEP_ARCHIVES = 3
_LOCAL_MASTER = re.compile(r"local(\[[^\]]*\])?$")


def is_local_master(master: str | None) -> bool:
    """Whether ``master`` runs the whole application in the driver's JVM (``local``, ``local[N]``,
    ``local[*]``, ``local[N,F]``)."""
    return bool(master) and bool(_LOCAL_MASTER.match(str(master).strip()))


def archive_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory of the class archives: the setting, else the user cache directory; None when ``off``."""
    return settings.cache_directory(settings.JVM_ARCHIVE_DIR, "jvm", environ)


def java_executable(environ: Mapping[str, str]) -> Path | None:
    """The ``java`` spark-submit starts: ``$JAVA_HOME/bin/java``, else the first on ``PATH``; resolved."""
    home = environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java", path=environ.get("PATH"))
    return Path(found).resolve() if found and os.path.isfile(found) else None


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def archive_key(environ: Mapping[str, str], class_path: str = "") -> str | None:
    """What an archive depends on, hashed: the Java executable and its JVM library, Spark's home, its
    jars (names, sizes, times), the configuration directory and the driver's extra ``class_path`` (the
    JVM's classpath); None without a Java or a Spark home."""
    java = java_executable(environ)
    spark_home = environ.get("SPARK_HOME")
    if java is None or not spark_home or not (Path(spark_home) / "jars").is_dir():
        return None
    parts = [_stamp(java), *(_stamp(lib) for lib in sorted(java.parent.parent.glob("lib/*/libjvm.so")))]
    parts += [environ.get("SPARK_CONF_DIR") or "", str(Path(spark_home).resolve()), class_path]
    parts += sorted(_stamp(jar) for jar in (Path(spark_home) / "jars").iterdir())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ClassArchive:
    """The class archive of one launch: ``path`` (the published archive), and when this launch creates
    it, ``creating`` (where its JVM writes at exit) and ``lock`` (held until :meth:`finish`)."""

    path: Path
    creating: Path | None = None
    lock: Path | None = None

    @property
    def java_option(self) -> str:
        """The options for the driver JVM: map the archive, or write a new one at exit, without the
        hundreds of lines the JVM logs then about classes it leaves out (they would push a failed run's
        cause out of the log's tail, where the failure message is read from)."""
        if self.creating is not None:
            return f"-XX:ArchiveClassesAtExit={self.creating} -Xlog:cds*=off"
        return f"-XX:SharedArchiveFile={self.path}"

    def finish(self, succeeded: bool) -> bool:
        """After the launch: publish the archive it wrote (only if it ``succeeded``: exit 0, and a file was
        written), remove what is left of it otherwise, and release the lock. Whether one was published."""
        if self.creating is None:
            return False
        published = False
        try:
            if succeeded and self.creating.is_file() and self.creating.stat().st_size > 0:
                os.replace(self.creating, self.path)
                published = True
        except OSError:
            published = False
        finally:
            with contextlib.suppress(OSError):
                self.creating.unlink()
            if self.lock is not None:
                with contextlib.suppress(OSError):
                    self.lock.unlink()
        return published


def class_archive(environ: Mapping[str, str] | None = None, class_path: str = "") -> ClassArchive | None:
    """The archive this launch maps, or the one it creates (when none exists and no other launch is
    creating it); None when class-data sharing is off, no key can be made, the directory is not this
    user's private one, or another launch is creating the archive. ``class_path``: the driver's
    ``spark.driver.extraClassPath`` (an archive serves one classpath)."""
    from ..spi.safe_files import UnsafePath, ensure_private_dir, open_fd

    env = os.environ if environ is None else environ
    directory = archive_dir(env)
    key = archive_key(env, class_path) if directory is not None else None
    if directory is None or key is None:
        return None
    try:
        ensure_private_dir(str(directory))
    except OSError:
        return None
    path = directory / f"driver-{key}.jsa"
    if path.is_file() and not path.is_symlink():
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: the last to be pruned
        return ClassArchive(path)
    lock = directory / f"driver-{key}.lock"
    if _stale(lock):
        with contextlib.suppress(OSError):
            lock.unlink()
    try:
        fd = open_fd(str(lock), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, "the class archive lock")
    except (OSError, UnsafePath):  # another launch is creating it (or the directory refuses): none this time
        return None
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    _prune(directory)
    return ClassArchive(path, creating=directory / f"driver-{key}.{uuid.uuid4().hex[:8]}.part", lock=lock)


def _stale(lock: Path) -> bool:
    """Whether a creation ``lock`` was left by a launch that is gone: its process (the pid it holds) has
    exited, or it is older than :data:`STALE_LOCK_SECONDS`."""
    try:
        if time.time() - lock.lstat().st_mtime > STALE_LOCK_SECONDS:
            return True
        pid = int(lock.read_text().strip() or "0")
    except (OSError, ValueError):
        return False  # none, or being written just now
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _used(path: Path) -> float:
    with contextlib.suppress(OSError):
        return path.lstat().st_mtime
    return 0.0


def _prune(directory: Path) -> None:
    """Before an archive is created: the least recently used archives past :data:`KEEP_ARCHIVES` - 1
    (an earlier Java or Spark's) and the parts killed launches left are removed (a JVM still mapping
    one keeps its pages)."""
    by_use = sorted(directory.glob("driver-*.jsa"), key=_used, reverse=True)
    for old in by_use[KEEP_ARCHIVES - 1:]:
        with contextlib.suppress(OSError):
            old.unlink()
    for part in directory.glob("driver-*.part"):
        with contextlib.suppress(OSError):
            if time.time() - part.lstat().st_mtime > STALE_LOCK_SECONDS:
                part.unlink()


def chooses_sharing(java_options: str | None) -> bool:
    """Whether ``java_options`` already say what the JVM does with class-data sharing."""
    return bool(java_options) and bool(_OWN_SHARING.search(str(java_options)))


def chooses_compilation(java_options: str | None) -> bool:
    """Whether ``java_options`` already say how the JVM compiles (tiers, thresholds, interpreter only)."""
    return bool(java_options) and bool(_OWN_COMPILATION.search(str(java_options)))


def archive_for(conf: Mapping[str, str], defaults: Mapping[str, str],
                environ: Mapping[str, str] | None = None) -> ClassArchive | None:
    """The class archive of a launch with the settings ``conf`` over ``defaults``
    (``spark-defaults.conf``): None when their driver Java options already choose a class-data
    sharing mode (the user's choice wins), else :func:`class_archive`."""
    if chooses_sharing(conf.get(JAVA_OPTIONS, defaults.get(JAVA_OPTIONS))):
        return None
    return class_archive(environ, conf.get(CLASS_PATH, defaults.get(CLASS_PATH, "")))


def startup_conf(conf: Mapping[str, str], defaults: Mapping[str, str], master: str | None,
                 archive: ClassArchive | None) -> dict[str, str]:
    """``conf`` with the start-up settings (module docstring) added where neither ``conf`` nor
    ``defaults`` (``spark-defaults.conf``) set them: the UI off and the later server compiler
    (:data:`LATE_C2`) for a local ``master``, the ``archive``'s option; both options appended to the
    driver's Java options (those of ``conf``, else of ``defaults``)."""
    out = dict(conf)
    local = is_local_master(master)
    if local and UI_ENABLED not in conf and UI_ENABLED not in defaults:
        out[UI_ENABLED] = "false"
    own = conf.get(JAVA_OPTIONS, defaults.get(JAVA_OPTIONS, ""))
    added = [archive.java_option] if archive is not None and not chooses_sharing(own) else []
    if local and not chooses_compilation(own):
        added.append(LATE_C2)
    if added:
        out[JAVA_OPTIONS] = " ".join([own, *added]).strip()
    return out


def spark_defaults_file(environ: Mapping[str, str]) -> Path | None:
    """``spark-defaults.conf`` of ``SPARK_CONF_DIR``, else of ``SPARK_HOME/conf``, when it is a file."""
    conf_dir = environ.get("SPARK_CONF_DIR") or (str(Path(environ["SPARK_HOME"]) / "conf")
                                                if environ.get("SPARK_HOME") else None)
    path = Path(conf_dir) / "spark-defaults.conf" if conf_dir else None
    return path if path is not None and path.is_file() else None


def spark_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings of :func:`spark_defaults_file`, as spark-submit reads them without
    ``--properties-file``: ``key value`` (or ``key=value``, ``key:value``) lines, comments (``#``,
    ``!``) skipped, values trimmed."""
    path = spark_defaults_file(environ)
    out: dict[str, str] = {}
    for line in (path.read_text(encoding="utf-8", errors="replace").splitlines() if path else []):
        line = line.strip()
        if line and line[0] not in "#!":
            found = re.match(r"(\S+?)(?:\s*[=:]\s*|\s+)(.*)$", line)
            key, value = (found[1], found[2]) if found else (line, "")
            out[key] = value.strip()
    return out
