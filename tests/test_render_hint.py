"""An invalid-YAML error in a file with template syntax names a render step only where the file has one: a Helm-like
`{{ }}` file gets `helm template`, an envsubst-style `${VAR}` file gets envsubst, and GitHub workflows and compose
files, which are used as written (`${{ }}` GitHub's, `${VAR}` compose's or a `run:` script's), get none (audit20 H1:
a workflow's bash `${files[@]}` made the hint tell a workflow author to run helm)."""

from __future__ import annotations

from vramlint.scan import scan

BROKEN_WORKFLOW = """\
name: ci
on: push
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - run: |
          python -c "
import yaml
          "
      - run: for f in "${files[@]}"; do vllm serve "$f"; done
"""

BROKEN_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
   bad: indentation
spec:
  containers:
  - name: engine
    image: vllm/vllm-openai:v0.9.2
"""


def _messages(path):
    return [p.message for p in scan([str(path)]).problems if p.message.startswith("invalid YAML")]


def test_a_github_workflow_gets_no_render_hint(tmp_path):
    path = tmp_path / ".github" / "workflows" / "ci.yml"
    path.parent.mkdir(parents=True)
    path.write_text(BROKEN_WORKFLOW)
    [message] = _messages(path)
    assert "render it first" not in message


def test_a_compose_file_gets_no_render_hint(tmp_path):
    path = tmp_path / "docker-compose.yml"
    path.write_text("services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n     command: bad\n")
    [message] = _messages(path)
    assert "render it first" not in message


def test_a_manifest_names_the_render_step_its_syntax_needs(tmp_path):
    helm = tmp_path / "pod-helm.yaml"
    helm.write_text(BROKEN_POD.format(name="{{ .Values.name }}"))
    env = tmp_path / "pod-env.yaml"
    env.write_text(BROKEN_POD.format(name="${NAME}"))
    [helm_message] = _messages(helm)
    [env_message] = _messages(env)
    assert "helm template" in helm_message
    assert "envsubst" in env_message and "helm" not in env_message
