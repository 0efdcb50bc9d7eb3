"""`vllm serve --config FILE` where the launcher itself writes FILE with a here-document before (`cat > FILE <<EOF`,
`tee FILE`): vLLM reads the text the shell wrote, so its keys are the server's arguments (the command line
winning), in a script, a container's `sh -c` and a compose service alike. A file written after the command, or
only appended to, or that is no mapping, stays unread and is said so once."""

from __future__ import annotations

from vramlint.scan import scan


def _server(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    servers = scan([str(path)]).servers
    assert len(servers) == 1, servers
    return servers[0]


SCRIPT = """\
#!/bin/bash
set -e
LEN=12288
cat > /tmp/engine.yaml <<EOF
model: facebook/opt-1.3b
max-model-len: $LEN
gpu-memory-utilization: 0.8
enforce-eager: true
EOF
vllm serve --config /tmp/engine.yaml --gpu-memory-utilization 0.7
"""


def test_a_config_the_script_writes_is_read_with_its_variables(tmp_path):
    server = _server(tmp_path, "run.sh", SCRIPT)
    assert server.model == "facebook/opt-1.3b"
    assert server.args["max_model_len"] == 12288  # `$LEN` as the unquoted delimiter lets the shell expand it
    assert server.args["enforce_eager"] is True
    assert server.args["gpu_memory_utilization"] == 0.7  # the command line wins over the file
    assert server.arg_locations["max_model_len"].line == 6
    assert server.unread_config is None
    assert not [n for n in server.notes if "not included" in n]


def test_a_quoted_delimiter_writes_the_text_as_it_is(tmp_path):
    text = SCRIPT.replace("<<EOF", "<<'EOF'")
    server = _server(tmp_path, "run.sh", text)
    # `$LEN` is written as it is: vLLM reads the word "$LEN", which is no integer
    assert server.args.get("max_model_len") != 12288


def test_other_ways_of_writing_the_file(tmp_path):
    body = "model: facebook/opt-1.3b\nmax_model_len: 4096\n"
    for line in ("cat <<'EOF' > /srv/cfg.yaml", "tee /srv/cfg.yaml <<'EOF' >/dev/null",
                 "cat <<'EOF' | tee /srv/cfg.yaml", 'CFG=/srv/cfg.yaml; cat > "$CFG" <<\'EOF\''):
        server = _server(tmp_path, "run.sh", f"#!/bin/sh\n{line}\n{body}EOF\nexec vllm serve --config /srv/cfg.yaml\n")
        assert server.model == "facebook/opt-1.3b" and server.args["max_model_len"] == 4096, line


def test_a_file_written_after_the_command_or_elsewhere_is_not_read(tmp_path):
    after = "#!/bin/sh\nvllm serve --config /srv/cfg.yaml &\ncat > /srv/cfg.yaml <<'EOF'\nmodel: facebook/opt-1.3b\nEOF\n"
    server = _server(tmp_path, "run.sh", after)
    assert server.model is None
    assert [n for n in server.notes if "its settings are not included" in n]
    other = "#!/bin/sh\ncat > /srv/other.yaml <<'EOF'\nmodel: facebook/opt-1.3b\nEOF\nvllm serve --config /srv/cfg.yaml\n"
    server = _server(tmp_path, "run.sh", other)
    assert server.model is None
    assert sum("--config /srv/cfg.yaml" in n for n in server.notes) == 1


def test_an_append_to_an_unwritten_file_and_a_text_that_is_no_mapping_stay_unread(tmp_path):
    appended = "#!/bin/sh\ncat >> /srv/cfg.yaml <<'EOF'\nmax_model_len: 4096\nEOF\nvllm serve facebook/opt-1.3b --config /srv/cfg.yaml\n"
    server = _server(tmp_path, "run.sh", appended)
    assert "max_model_len" not in server.args
    assert [n for n in server.notes if "appended to a file the script did not write before" in n]
    listed = "#!/bin/sh\ncat > /srv/cfg.yaml <<'EOF'\n- max_model_len\nEOF\nvllm serve facebook/opt-1.3b --config /srv/cfg.yaml\n"
    server = _server(tmp_path, "run.sh", listed)
    assert [n for n in server.notes if "is not a YAML mapping" in n]
    written_then_appended = ("#!/bin/sh\ncat > /srv/cfg.yaml <<'EOF'\nmodel: facebook/opt-1.3b\nEOF\n"
                             "cat >> /srv/cfg.yaml <<'EOF'\nmax_model_len: 4096\nEOF\nvllm serve --config /srv/cfg.yaml\n")
    server = _server(tmp_path, "run.sh", written_then_appended)
    assert server.model == "facebook/opt-1.3b" and server.args["max_model_len"] == 4096


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: written-config}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
  containers:
  - name: engine
    image: vllm/vllm-openai:v0.9.2
    command: ["/bin/sh", "-c"]
    args:
    - |
      cat > /tmp/serve.yaml <<'EOF'
      model: facebook/opt-1.3b
      max_model_len: 3000
      EOF
      vllm serve --config /tmp/serve.yaml
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_container_script_writing_its_config_is_read_and_placed_in_the_manifest(tmp_path):
    server = _server(tmp_path, "pod.yaml", POD)
    assert server.model == "facebook/opt-1.3b" and server.args["max_model_len"] == 3000
    where = server.arg_locations["max_model_len"]
    assert (where.line, where.column) == (14, 7)
    assert not [n for n in server.notes if "not mounted from a ConfigMap" in n]


COMPOSE = """\
services:
  engine:
    image: vllm/vllm-openai:v0.9.2
    entrypoint: ["/bin/bash", "-c"]
    command:
      - |
        cat > /tmp/serve.yaml <<'EOF'
        max_model_len: 3000
        EOF
        vllm serve facebook/opt-1.3b --config /tmp/serve.yaml
"""


def test_a_compose_service_writing_its_config_is_read(tmp_path):
    server = _server(tmp_path, "compose.yaml", COMPOSE)
    assert server.model == "facebook/opt-1.3b" and server.args["max_model_len"] == 3000
    assert not [n for n in server.notes if "not beside the compose file" in n]


BRANCHES = """\
#!/bin/bash
SIZE=small
if [ "$SIZE" = "big" ]; then
  cat > /srv/cfg.yaml <<'EOF'
max_model_len: 32768
EOF
else
  cat > /srv/cfg.yaml <<'EOF'
max_model_len: 4096
EOF
fi
vllm serve facebook/opt-1.3b --config /srv/cfg.yaml
"""


def test_a_branch_the_variables_decide_writes_the_file_and_one_they_do_not_leaves_it_unknown(tmp_path):
    server = _server(tmp_path, "run.sh", BRANCHES)
    assert server.args["max_model_len"] == 4096  # SIZE=small: the `else` branch writes the file
    server = _server(tmp_path, "run.sh", BRANCHES.replace("SIZE=small", "SIZE=big"))
    assert server.args["max_model_len"] == 32768  # the `else` branch, which does not run, writes nothing
    undecided = BRANCHES.replace('[ "$SIZE" = "big" ]', "[ -e /dev/nvidia1 ]")  # known only on the host
    server = _server(tmp_path, "run.sh", undecided)
    assert "max_model_len" not in server.args
    [note] = [n for n in server.notes if "/srv/cfg.yaml" in n]
    assert "only when a condition the script tests holds" in note
