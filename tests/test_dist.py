"""The built distribution, installed the way a user installs it: the wheel into a fresh environment (over this
environment's packages, ``--no-deps --no-index``: nothing is downloaded), then its command line and Airflow's
entry points run from the installed copy, never from this source tree."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import tomllib
import venv
from pathlib import Path

from .conftest import ROOT

CHECK = """
import json
from importlib.metadata import distribution, entry_points
import airflow_provider_seatunnel as package
providers = [e for e in entry_points(group="apache_airflow_provider") if e.value.startswith("airflow_provider_seatunnel")]
plugins = [e for e in entry_points(group="airflow.plugins") if e.value.startswith("airflow_provider_seatunnel")]
info = providers[0].load()()
plugin = plugins[0].load()
dist = distribution("airflow-provider-seatunnel")
print(json.dumps({"package": package.__file__, "providers": len(providers), "plugins": len(plugins),
                  "name": info["package-name"], "plugin": plugin.name, "static": [str(f) for f in dist.files
                  if "ui/static" in str(f)], "urls": dist.metadata.get_all("Project-URL")}))
"""


def _sources(into: Path) -> Path:
    """What the build reads (it writes build/ and .egg-info beside the sources: a copy keeps the tree clean)."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, into / name)
    shutil.copytree(ROOT / "docs", into / "docs")
    shutil.copytree(ROOT / "airflow_provider_seatunnel", into / "airflow_provider_seatunnel",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def test_the_wheel_installs_into_a_fresh_environment_and_runs_from_there(tmp_path):
    bin_dir = Path(sys.executable).parent
    src = _sources(tmp_path / "src")
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=600)
    wheel, sdist = sorted((tmp_path / "dist").iterdir(), key=lambda p: p.suffix != ".whl")
    assert wheel.name.endswith("-py3-none-any.whl") and sdist.name.endswith(".tar.gz")
    twine = subprocess.run([str(bin_dir / "twine"), "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=300)
    assert twine.returncode == 0, twine.stdout + twine.stderr
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # this environment's packages (Airflow, PySpark, sqlglot...) after the fresh one's, as --system-site-packages
    # would give a venv made from the base interpreter; a path line runs none of the .pth files there (not the
    # editable install's finder of this source tree)
    fresh_site = next((env_dir / "lib").glob("python3*/site-packages"))
    (fresh_site / "project_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-index", "--force-reinstall", str(wheel)],
                             capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr
    # the command line's entry point, from the fresh environment, on an example config
    validate = subprocess.run([str(env_dir / "bin" / "seatunnel-airflow"), "validate",
                               str(ROOT / "dags" / "configs" / "example.conf")],
                              capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert validate.returncode == 0 and "valid" in validate.stdout, validate.stdout + validate.stderr
    # the provider's and the view's entry points, loaded from the installed copy (not this source tree)
    check = subprocess.run([str(python), "-c", CHECK], capture_output=True, text=True, timeout=300, env=env,
                           cwd=tmp_path)
    assert check.returncode == 0, check.stderr[-3000:]
    found = json.loads(check.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).is_relative_to(env_dir), found["package"]
    assert (found["providers"], found["plugins"]) == (1, 1)
    assert found["name"] == "airflow-provider-seatunnel" and found["plugin"] == "seatunnel"
    assert {Path(f).name for f in found["static"]} >= {"run.html", "run.js", "run.css"}
    # no Documentation URL until a page is published (docs/install.md): the docs ship in the sdist
    assert "urls" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [u for u in found["urls"] or [] if u.lower().startswith("documentation")], found["urls"]
    with tarfile.open(sdist) as tar:
        shipped = {Path(n).relative_to(Path(n).parts[0]).as_posix() for n in tar.getnames() if "/" in n}
    docs = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*") if p.is_file()}
    assert docs <= shipped and {"README.md", "CHANGELOG.md"} <= shipped, sorted(docs - shipped)
