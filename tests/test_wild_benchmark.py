"""The wild benchmark's inputs hang together: every indexed file is saved, has an answer entry and a source."""

from __future__ import annotations

import csv
import posixpath
import re
from pathlib import Path

import yaml

WILD = Path(__file__).resolve().parent.parent / "benchmarks" / "wild"


def _index() -> list[dict[str, str]]:
    with open(WILD / "INDEX.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _answers() -> dict:
    return yaml.safe_load((WILD / "answers.yaml").read_text())["files"]


def _refers_to(referrer: dict[str, str], target: dict[str, str]) -> bool:
    """``referrer`` names ``target`` by a path relative to its own folder (a compose build context, a Kustomize
    `resources:` or `patches:` entry), as the file itself or a folder holding it."""
    base = posixpath.dirname(referrer["path"])
    text = (WILD / "files" / referrer["saved_file"]).read_text(encoding="utf-8")
    for word in re.findall(r"[\w./-]+", text):
        if "/" not in word and word != posixpath.basename(target["path"]):
            continue
        resolved = posixpath.normpath(posixpath.join(base, word))
        if target["path"] == resolved or target["path"].startswith(resolved + "/"):
            return True
    return False


def test_every_indexed_file_is_saved_with_its_source_and_license():
    rows = _index()
    assert len({row["repo"] for row in rows}) >= 30
    for row in rows:
        saved = WILD / "files" / row["saved_file"]
        assert saved.is_file(), row["saved_file"]
        assert saved.stat().st_size < 200_000, row["saved_file"]
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
        assert row["license"], row
        owner, repo = row["repo"].split("/")
        flat = f"{owner}__{repo}/{row['path'].replace('/', '__')}"
        # a Helm chart is kept whole (its templates/ beside Chart.yaml, as helm and vramlint find them): the
        # chart's folder is flattened, the paths inside it are not
        charts = [r["path"].rsplit("/", 1)[0] for r in rows
                  if r["repo"] == row["repo"] and r["path"].endswith("/Chart.yaml")]
        in_chart = [c for c in charts if row["path"].startswith(c + "/")]
        kept = [f"{owner}__{repo}/{c.replace('/', '__')}/{row['path'][len(c) + 1:]}" for c in in_chart]
        # a file that another saved file of the repository names by a relative path (a script a compose file
        # bind-mounts, a build context, a Kustomize base), or that names one so, keeps the repository's own
        # layout, so the reference resolves inside files/
        as_in_repo = f"{owner}__{repo}/{row['path']}"
        referenced = as_in_repo != flat and any(
            r["repo"] == row["repo"] and r is not row
            and (("./" + row["path"]) in (WILD / "files" / r["saved_file"]).read_text(encoding="utf-8")
                 or _refers_to(r, row) or _refers_to(row, r))
            for r in rows)
        assert row["saved_file"] == flat or row["saved_file"] in kept or (
            referenced and row["saved_file"] == as_in_repo), row


def test_answer_key_covers_exactly_the_indexed_files():
    assert set(_answers()) == {row["saved_file"] for row in _index()}


def test_answer_lines_exist_and_rules_are_rule_ids():
    for saved, key in _answers().items():
        n_lines = len((WILD / "files" / saved).read_text(encoding="utf-8").splitlines())
        for section in ("errors", "not_errors", "uncertain"):
            for entry in key.get(section) or []:
                assert 1 <= entry["line"] <= n_lines, (saved, section, entry)
        for error in key.get("errors") or []:
            assert error["rules"] and all(re.fullmatch(r"VRL\d{3}", r) for r in error["rules"]), (saved, error)
            assert error["what"].strip(), (saved, error)
        for server in key.get("servers") or []:
            assert {"name", "model", "hub_id", "gpu", "gpus", "vllm", "required"} <= set(server), (saved, server)
            if server["hub_id"]:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+", server["model"]), (saved, server)
