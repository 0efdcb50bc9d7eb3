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


# Ansible parses its YAML (PyYAML, AnsibleLoader) before it renders any Jinja2 (audit23 D2: the hint told an
# Ansible author to run helm); a role's templates/ are Jinja2 the template module renders first, so they keep it.
BROKEN_PLAY = """\
- hosts: head
  tasks:
    - name: Check the image
      shell: docker images -q vllm-ray:{{ vllm_version }}
      register: img_check
    - debug: msg="Image state before build: {{ img_check.stdout }}"
"""


def test_an_ansible_playbook_gets_no_render_hint(tmp_path):
    path = tmp_path / "site.yml"
    path.write_text(BROKEN_PLAY)
    [message] = _messages(path)
    assert "mapping values are not allowed here" in message and "render it first" not in message


def test_an_ansible_task_file_gets_no_render_hint_by_its_place(tmp_path):
    path = tmp_path / "roles" / "vllm" / "tasks" / "main.yml"
    path.parent.mkdir(parents=True)
    path.write_text(BROKEN_PLAY.split("  tasks:\n", 1)[1].replace("\n    ", "\n").lstrip())
    [message] = _messages(path)
    assert "render it first" not in message


def test_an_argo_workflow_and_a_kustomization_get_no_render_hint(tmp_path):
    workflow = tmp_path / "bench-workflow.yaml"
    workflow.write_text("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: bench-\n"
                        "spec:\n  entrypoint: main\n  templates:\n  - name: main\n    container:\n"
                        "      image: vllm/vllm-openai:v0.9.2\n      args: [--model, '{{inputs.parameters.model}}']\n"
                        "       bad: indentation\n")
    kustomization = tmp_path / "kustomization.yaml"
    kustomization.write_text("resources:\n- vllm.yaml\nimages:\n- name: vllm/vllm-openai\n  newTag: {{ tag }}\n"
                             "   bad: indentation\n")
    [workflow_message] = _messages(workflow)
    [kustomize_message] = _messages(kustomization)
    assert "render it first" not in workflow_message and "render it first" not in kustomize_message


def test_a_role_template_keeps_its_render_hint(tmp_path):
    path = tmp_path / "roles" / "vllm" / "templates" / "deployment.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(BROKEN_POD.format(name="{{ app_name }}"))
    messages = _messages(path)
    assert messages and all("render it first" in m for m in messages)
