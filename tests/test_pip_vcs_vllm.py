"""pip's VCS form of vLLM's repository in a Dockerfile RUN (issue 9, knownleft3 b): a release tag after the last
`@` is the release pip builds; a branch or a commit names none, so the version is unknown and said once."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.versions import pip_installed_vllm, pip_installs_vllm


def _dockerfile(root, folder, run, base="python:3.11"):
    path = root / folder / "Dockerfile"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(f"""\
        FROM {base}
        RUN {run}
        CMD ["vllm", "serve", "facebook/opt-125m", "--max-model-len", "2048"]
        """))


def test_a_release_tag_in_a_git_requirement_is_the_release_installed():
    assert pip_installed_vllm('pip install "vllm @ git+https://github.com/vllm-project/vllm@v0.9.2"') == "0.9.2"
    assert pip_installed_vllm("pip3 install git+https://github.com/vllm-project/vllm.git@v0.8.5.post1") == "0.8.5.post1"
    # a branch, a commit or no ref builds whatever the repository holds then: vLLM, no release
    for ref in ("@main", "@3f1a2b9c", ""):
        run = f"pip install git+https://github.com/vllm-project/vllm.git{ref}"
        assert (pip_installed_vllm(run), pip_installs_vllm(run)) == (None, True)
    # another repository's tag is not vLLM's
    run = "pip install git+https://github.com/acme/vllm-plugin.git@v0.9.2"
    assert (pip_installed_vllm(run), pip_installs_vllm(run)) == (None, False)


def test_a_dockerfile_built_from_vllms_git_tag_runs_that_release(tmp_path, capsys):
    _dockerfile(tmp_path, "tag", 'pip install "vllm @ git+https://github.com/vllm-project/vllm@v0.9.2"')
    _dockerfile(tmp_path, "branch", "pip install git+https://github.com/vllm-project/vllm.git@main",
                base="vllm/vllm-openai:v0.6.3")
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    versions = {s["file"].rsplit("/", 2)[-2]: s["vllm_version"] for s in report["servers"]}
    assert versions == {"tag": "0.9.2", "branch": None}
    # a branch of vLLM's repository is a build from source: said once, as no release (no longer "not pinned")
    said = [f for f in report["findings"] if "vLLM built from source (vllm-project/vllm at main)" in f["message"]]
    assert [f["file"].rsplit("/", 2)[-2] for f in said] == ["branch"]
