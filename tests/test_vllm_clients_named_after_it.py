"""Programs that talk to a vLLM server and are named after it are no vLLM server (audit24): an evaluation
harness's Job (`vllm-eval-...` image, args `--endpoint $(VLLM_MODEL_ENDPOINT) --config FILE`), a benchmark UI
(`vllm-frontend-...` image, no command), and a benchmark Job whose only argument is the server's URL
(`http://qwen-vllm-lb...`). None of them gets vLLM's flags checked, nor a note that a vLLM command line is
hidden; a container whose own command names vLLM still does."""

from __future__ import annotations

import json

from vramlint.cli import main
from vramlint.scan import scan

EVAL_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: harness
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: harness
          image: ghcr.io/acme/vllm-eval-public-harness:v1.1.0
          env:
            - name: VLLM_MODEL_ENDPOINT
              value: "http://vllm:8000/v1/completions"
          args:
            - "--endpoint"
            - "$(VLLM_MODEL_ENDPOINT)"
            - "--config"
            - "/app/configs/harness.json"
"""

FRONTEND = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: bench-ui
spec:
  selector: {matchLabels: {app: ui}}
  template:
    metadata: {labels: {app: ui}}
    spec:
      containers:
        - name: ui
          image: ghcr.io/acme/vllm-frontend-public:v1.1.1
          ports: [{containerPort: 3000}]
"""

URL_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: multi-turn
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: bench
          image: quay.io/acme/multi-turn-benchmark:0.0.1
          args:
            - "http://qwen-vllm-lb.demo.svc.cluster.local:8000/v1"
"""


def test_clients_of_vllm_are_no_servers_and_get_no_vllm_checks(tmp_path, capsys):
    for name, text in (("eval-job.yaml", EVAL_JOB), ("ui.yaml", FRONTEND), ("bench-job.yaml", URL_JOB)):
        (tmp_path / name).write_text(text)
        inventory = scan([str(tmp_path / name)])
        assert inventory.servers == [], name
        assert not [p for p in inventory.problems if "command line is not visible" in p.message], name
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    # no VRL009 "vLLM does not know --endpoint", no VRL103 "--config file not mounted", no hidden-command note
    assert [(f["rule"], f["file"].rsplit("/", 1)[-1]) for f in report["findings"]] == []


SCHEDULER = """apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata:
  name: config-llm-scheduler
spec:
  router:
    scheduler:
      template:
        containers:
        - name: main
          image: ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0
          args:
          - --pool-name
          - '{{ ChildName .ObjectMeta.Name `-inference-pool` }}'
          - --kv-cache-usage-percentage-metric
          - vllm:kv_cache_usage_perc
"""


def test_a_metric_name_of_vllm_is_no_vllm_command(tmp_path):
    """llm-d's inference scheduler names the vLLM metric it reads (held out in audit24, fixed after: in-sample)."""
    (tmp_path / "epp.yaml").write_text(SCHEDULER)
    inventory = scan([str(tmp_path / "epp.yaml")])
    assert inventory.servers == []
    assert not [p for p in inventory.problems if "command line is not visible" in p.message]


def test_a_command_that_runs_vllm_is_still_one(tmp_path):
    """The URL and variable rules drop only those parts of a word: a launcher that runs vLLM on a custom image
    keeps its note, with a URL beside it."""
    text = URL_JOB.replace('- "http://qwen-vllm-lb.demo.svc.cluster.local:8000/v1"',
                           '- "/opt/serve_vllm.sh"\n            - "http://qwen-vllm-lb.demo.svc.cluster.local:8000/v1"')
    (tmp_path / "launcher.yaml").write_text(text)
    inventory = scan([str(tmp_path / "launcher.yaml")])
    assert [p.level for p in inventory.problems if "command line is not visible" in p.message] == ["note"]


INDEX_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: elasticsearch-vllm-distill-setup
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: setup
        image: curlimages/curl:8.10.1
        command: ["/bin/sh", "-c"]
        args:
        - |
          until curl -s http://elasticsearch:9200/_cluster/health; do sleep 5; done
          curl -X PUT http://elasticsearch:9200/_index_template/vllm-distill \\
            -H 'Content-Type: application/json' \\
            -d '{"index_patterns": ["vllm-distill-*"], "template": {"settings": {"number_of_shards": 1}}}'
          echo "vllm-distill index template created"
          pip show vllm | grep -i version || true
"""


def test_vllm_as_an_argument_of_a_program_that_only_reads_it_is_no_vllm_command(tmp_path):
    """audit24 HR2: an Elasticsearch index `vllm-distill-*` in a curl Job's script, `echo`, `pip show vllm`, `grep`:
    those programs run no vLLM, so no server and no hidden-command note."""
    (tmp_path / "job.yaml").write_text(INDEX_JOB)
    inventory = scan([str(tmp_path / "job.yaml")])
    assert inventory.servers == []
    assert not [p for p in inventory.problems if "command line is not visible" in p.message]


def test_vllm_in_command_position_of_a_script_or_a_launchers_argument_still_names_it(tmp_path):
    """The word in command position (after `exec env`), or what python / bash / uv run run: still a vLLM launcher
    on a custom image, said."""
    for script in ("cd /app && exec env -u HOME ./serve-vllm", "python3 /app/run_vllm_server.py",
                   "source /venv/bin/activate; uv run --frozen vllm-launcher", "bash /opt/start_vllm.sh"):
        text = INDEX_JOB.replace("curlimages/curl:8.10.1", "acme/inference:1.2").replace(
            "  echo \"vllm-distill index template created\"\n", f"  {script}\n")
        (tmp_path / "job.yaml").write_text(text)
        inventory = scan([str(tmp_path / "job.yaml")])
        assert [p.level for p in inventory.problems if "command line is not visible" in p.message] == ["note"], script


def test_arguments_of_an_unseen_entrypoint_read_its_shell_script():
    """Args alone (the image's ENTRYPOINT a shell): `-c SCRIPT` is read command by command; other arguments as
    before, every word."""
    from vramlint.cmdline import _argv_names_vllm

    assert _argv_names_vllm(["-c", "exec vllm serve Qwen/Qwen2.5-1.5B-Instruct"])
    assert not _argv_names_vllm(["-c", "curl -XPUT http://es:9200/_template/vllm-distill"])
    assert _argv_names_vllm(["--entry", "/opt/run_vllm.sh"])
