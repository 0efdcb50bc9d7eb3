"""A here-document's body is read as a script only when its command writes it to a file (`cat > run.sh <<EOF`,
`tee`) or gives it to a shell (`bash <<EOF`, `| sh`, `ssh host <<EOF`). A usage text a script prints
(`cat <<'EOF'` to the terminal) or a program of another language (`python3 <<EOF`) holding a `python -m vllm...`
example starts nothing: no server is read from it."""

from __future__ import annotations

from vramlint.scan import scan

USAGE = """\
#!/usr/bin/env bash
cat << 'EOF'
Start a vLLM server:
  python3 -m vllm.entrypoints.openai.api_server \\
    --model <hf_model_id> \\
    --port 8000 \\
    --gpu-memory-utilization 0.9
EOF
python3 << 'PY'
import subprocess
subprocess.run("vllm serve facebook/opt-125m --port 8000", shell=True)
PY
"""


def _servers(tmp_path, text):
    path = tmp_path / "help.sh"
    path.write_text(text)
    return scan([str(path)]).servers


def test_a_printed_usage_text_is_no_server(tmp_path):
    assert _servers(tmp_path, USAGE) == []


def test_a_body_written_to_a_file_or_given_to_a_shell_is_read(tmp_path):
    body = "vllm serve facebook/opt-125m --max-model-len 2048\n"
    for line in ("cat > /opt/run.sh <<'EOF'", "cat <<'EOF' | tee /opt/run.sh", "bash <<'EOF'",
                 "cat <<'EOF' | sudo bash", "ssh gpu-node <<'EOF'"):
        [server] = _servers(tmp_path, f"#!/bin/sh\n{line}\n{body}EOF\n")
        assert server.model == "facebook/opt-125m" and server.args["max_model_len"] == 2048, line
