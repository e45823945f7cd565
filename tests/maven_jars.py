"""What the JVM-based test servers (Kafka, OpenSearch, Cassandra, HBase) share: their class path resolved
offline by Maven from the jars `make test-deps` fetched into ~/.m2, and a small launcher compiled with javac.

Both are cached under the server's own cache directory and redone when what they were made from changed (the
pom's text, a jar gone, the launcher's source); a concurrent test session sees a whole file or none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def classpath(cache: Path, pom: str, version: str, what: str, unavailable: type[Exception], hint: str) -> str:
    """The class path of the runtime dependencies ``pom`` names, resolved offline by Maven once and cached while
    every jar in it exists; ``unavailable(message)`` when Maven is missing or cannot resolve them (``what``: whose
    jars, for the message)."""
    cache.mkdir(parents=True, exist_ok=True)
    pom_file, cached = cache / "pom.xml", cache / f"classpath-{version}.txt"
    if cached.exists() and pom_file.exists() and pom_file.read_text() == pom:
        jars = cached.read_text().strip()
        if jars and all(Path(j).is_file() for j in jars.split(os.pathsep)):
            return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise unavailable(f"no mvn on PATH: {hint}")
    pom_file.write_text(pom)
    out = cache / f"classpath-{version}.{os.getpid()}.tmp"
    repository = os.path.join(os.path.expanduser("~"), ".m2", "repository")  # where `make test-deps` put them
    done = subprocess.run([mvn, "-o", "-q", "-B", "-f", str(pom_file), f"-Dmaven.repo.local={repository}",
                           "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath",
                           "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={out}"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0 or not out.exists():
        out.unlink(missing_ok=True)
        tail = (done.stdout + done.stderr)[-2000:]
        raise unavailable(f"Maven could not resolve {what}'s jars offline: {hint}\n{tail}")
    out.replace(cached)  # atomic: a concurrent session reads either no file or a whole one
    return cached.read_text().strip()


def compiled_launcher(cache: Path, source: Path, jars: str, unavailable: type[Exception], hint: str) -> Path:
    """The directory of ``source`` (one Java class) compiled against ``jars``, compiled again when the source
    changed; ``unavailable(message)`` without javac or when it fails."""
    target = cache / "launcher"
    name = source.stem
    stamp = target / f"{name}.source"
    text = source.read_text()
    if stamp.exists() and stamp.read_text() == text and (target / f"{name}.class").exists():
        return target
    javac = shutil.which("javac")
    if javac is None:
        raise unavailable(f"no javac on PATH: {hint}")
    work = Path(tempfile.mkdtemp(prefix="launcher-", dir=cache))
    done = subprocess.run([javac, "-d", str(work), "-cp", jars, str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise unavailable(f"javac failed on {source}: {done.stderr[-2000:]}")
    (work / f"{name}.source").write_text(text)
    shutil.rmtree(target, ignore_errors=True)
    try:
        work.rename(target)
    except OSError:  # another session compiled it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return target
