"""constraints.txt, the exact versions the GitHub Action installs, stays in step with pyproject.toml: every runtime
dependency and everything it pulls in is pinned with ==, each pin lies inside pyproject's range, and the action
installs with it."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, Version]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==" and "*" not in spec.version, f"not an exact pin: {line}"
        assert canonical(req.name) not in out, f"pinned twice: {req.name}"
        out[canonical(req.name)] = Version(spec.version)
    return out


def project() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_runtime_dependency_is_pinned_inside_pyprojects_range():
    pinned = pins()
    data = project()
    requirements = [Requirement(r) for r in data["project"]["dependencies"]]
    requirements += [Requirement(r) for r in data["build-system"]["requires"]]
    for req in requirements:  # markers included: the pin must hold on every Python the package supports
        name = canonical(req.name)
        assert name in pinned, f"{req.name} ({req}) is not pinned in constraints.txt"
        assert req.specifier.contains(pinned[name], prereleases=True), f"{name}=={pinned[name]} is outside {req}"


def test_what_the_dependencies_pull_in_is_pinned_too():
    """The closure of the runtime dependencies, read from the installed distributions' metadata (this test
    environment installs them): a dependency's own new dependency must be pinned as well."""
    import importlib.metadata as metadata

    pinned = pins()
    environment = default_environment() | {"python_version": "3.12", "python_full_version": "3.12.0", "extra": ""}
    todo = [Requirement(r) for r in project()["project"]["dependencies"]]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        name = canonical(req.name)
        if name in seen or (req.marker and not req.marker.evaluate(environment)):
            continue
        seen.add(name)
        assert name in pinned, f"{req.name} (needed for {req}) is not pinned in constraints.txt"
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue  # not installed here (another platform's dependency): pinned is what can be checked
        todo += [Requirement(r) for r in dist.requires or []]
    extra = set(pinned) - seen - {canonical(Requirement(r).name) for r in project()["build-system"]["requires"]}
    extra -= {"tomli"}  # Python 3.10's TOML reader, not needed on the action's Python 3.12
    assert not extra, f"pinned but not needed: {sorted(extra)}"


def test_the_action_installs_with_the_constraints():
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert 'PIP_CONSTRAINT="$VRAMLINT_ACTION_PATH/constraints.txt"' in text
    # the action's checkout ships the file: nothing in packaging leaves it out of a git checkout
    assert (ROOT / "constraints.txt").is_file()
