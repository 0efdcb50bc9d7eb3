"""Kubernetes manifests written by a shell script's here-documents: read as manifest files, found on the script's
lines, variables expanded only from the script's own literal assignments."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.extract import heredocs
from vramlint.scan import scan


def _write(tmp_path, name, *parts):
    """A script of these parts, each dedented on its own (a manifest between two pieces of shell)."""
    path = tmp_path / name
    path.write_text("".join(textwrap.dedent(part) for part in parts))
    return str(path)


def _check(capsys, path):
    code = main(["check", path, "--offline", "--output-format", "json", "--fail-on", "error"])
    return code, json.loads(capsys.readouterr().out)


_DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {name}
    spec:
      selector:
        matchLabels: {{app: {name}}}
      template:
        metadata:
          labels: {{app: {name}}}
        spec:
          containers:
          - name: server
            image: {image}
            args: [{args}]
            resources:
              limits:
                nvidia.com/gpu: {gpus}
"""


def _deployment(name, image, args, gpus):
    return textwrap.dedent(_DEPLOYMENT).format(name=name, image=image, args=args, gpus=gpus)


def test_piped_to_kubectl_apply_with_the_scripts_own_variables(tmp_path):
    path = _write(tmp_path, "deploy.sh", """\
        #!/usr/bin/env bash
        set -euo pipefail
        MODEL=Qwen/Qwen2.5-7B-Instruct
        export VLLM_TAG=${VLLM_TAG:-v0.9.2}
        cat <<EOF | kubectl apply -n serving -f -
    """, _deployment("chat", "vllm/vllm-openai:${VLLM_TAG}", '"--model", "$MODEL", "--max-model-len", "8192", '
                      '"--api-key", "$API_KEY"', '"2"'), """\
        EOF
        kubectl rollout status deploy/chat
        """)
    inv = scan([path])
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.vllm_version == "0.9.2"
    assert server.gpu.count == 2 and server.args["max_model_len"] == 8192
    lines = open(path).read().split("\n")
    assert "$MODEL" in lines[server.model_location.line - 1]  # the script's own line
    assert "image: vllm/vllm-openai" in lines[server.image_location.line - 1]
    # the unknown variable said once, the default taken said once, on the one server
    notes = [n for n in server.notes if "$API_KEY" in n]
    assert len(notes) == 1 and "unknown" in notes[0]
    assert any("${VLLM_TAG}" in n and "default" in n for n in server.notes)
    # no "mentions vLLM but starts no vLLM server" note for the script
    assert not any("starts no vLLM server" in p.message for p in inv.problems)


def test_quoted_delimiter_expands_nothing_and_kubernetes_expands_its_own_variables(tmp_path):
    # `<<'EOF'`: the shell leaves `$(MODEL_ID)` alone, so Kubernetes substitutes the container's MODEL_ID; the
    # same body under `<<EOF` would be a command substitution, unknown
    body = """\
        apiVersion: v1
        kind: Pod
        metadata: {name: one}
        spec:
          containers:
          - name: vllm
            image: vllm/vllm-openai:v0.8.5
            env:
            - {name: MODEL_ID, value: facebook/opt-125m}
            args: ["--model", "$(MODEL_ID)"]
    """
    quoted = _write(tmp_path, "quoted.sh", "kubectl apply -f - <<'EOF'\n", body, "EOF\n")
    plain = _write(tmp_path, "plain.sh", "kubectl apply -f - <<EOF\n", body, "EOF\n")
    [q] = scan([quoted]).servers
    # the model is where MODEL_ID's value is written (the line that sets it), not the `$(MODEL_ID)` item
    assert q.model == "facebook/opt-125m" and q.vllm_version == "0.8.5" and q.model_location.line == 10
    [p] = scan([plain]).servers
    assert p.model is None
    assert any("$(MODEL_ID)" in n and "unknown" in n for n in p.notes)


def test_appended_heredocs_make_one_file_and_findings_land_on_the_script_line(tmp_path, capsys):
    path = _write(tmp_path, "install.sh", """\
        # writes the manifests, then applies them
        rm -f vllm.yaml
        cat <<EOF >>vllm.yaml
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: cache
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 50Gi}}
        EOF
        echo "---" >> vllm.yaml
        cat >> vllm.yaml <<-EOF
        \t---
        \tapiVersion: apps/v1
        \tkind: Deployment
        \tmetadata:
        \t  name: llama
        \tspec:
        \t  selector: {matchLabels: {app: llama}}
        \t  template:
        \t    metadata: {labels: {app: llama}}
        \t    spec:
        \t      containers:
        \t      - name: vllm
        \t        image: vllm/vllm-openai:v0.10.1
        \t        command: ["/bin/sh", "-c"]
        \t        args: ["vllm serve meta-llama/Llama-3.2-1B-Instruct --max-model-length 4096"]
        \t        resources: {limits: {nvidia.com/gpu: 1}}
        \tEOF
        kubectl apply -f vllm.yaml
        """)
    [server] = scan([path]).servers
    assert server.name == "llama" and server.model == "meta-llama/Llama-3.2-1B-Instruct"
    assert server.gpu.count == 1 and server.vllm_version == "0.10.1"
    code, report = _check(capsys, path)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    # vLLM's parser refuses the misspelt option: the error is on the script's line that writes it
    assert error["line"] == 28 and "--max-model-length" in error["message"] and code == 1
    assert error["file"].endswith("install.sh")


def test_envsubst_takes_only_exported_values(tmp_path):
    path = _write(tmp_path, "apply.sh", """\
        export MODEL_NAME=mistralai/Mistral-7B-Instruct-v0.3
        GPUS=4
        cat <<'EOF' | envsubst | kubectl apply -f -
    """, _deployment("mistral", "vllm/vllm-openai:v0.9.0", '"--model", "${MODEL_NAME}", "--tensor-parallel-size", '
                      '"$GPUS"', '"$GPUS"'), """\
        EOF
        """)
    [server] = scan([path]).servers
    # envsubst sees the environment: MODEL_NAME is exported, GPUS is a shell variable only
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.args.get("tensor_parallel_size") is None
    assert sum("$GPUS" in n for n in server.notes) == 1


def test_written_file_then_envsubst_from_it(tmp_path):
    path = _write(tmp_path, "render.sh", """\
        export IMAGE=vllm/vllm-openai:v0.9.1
        cat > /tmp/vllm.yaml.tmpl <<'EOF'
    """, _deployment("tmpl", "${IMAGE}", '"--model", "facebook/opt-125m"', "1"), """\
        EOF
        envsubst < /tmp/vllm.yaml.tmpl | kubectl apply -f -
        """)
    [server] = scan([path]).servers
    assert server.image == "vllm/vllm-openai:v0.9.1" and server.vllm_version == "0.9.1"


def test_values_from_branches_arguments_and_commands_are_unknown(tmp_path):
    path = _write(tmp_path, "branch.sh", """\
        MODEL=$1
        if [ "$BIG" = 1 ]; then
          TP=4
        fi
        REV=$(git rev-parse HEAD)
        NAME=first
        NAME=chat
        PORT=8000
        [ -n "$CI" ] && PORT=9000
        cat <<EOF | kubectl apply -f -
    """, _deployment("b", "vllm/vllm-openai:v0.9.2", '"--model", "$MODEL", "--tensor-parallel-size", "$TP", '
                      '"--revision", "$REV", "--host", "$HOST_ADDR", "--port", "$PORT", '
                      '"--served-model-name", "$NAME"', "1"), """\
        EOF
        """)
    [server] = scan([path]).servers
    assert server.model is None and server.args.get("tensor_parallel_size") is None
    [note] = [n for n in server.notes if "literal value" in n]
    assert "$MODEL" in note and "$TP" in note and "$REV" in note and "$HOST_ADDR" in note
    # the last assignment counts; one after `&&` may not run
    assert "$PORT" in note and "$NAME" not in note and server.args["served_model_name"] in ("chat", ["chat"])


def test_bodies_that_are_not_applied_kubernetes_are_ignored(tmp_path):
    path = _write(tmp_path, "other.sh", """\
        cat > values.yaml <<EOF
        model: facebook/opt-125m
        vllm: {image: vllm/vllm-openai:v0.9.2}
        EOF
        helm upgrade --install vllm ./chart -f values.yaml
    """, "kubectl delete -f - <<EOF\n", _deployment("gone", "vllm/vllm-openai:v0.9.2", '"--model", "facebook/opt-125m"', "1"),
                   "EOF\n")
    inv = scan([path])
    assert inv.servers == []
    # nothing read, and nothing to say: `helm upgrade` and `kubectl delete` start no vLLM server themselves
    assert not any("starts no vLLM server" in p.message for p in inv.problems)


def test_a_body_is_data_not_commands_of_the_script(tmp_path):
    # the `vllm serve` line inside the manifest's block scalar is the container's, not a command of the script
    path = _write(tmp_path, "one.sh", """\
        kubectl apply -f - <<'YAML'
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: vllm
            image: vllm/vllm-openai:v0.9.2
            command: ["/bin/sh", "-c"]
            args:
            - |
              vllm serve facebook/opt-125m --port 8000
            resources: {limits: {nvidia.com/gpu: 1}}
        YAML
        """)
    [server] = scan([path]).servers
    assert server.source_format != "script" and server.model_location.line == 12


def test_bounds_are_said(tmp_path):
    many = "".join(f"cat <<EOF{i} >> all.yaml\nkind: X\nEOF{i}\n" for i in range(heredocs.MAX_HEREDOCS + 3))
    path = _write(tmp_path, "many.sh", "# vllm manifests\n", many)
    inv = scan([path])
    assert sum(f"more than {heredocs.MAX_HEREDOCS} here-documents" in p.message for p in inv.problems) == 1
    open_ended = _write(tmp_path, "open.sh", "kubectl apply -f - <<EOF\n",
                        _deployment("o", "vllm/vllm-openai:v0.9.2", '"--model", "facebook/opt-125m"', "1"))
    inv = scan([open_ended])
    assert len(inv.servers) == 1
    assert [p.line for p in inv.problems if "not closed" in p.message] == [1]


def test_a_variable_of_another_manifest_is_not_said_on_the_server(tmp_path):
    # a quoted here-document writes the vLLM Deployment (nothing expands in it); a later unquoted one writes an
    # Ingress from a security group the script gets from a command: that unknown is the Ingress's, not the server's
    path = _write(tmp_path, "deploy.sh", """\
        #!/bin/bash
        NAMESPACE=serving
        cat > vllm.yaml << 'EOF'
    """, _deployment("chat", "vllm/vllm-openai:v0.9.2", '"--model", "Qwen/Qwen2.5-0.5B-Instruct"', '"1"'), """\
        EOF
        kubectl apply -f vllm.yaml -n $NAMESPACE
        ALB_SG=$(aws ec2 create-security-group --group-name alb --query GroupId --output text)
        cat > ingress.yaml << EOF
        apiVersion: networking.k8s.io/v1
        kind: Ingress
        metadata:
          name: chat
          annotations:
            alb.ingress.kubernetes.io/security-groups: $ALB_SG
        spec:
          defaultBackend:
            service: {name: chat, port: {number: 8000}}
        EOF
        kubectl apply -f ingress.yaml
        """)
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert not any("ALB_SG" in n or "literal value" in n for n in server.notes), server.notes


def test_each_manifests_unknowns_are_said_on_its_own_server(tmp_path):
    # two Deployments from two here-documents, each with a variable the script does not set: each server says its
    # own, and a variable both use is said once
    path = _write(tmp_path, "two.sh", "cat <<EOF | kubectl apply -f -\n",
                  _deployment("a", "vllm/vllm-openai:v0.9.2", '"--model", "$MODEL_A", "--api-key", "$KEY"', "1"),
                  "EOF\ncat <<EOF | kubectl apply -f -\n",
                  _deployment("b", "vllm/vllm-openai:v0.9.2", '"--model", "$MODEL_B", "--api-key", "$KEY"', "1"),
                  "EOF\n")
    a, b = sorted(scan([path]).servers, key=lambda s: s.name)
    [note_a] = [n for n in a.notes if "literal value" in n]
    [note_b] = [n for n in b.notes if "literal value" in n]
    assert "$MODEL_A" in note_a and "$KEY" in note_a and "$MODEL_B" not in note_a
    assert "$MODEL_B" in note_b and "$KEY" not in note_b
