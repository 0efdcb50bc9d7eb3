"""The package as users get it: a wheel, installed into a fresh virtual environment outside the source tree.

The wheel is built by pip from a copy of the checkout (build isolation: setuptools comes from the package
index, as for `pip install .`). The virtual environment sees the test environment's site-packages for the
runtime dependencies (no network needed for them), but vramlint itself comes from the wheel: the test
asserts where it is imported from. The test environment may hold vramlint itself (CI installs it with
`pip install .`), so the wheel is installed with --ignore-installed; without it pip finds the same version
already there and does nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _version() -> str:
    from vramlint import __version__

    return __version__


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    ignore = shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache", ".venv"
    )
    shutil.copytree(ROOT, source, ignore=ignore)
    out = base / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("vramlint-*.whl")
    return built


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    # The runtime dependencies come from the environment running the tests, wherever that is (a virtual
    # environment locally, the interpreter's own site-packages in CI): its folders are appended to the new
    # environment's path, after the environment's own site-packages, where the wheel goes.
    purelib = subprocess.run([str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_test_environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    proc = subprocess.run(
        [str(path / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return path


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update({"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"})
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_wheel_is_named_for_the_version(wheel):
    assert wheel.name == f"vramlint-{_version()}-py3-none-any.whl"


def test_wheel_carries_rules_catalogs_and_schema(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"vramlint/rules/{p.name}" for p in (ROOT / "rules").glob("*.py")}
    expected |= {f"vramlint/{p.relative_to(ROOT / 'vramlint').as_posix()}" for p in (ROOT / "vramlint" / "data").rglob("*.json")}
    expected |= {f"vramlint/schema/{p.name}" for p in (ROOT / "vramlint" / "schema").glob("*.json")}
    expected |= {f"vramlint/{p.relative_to(ROOT / 'vramlint').as_posix()}" for p in (ROOT / "vramlint").rglob("*.py")}
    missing = sorted(expected - names)
    assert not missing, missing
    # The things the product cannot work without, named so that an empty folder cannot pass.
    assert any(n.startswith("vramlint/rules/vrl") for n in names)
    assert "vramlint/data/gpus.json" in names
    assert any(n.startswith("vramlint/data/models") and n.endswith(".json") for n in names)
    assert any(n.startswith("vramlint/schema/") and n.endswith(".json") for n in names)
    assert "vramlint/__main__.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "vramlint = vramlint.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert not any(n.startswith(("tests/", "examples/", "benchmarks/")) for n in names)


def test_installed_package_comes_from_the_wheel(venv, tmp_path):
    proc = _run(venv, str(venv / "bin" / "python"), "-c", "import vramlint; print(vramlint.__file__)", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve().is_relative_to(venv.resolve()), proc.stdout


def test_version_from_console_script_and_module(venv, tmp_path):
    expected = f"vramlint {_version()}"
    script = _run(venv, str(venv / "bin" / "vramlint"), "--version", cwd=tmp_path)
    assert script.returncode == 0, script.stderr
    assert script.stdout.strip() == expected
    module = _run(venv, str(venv / "bin" / "python"), "-m", "vramlint", "--version", cwd=tmp_path)
    assert module.returncode == 0, module.stderr
    assert module.stdout.strip() == expected


def _findings(proc: subprocess.CompletedProcess) -> list[tuple]:
    data = json.loads(proc.stdout)
    return sorted((f["rule"], f["file"], f["line"], f["level"]) for f in data["findings"])


def test_installed_vramlint_lints_the_examples_like_the_source_tree(venv, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    installed = _run(venv, str(venv / "bin" / "vramlint"), "check", "examples", "--output-format", "json", cwd=tmp_path)
    assert installed.returncode == 1, installed.stderr  # the examples contain errors on purpose
    source_env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    source = subprocess.run(
        [sys.executable, "-m", "vramlint", "check", "examples", "--output-format", "json"],
        cwd=tmp_path,
        env=source_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert source.returncode == 1, source.stderr
    assert _findings(installed) == _findings(source)
    rules = {f[0] for f in _findings(installed)}
    assert "VRL005" in rules  # the will-not-start example: needs the model and GPU catalogs from the wheel
    servers = json.loads(installed.stdout)["servers"]
    assert all(s.get("budget") for s in servers if s["file"].endswith("llama-3.2-3b-t4.yaml")), servers


def test_changelog_names_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{_version()}]" in text
