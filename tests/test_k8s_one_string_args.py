"""Kubernetes `args` holding the whole command line as one string for `command: ["/bin/sh", "-c"]`: commands joined
by `&&`, `;` and `||`, over several lines (a folded block, a quoted string continued with backslashes, a literal
block), variables the script assigns before the server, the container's own env named as `$VAR` by the shell and
as `$(VAR)` by Kubernetes. The server's command is read in each, with its words placed in the manifest."""

from __future__ import annotations

import pytest

from vramlint.scan import scan

MODEL = "facebook/opt-1.3b"
HEAD = """\
apiVersion: v1
kind: Pod
metadata: {name: engine}
spec:
  containers:
  - name: engine
    image: vllm/vllm-openai:v0.9.2
    resources: {limits: {nvidia.com/gpu: 1}}
"""

SHAPES = {
    "one line, && and ;": '    command: ["/bin/sh", "-c"]\n    args: ["pip install -q hf_transfer && '
                          f'huggingface-cli download {MODEL}; vllm serve {MODEL} --max-model-len 3072 && echo done"]\n',
    "folded with an assignment": '    command: ["/bin/sh", "-c"]\n    args:\n    - >\n      export HF_HOME=/data;\n'
                                 f'      M={MODEL} &&\n      python3 -m vllm.entrypoints.openai.api_server\n'
                                 '      --model $M\n      --max-model-len 3072\n',
    "quoted with backslashes": '    command: ["/bin/sh", "-c"]\n    args:\n    - "cd /srv && \\\n'
                               f'      vllm serve {MODEL} \\\n      --max-model-len 3072"\n',
    "literal with || fallback": '    command: ["sh", "-c"]\n    args:\n    - |\n      set -ex; nvidia-smi;\n'
                                f'      vllm serve {MODEL} \\\n        --max-model-len 3072 || sleep infinity\n',
    "-c in args, $(VAR) of env": '    command: ["/bin/bash"]\n    args: ["-c", "sleep 5; exec vllm serve $(M) '
                                 f'--max-model-len 3072"]\n    env: [{{name: M, value: {MODEL}}}]\n',
    "the script in an env var": '    command: ["/bin/sh", "-c", "$ENGINE_CMD"]\n    env:\n    - {name: ENGINE_CMD, '
                                f'value: "vllm serve {MODEL} --max-model-len 3072"}}\n',
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_server_in_a_one_string_script_is_read(tmp_path, name):
    path = tmp_path / "pod.yaml"
    path.write_text(HEAD + SHAPES[name])
    [server] = scan([str(path)]).servers
    assert server.model == MODEL and server.args["max_model_len"] == 3072, name
    assert not server.startup_errors, name
    assert server.arg_locations["max_model_len"].line >= 9, name  # in the container's own lines
