"""A named script that starts no vLLM server vramlint reads gets "mentions vLLM but starts no vLLM server" only when
one of its commands may start one (`vllm serve` or `-m vllm...` in a form not read, a shell string holding one, a
container of a vLLM image or of an image in a variable, unless `--entrypoint` replaces its program by another
than a shell): a deploy or test helper that only mentions vLLM (echo, curl, `pip install vllm`, kubectl, helm,
docker compose, a probe run in the vLLM image) launches nothing to check and says nothing."""

from __future__ import annotations

from vramlint.scan import scan

HELPER = """\
#!/usr/bin/env bash
# Deploy the vLLM stack and wait for it.
set -euo pipefail
echo "deploying vLLM ..."
pip install --upgrade vllm
kubectl apply -f k8s/vllm-deployment.yaml
helm upgrade --install vllm ./charts/vllm --set model=Qwen/Qwen2.5-7B-Instruct
docker compose -f docker-compose.vllm.yml up -d
until curl -sf http://vllm:8000/health; do sleep 5; done
grep -c "vllm serve" logs/*.txt || true
"""

UNREAD_SERVE = """\
#!/usr/bin/env bash
# ssh's options held unquoted in a variable: how many words, and which is the host, only the run knows
ssh $SSH_OPTS gpu-node-1 "vllm serve facebook/opt-125m --port 8000"
"""

IMAGE_RUN = """\
#!/usr/bin/env bash
# start the vLLM container of the image given
IMAGE="$1"
timeout 600 docker run --rm --gpus all "$IMAGE" --model "$2"
"""

PROBE = """\
#!/usr/bin/env bash
# benchmark the fused MoE kernels inside the vLLM image
timeout 3600 docker run --rm --gpus all --entrypoint python3 vllm/vllm-openai:v0.9.2 /work/benchmark_moe.py --tune
docker run --rm --network host --entrypoint /opt/python/bin/vllm vllm/vllm-openai:v0.9.2 bench serve \\
  --base-url http://127.0.0.1:8000 --model bench --num-prompts 64
docker run --rm --entrypoint bash vllm/vllm-openai:v0.9.2 -c "rocprof --stats python3 /work/decode.py"
"""


def _notes(tmp_path, text):
    path = tmp_path / "run.sh"
    path.write_text(text)
    result = scan([str(path)])
    return result, [p.message for p in result.problems if "starts no vLLM server" in p.message]


def test_a_helper_that_only_mentions_vllm_says_nothing(tmp_path):
    for text in (HELPER, PROBE):
        result, notes = _notes(tmp_path, text)
        assert notes == [] and result.servers == []


def test_a_launch_vramlint_cannot_read_is_still_said(tmp_path):
    for text in (UNREAD_SERVE, IMAGE_RUN):
        result, notes = _notes(tmp_path, text)
        assert result.servers == []
        assert len(notes) == 1


def test_a_script_that_starts_a_server_is_read(tmp_path):
    result, notes = _notes(tmp_path, "#!/bin/sh\nexec vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 4096\n")
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and notes == []
