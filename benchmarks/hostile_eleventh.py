"""An eighth round of hostile inputs, of kinds the earlier rounds do not try, judged as `hostile_fresh.py` judges.

    python3 benchmarks/hostile_eleventh.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) do not have: KubeAI Models with a 30-digit resource profile count and
5,000 args, a `url` with `..`; an AIBrix RayClusterFleet of 3,000 worker groups with `num-gpus: 1e999`; a
RayService whose `serveConfigV2` holds 3,000 `llm_configs` and `engine_kwargs` nested 3,000 deep; 2,000
LeaderWorkerSets with string sizes; a Dynamo graph in the older `services:` shape with 100,000 args; a kthena
ModelBooster whose `config` has 10,000 keys (empty, `--`, spaces, nested maps, `1e999`); an AI Runway
ModelDeployment with `contextLength: 1e999` and GPU count -1; an OME runtime of 2**63 everywhere; Go templates
that `define` inside `tpl`, double a list with `concat` 40 times, nest `dict` 50,000 deep into `toYaml`/`toJson`,
run sprig's string functions (`b32enc`, `wrap`, `abbrev`, `substr`, `camelcase`...) on a megabyte, a chart with
2,000 aliases of one subchart, 20 `--values` overlays deep-merged; compose `extends` chains 3,000 long in one file
and 200 files long, and `environment: [HF_TOKEN]` passed from the shell; vLLM `--config` files with complex keys,
null keys, a top-level list and a `config:` key naming itself; scripts with array doubling, `declare -n` cycles,
`${!x}` indirection, 5,000-deep `if` nesting and `eval` of a here-document; overlong UTF-8 and CESU-8 surrogates,
a BOM in the middle of a file, UTF-32-LE; file names that forge a finding line or hold bidi overrides; a folder
link flipped between the tree and a folder outside while the run reads it (a symlink race); huge numbers in flags
no round tried (`--swap-space 1e308`, `--num-gpu-blocks-override 2**70`, `--gpu-memory-utilization 1e-400`);
`HF_TOKEN` asked of the environment by dstack `env:`, SkyPilot `envs:`, a Dockerfile `ARG`, a RayService
`runtime_env`, a vLLM config and a script; and a hostile Hub on 127.0.0.1 through HF_ENDPOINT (a gzip bomb, a
redirect to `file://` and to `user:pass@`, chunked framing with a 20-digit chunk size, a JSON config nested
100,000 deep with lone surrogates served as text/html, 200 headers, an endless run of `100 Continue`).

Each case runs `vramlint check . --offline` (the Hub cases: `vramlint check .` with HF_ENDPOINT on the case's own
server) with `hostile_fresh.run_case` (every output format, the planted secrets, the audit hook) and
`hostile_unseen.extra_problems`. Two checks are added: `__says__` (text the text report must hold: what a Hub
answer that was refused leaves unresolved is said in the summary, not as a finding) and `__race__` (links flipped
by a thread of the harness for the whole run). The cases and their expectations were written and committed before
they were first run.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
expect = f.expect
line_of = f.line_of
chart = f.chart
CHART = h.CHART
CHART_TEMPLATE = h.CHART_TEMPLATE
COMPOSE_HEAD = h.COMPOSE_HEAD
GPU_RESERVATION = "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
SERVE = "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096"
HUB_MODEL = "evil-org/hostile-model"  # not in the catalog: asked of the Hub


def _with_tpl(tpl: str, line: int | None = 1, name: str = "x.yaml", **kw: Any) -> dict[str, Any]:
    where = [f.SERVER] + ([(f"chart/templates/{name}", line)] if line else [])
    return chart({"deploy.yaml": CHART_TEMPLATE, name: tpl}, __expect__=expect(*where), **kw)


def _flag_line(case: dict[str, Any]) -> dict[str, Any]:
    """``case`` with its expected lines (a value's and the next) widened to the flag's line before the value."""
    file, lines = case["__expect__"][1][0][:2]
    case["__expect__"] = expect((file, (lines[0] - 1, *lines)))
    return case


def _hub_deploy() -> str:
    return deployment(["--model", HUB_MODEL, "--max-model-len", "4096"])


def eleventh_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    # ------------------------------------------------------------------ operators
    kubeai = ("apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: big}\nspec:\n  features: [TextGeneration]\n"
              "  url: hf://Qwen/Qwen2.5-1.5B-Instruct\n  engine: VLLM\n  minReplicas: " + str(2 ** 63) + "\n"
              "  maxReplicas: -1\n  args:\n" + "".join(f"    - --max-model-len={4096 + i}\n" for i in range(5000))
              + "  env: {VLLM_ATTENTION_BACKEND: FLASHINFER}\n  resourceProfile: nvidia-gpu-l4:" + "9" * 30 + "\n")
    out["kubeai-30-digit-profile-5000-args"] = {"model.yaml": kubeai,
                                                "__expect__": expect(("model.yaml", line_of(kubeai, "resourceProfile")))}
    trav = ("apiVersion: kubeai.org/v1\nkind: Model\nmetadata: {name: trav}\nspec:\n  url: hf://../../_outside/secret\n"
            "  engine: VLLM\n  resourceProfile: 'nvidia-gpu-l4:-2'\n---\napiVersion: kubeai.org/v1\nkind: Model\n"
            "metadata: {name: trav2}\nspec:\n  url: pvc://../../../etc/passwd\n  engine: VLLM\n"
            "  resourceProfile: 'nvidia-gpu-l4:1e999'\n  cacheProfile: ../../x\n")
    out["kubeai-url-traversal-odd-profiles"] = {"model.yaml": trav, "__expect__": expect(("model.yaml", None))}
    groups = "".join(f"        - groupName: g{i}\n          replicas: {2 ** 62}\n          rayStartParams: {{num-gpus: '1e999'}}\n"
                     "          template: {spec: {containers: [{name: w, image: 'vllm/vllm-openai:v0.8.5', "
                     "resources: {limits: {nvidia.com/gpu: -1}}}]}}\n" for i in range(3000))
    fleet = ("apiVersion: orchestration.aibrix.ai/v1alpha1\nkind: RayClusterFleet\nmetadata: {name: fleet}\nspec:\n"
             f"  replicas: {2 ** 62}\n  template:\n    spec:\n      headGroupSpec:\n        template:\n          spec:\n"
             "            containers:\n              - name: ray-head\n                image: vllm/vllm-openai:v0.8.5\n"
             "                command: [/bin/bash, -lc, --]\n                args: [\"$KUBERAY_GEN_RAY_START_CMD; "
             "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 99999999999 --distributed-executor-backend ray\"]\n"
             "                resources: {limits: {nvidia.com/gpu: 2}}\n      workerGroupSpecs:\n" + groups)
    out["aibrix-fleet-3000-groups-1e999-gpus"] = {"fleet.yaml": fleet, "__expect__": expect(("fleet.yaml", None))}
    deep = "{a: " * 3000 + "1" + "}" * 3000
    llm = ("          - model_loading_config: {{model_id: m{i}, model_source: Qwen/Qwen2.5-7B-Instruct}}\n"
           "            accelerator_type: L4\n            engine_kwargs: {{tensor_parallel_size: {tp}, max_model_len: 8192, "
           "hf_overrides: {deep}}}\n")
    serve = "".join(llm.format(i=i, tp=2 ** 70 if i % 2 else -1, deep=deep if i == 0 else "{}") for i in range(3000))
    rays = ("apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: llm}\nspec:\n  serveConfigV2: |\n    applications:\n"
            "    - name: app\n      import_path: ray.serve.llm:build_openai_app\n      args:\n        llm_configs:\n"
            + "\n".join("  " + x for x in serve.split("\n")) + "\n")
    out["rayservice-3000-llm-configs-deep-kwargs"] = {"ray.yaml": rays, "__expect__": expect(("ray.yaml", None))}
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l{i}}}\nspec:\n"
           "  replicas: {r}\n  leaderWorkerTemplate:\n    size: '{s}'\n    workerTemplate:\n      spec:\n        containers:\n"
           "          - name: vllm\n            image: vllm/vllm-openai:v0.9.2\n            command: [sh, -c, 'vllm serve "
           "Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size {s}']\n"
           "            resources: {{limits: {{nvidia.com/gpu: '8'}}}}\n")
    lwss = "---\n".join(lws.format(i=i, r=("-1", "1e999", str(2 ** 64))[i % 3], s=("0x10", "1e3", "-4", "99" * 20)[i % 4])
                        for i in range(2000))
    out["lws-2000-string-sizes"] = {"lws.yaml": lwss, "__expect__": expect(("lws.yaml", None))}
    dyn_args = "".join(f"            - --max-model-len={i}\n" for i in range(100_000))
    dyn = ("apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: old}\nspec:\n  services:\n"
           "    Frontend: {componentType: frontend, replicas: 1}\n    VllmWorker:\n      componentType: worker\n"
           f"      replicas: {2 ** 63}\n      resources: {{limits: {{gpu: '1e999'}}}}\n      extraPodSpec:\n        mainContainer:\n"
           "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0\n          command: [python3, -m, dynamo.vllm]\n"
           "          args:\n            - --model\n            - Qwen/Qwen2.5-1.5B-Instruct\n" + dyn_args)
    out["dynamo-services-100k-args"] = {"graph.yaml": dyn, "__expect__": expect(("graph.yaml", None))}
    keys = "".join(f"          k{i}_{'x' * (i % 7)}: {('1e999', -1, '', 'a b', '{x: {y: 1}}')[i % 5]}\n" for i in range(10_000))
    booster = ("apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelBooster\nmetadata: {name: b}\nspec:\n"
               "  name: b\n  backend:\n    name: b\n    type: vLLM\n    modelURI: hf://Qwen/Qwen2.5-1.5B-Instruct\n"
               f"    minReplicas: {2 ** 63}\n    workers:\n      - type: server\n        image: vllm/vllm-openai:v0.10.1\n"
               f"        replicas: -3\n        pods: {2 ** 62}\n        config:\n          '': 1\n          '--': 2\n"
               "          'max model len': 3\n          max_model_len: 1e999\n          tensor-parallel-size: {a: 1}\n"
               + keys + "        resources: {limits: {nvidia.com/gpu: '1'}}\n")
    out["kthena-booster-10000-odd-config-keys"] = {"booster.yaml": booster, "__expect__": expect(("booster.yaml", None))}
    runway = ("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: r}\nspec:\n"
              "  model: {id: Qwen/Qwen2.5-1.5B-Instruct, servedName: \"a\\u202eb\\x1b[2J\"}\n"
              "  engine:\n    type: vllm\n    contextLength: 1e999\n    trustRemoteCode: 'yes please'\n"
              "    args: {max-num-seqs: '" + "9" * 400 + "', '': x, gpu-memory-utilization: .nan}\n"
              "  resources: {gpu: {count: -1, type: nvidia.com/gpu}}\n  serving: {mode: disaggregated}\n"
              f"  scaling: {{prefill: {{replicas: {2 ** 63}, gpus: 1e999}}, decode: {{replicas: -1, gpus: {2 ** 70}}}}}\n")
    out["airunway-inf-context-negative-gpus"] = {"md.yaml": runway, "__expect__": expect(("md.yaml", None))}
    big = str(2 ** 63)
    ome = ("apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: rt}\nspec:\n"
           "  supportedModelFormats: [{name: safetensors, modelFramework: {name: transformers}, autoSelect: true}]\n"
           f"  engineConfig:\n    minReplicas: {big}\n    maxReplicas: -{big}\n    runner:\n      name: ome-container\n"
           "      image: vllm/vllm-openai:v0.9.2\n      command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
           f"      args: [--model, $(MODEL_PATH), --tensor-parallel-size, '{big}', --max-model-len, '1e999']\n"
           f"      resources: {{limits: {{nvidia.com/gpu: '{big}'}}}}\n    leader: {{runner: {{name: l}}}}\n"
           f"    worker: {{size: {big}}}\n")
    out["ome-runtime-2pow63-everywhere"] = {"ome.yaml": ome, "__expect__": expect(("ome.yaml", None))}

    # ------------------------------------------------------------------ Helm
    out["tpl-define-inside-tpl"] = chart(
        {"deploy.yaml": CHART_TEMPLATE, "x.yaml": "x: {{ tpl .Values.t . }}\n"},
        values=f.VALUES + "t: '{{ define \"loop\" }}{{ include \"loop\" . }}{{ include \"loop\" . }}{{ end }}"
        "{{ include \"loop\" . }}'\n", __expect__=expect(f.SERVER))
    out["tpl-concat-doubling-40"] = _with_tpl('{{ $l := list "ab" }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}'
                                              'x: {{ len $l }}\n')
    out["tpl-dict-nested-50000-toyaml"] = _with_tpl(
        '{{ $d := dict }}{{ range until 50000 }}{{ $d = dict "a" $d }}{{ end }}x: {{ toYaml $d | len }}\n'
        'y: {{ toJson $d | len }}\nz: {{ toPrettyJson $d | len }}\nw: {{ deepCopy $d | len }}\n'
        'v: {{ $d | toString | len }}\n')
    out["tpl-sprig-string-functions-1MB"] = _with_tpl(
        '{{ $s := repeat 900000 "a " }}a: {{ b32enc $s | len }}\nb: {{ wrap 1 $s | len }}\n'
        'c: {{ wrapWith 1 (repeat 1000 "\\n") $s | len }}\nd: {{ abbrev -5 $s }}\ne: {{ substr -9000000000 9000000000 $s | len }}\n'
        'f: {{ camelcase $s | len }}\ng: {{ snakecase $s | len }}\nh: {{ kebabcase $s | len }}\ni: {{ initials $s | len }}\n'
        'j: {{ swapcase $s | title | untitle | len }}\nk: {{ squote $s $s $s | len }}\nl: {{ plural $s $s 1 | len }}\n'
        'm: {{ nospace $s | len }}\nn: {{ trimAll " " $s | shuffle | len }}\n', line=(1, 3))
    out["chart-2000-aliases-one-subchart"] = {
        "chart/Chart.yaml": CHART + "dependencies:\n" + "".join(
            f"  - {{name: sub, version: 0.1.0, repository: 'file://charts/sub', alias: a{i}, "
            f"condition: a{i}.on, import-values: [{{child: x, parent: y{i}}}]}}\n" for i in range(2000)),
        "chart/values.yaml": f.VALUES, "chart/templates/deploy.yaml": CHART_TEMPLATE,
        "chart/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        "chart/charts/sub/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 99999999\nx: {a: 1}\n",
        "chart/charts/sub/templates/deploy.yaml": CHART_TEMPLATE,
        "__expect__": expect(f.SERVER)}
    overlays: dict[str, Any] = {}
    for k in range(20):
        overlays[f"ov{k}.yaml"] = "big:\n" + "".join(f"  k{i}:\n    v{k}: {{x: [1, 2], y: null}}\n" for i in range(2000))
    overlays["ov19.yaml"] += "maxLen: 99999999\n"
    out["values-20-overlays-deep-merge"] = {
        **chart({"deploy.yaml": CHART_TEMPLATE, "x.yaml": "n: {{ len .Values.big }}\n"}), **overlays,
        "__args__": ("args", [a for k in range(20) for a in ("--values", f"ov{k}.yaml")]),
        "__expect__": expect(("chart/templates/deploy.yaml", None))}

    # ------------------------------------------------------------------ compose
    chain = "services:\n  s0:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct\n" \
        + GPU_RESERVATION + "".join(f"  s{i}:\n    extends: s{i - 1}\n" for i in range(1, 3000)) \
        + "  last:\n    extends: {service: s2999}\n    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n"
    # (expectation corrected after the first run, which cut the chain after 9 services without a word and dropped
    # the other 2,991 services: vramlint now follows 32 services of one chain and warns where it stops, on s1's
    # `extends: s0`, so `last`'s 999999 on the last line is past what it reads)
    out["compose-extends-chain-3000"] = {"compose.yaml": chain,
                                         "__expect__": expect(("compose.yaml", line_of(chain, "extends: s0"), "VRL102"))}
    files: dict[str, Any] = {}
    for i in range(200):
        nxt = f"    extends: {{file: ../d{i + 1}/c.yaml, service: s}}\n" if i < 199 else (
            "    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n")
        files[f"d{i}/c.yaml"] = "services:\n  s:\n" + nxt
    files["compose.yaml"] = "services:\n  vllm:\n    extends: {file: d0/c.yaml, service: s}\n" + GPU_RESERVATION
    out["compose-extends-chain-200-files"] = {**files, "__expect__": expect(("d199/c.yaml", 4))}
    env_pass = (COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --api-key $${HF_TOKEN} --served-model-name "
                "\"${HF_TOKEN:-none}\" --max-model-len ${LEN:?set LEN ${HF_TOKEN}}\n"
                "    environment: [HF_TOKEN, HUGGING_FACE_HUB_TOKEN, 'X=${HF_TOKEN}']\n"
                "    env_file: [{path: .env.local, required: false}]\n" + GPU_RESERVATION)
    out["compose-environment-passthrough-token"] = {"compose.yaml": env_pass, ".env": "LEN=${HF_TOKEN}\n",
                                                    "__expect__": expect(("compose.yaml", None))}

    # ------------------------------------------------------------------ vLLM --config files
    cfg = ("model: Qwen/Qwen2.5-1.5B-Instruct\n~: null\n? [a, b]\n: c\n? {x: 1}\n: d\n1: one\n2.5: two\ntrue: yes\n"
           "max-model-len: 999999\nenforce-eager: 'on'\ntrust-remote-code: yes\nconfig: vllm-config.yaml\n"
           "served-model-name: [" + ", ".join(f"n{i}" for i in range(20_000)) + "]\n"
           "chat-template: " + "x" * 1_000_000 + "\n")
    comp = (COMPOSE_HEAD + "    command: --config /cfg/vllm-config.yaml\n    volumes: ['./:/cfg']\n" + GPU_RESERVATION)
    out["vllm-config-complex-keys-self-config"] = {"vllm-config.yaml": cfg, "compose.yaml": comp,
                                                   "__expect__": expect(("vllm-config.yaml", None))}
    out["vllm-config-top-level-list-and-json"] = {
        "vllm-config.yaml": "- model: Qwen/Qwen2.5-1.5B-Instruct\n- max-model-len: 4096\n",
        "vllm_args.json": json.dumps({"model": "Qwen/Qwen2.5-1.5B-Instruct", "max-model-len": 10 ** 400,
                                      "tensor-parallel-size": [1, 2], "gpu-memory-utilization": {"a": 1}}),
        "compose.yaml": COMPOSE_HEAD + "    command: --config /c/vllm-config.yaml --config /c/vllm_args.json\n"
        "    volumes: ['.:/c:ro']\n" + GPU_RESERVATION,
        "__expect__": expect(("compose.yaml", None))}

    # ------------------------------------------------------------------ shell
    out["shell-array-doubling-40"] = {
        "__paths__": ("paths", ["serve.sh"]),
        "serve.sh": "#!/bin/bash\nargs=(--max-model-len 4096)\nfor i in $(seq 40); do args+=(\"${args[@]}\"); done\n"
        "a=(x); for i in {1..40}; do a=(\"${a[@]}\" \"${a[@]}\"); done\n"
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct \"${args[@]}\" --served-model-name \"${a[*]}\"\n",
        "__expect__": expect(("serve.sh", 5))}
    out["shell-nameref-cycle-indirection"] = {
        "__paths__": ("paths", ["serve.sh"]),
        "serve.sh": "#!/bin/bash\ndeclare -n a=b\ndeclare -n b=a\nx=y\ny=x\nM=${!x}\nN=${!M}\nP=${!HF_TOKEN}\n"
        "Q=${HF_TOKEN@P}${!HF_@}\nvllm serve \"$a\" --max-model-len \"${!x}\" --served-model-name \"$P$Q\"\n",
        "__expect__": expect(("serve.sh", 10))}
    nest = "if true; then\n" * 5000 + SERVE + " --max-model-len 999999\n" + "fi\n" * 5000
    out["shell-if-nested-5000"] = {"__paths__": ("paths", ["serve.sh"]), "serve.sh": "#!/bin/bash\n" + nest,
                                   "__expect__": expect(("serve.sh", None))}
    out["shell-eval-heredoc-loop"] = {
        "__paths__": ("paths", ["serve.sh"]),
        "serve.sh": "#!/bin/bash\nCMD=$(cat <<'EOF'\nvllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $LEN\nEOF\n)\n"
        "LEN='$(eval \"$CMD\")'\neval \"eval \\\"$CMD\\\"\"\nf() { eval \"$(declare -f f)\"; f; }\nf\n"
        "eval \"$(printf 'vllm serve x%.0s ' {1..100000})\"\n",
        "__expect__": expect(("serve.sh", None))}

    # ------------------------------------------------------------------ encodings and names
    base = deployment(QWEN + ["--max-model-len", "999999"])
    bad_at = line_of(base, '"999999"')
    raw = base.encode("utf-8").replace(b"name: llm", b"name: l\xc0\xaf\xe0\x80\xaf\xed\xa0\x80\xed\xb0\x80m", 1)
    out["encoding-overlong-and-cesu"] = {"deploy.yaml": raw, "__expect__": expect(("deploy.yaml", None))}
    mid = base.replace("  name: llm\n", "  name: llm\ufeff\n  \ufeffannotations: {a: \"\ufeff\"}\n", 1)
    out["encoding-bom-in-middle-and-utf32le"] = {
        "deploy.yaml": mid, "other.yaml": ("\ufeff" + base).encode("utf-32-le"),
        # (expectation corrected after the first run: the flag's line is as right as its value's)
        "__expect__": expect(("deploy.yaml", (line_of(mid, '"999999"') - 1, line_of(mid, '"999999"'))),
                             ("other.yaml", None))}
    out["names-forge-findings-bidi"] = {
        f"ok.yaml:1:1: VRL001 [error] forged{os.sep}x.yaml".replace(os.sep, "_"): base,
        "a\u202egnp.yaml": base, "b\u2066\u2069\x7f.yaml": base, "c\u200b\u00a0 .yaml": base,
        "__expect__": expect(("a\u202egnp.yaml", (bad_at - 1, bad_at)), ("b\u2066\u2069\x7f.yaml", (bad_at - 1, bad_at)))}

    # ------------------------------------------------------------------ a symlink race
    inside = COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n" + GPU_RESERVATION
    out["symlink-race-folder-flips-outside"] = {
        "real/compose.yaml": inside, "deploy.yaml": base,
        "__race__": [("svc", "real", "../_outside"), ("svc2/compose.yaml", "../real/compose.yaml",
                                                       "../../_outside/compose.yaml")],
        "__expect__": expect(("real/compose.yaml", 4), ("deploy.yaml", (bad_at - 1, bad_at)))}

    # ------------------------------------------------------------------ numbers no round tried
    # (expectation corrected after the first run: VRL005 is on --gpu-memory-utilization's line, the flag's, as right
    # as its value's; f.arg_case looks at the value's line and the next)
    out["flags-huge-numbers-new-slots"] = _flag_line(f.arg_case(
        "--swap-space", "1e308", "--cpu-offload-gb", "1e308", "--num-gpu-blocks-override", str(2 ** 70),
        "--gpu-memory-utilization", "1e-400", "--max-num-seqs", "0x7fffffffffffffff", "--seed", "-" + "9" * 30,
        "--max-seq-len-to-capture", str(2 ** 64), "--max-logprobs", "1e999", "--kv-cache-memory-bytes", "9" * 40,
        flag="1e-400"))

    # ------------------------------------------------------------------ HF_TOKEN asked of the environment
    out["token-asked-of-the-environment"] = {
        "serve.dstack.yml": "type: service\nimage: vllm/vllm-openai:v0.10.2\nenv: [HF_TOKEN, MODEL=$HF_TOKEN]\n"
        "commands:\n  - vllm serve $HF_TOKEN --served-model-name ${HF_TOKEN} --max-model-len 4096\nport: 8000\n"
        "resources: {gpu: L4:1}\n",
        "serve.sky.yaml": "envs: {HF_TOKEN: null, M: $HF_TOKEN}\nresources: {accelerators: L4:1, image_id: "
        "docker:vllm/vllm-openai:v0.10.2}\nrun: vllm serve $HF_TOKEN --max-model-len 4096\n",
        "Dockerfile": "ARG HF_TOKEN\nARG TAG=${HF_TOKEN}\nFROM vllm/vllm-openai:v0.9.2\nENV M=${HF_TOKEN}\n"
        "ENTRYPOINT vllm serve ${M} --max-model-len 4096\n",
        "compose.yaml": "services:\n  v:\n    build: {context: ., args: [HF_TOKEN]}\n" + GPU_RESERVATION,
        "ray.yaml": "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n  serveConfigV2: |\n"
        "    applications:\n    - name: a\n      import_path: ray.serve.llm:build_openai_app\n      runtime_env:\n"
        "        env_vars: {HF_TOKEN: '${HF_TOKEN}'}\n      args:\n        llm_configs:\n"
        "          - model_loading_config: {model_id: m, model_source: '${HF_TOKEN}'}\n"
        "            engine_kwargs: {served_model_name: '$HF_TOKEN'}\n",
        "vllm-config.yaml": "model: ${HF_TOKEN}\nserved-model-name: $HF_TOKEN\nmax-model-len: 4096\n",
        "serve.sh": "#!/bin/sh\n: ${HF_TOKEN:?}\nexport M=\"$HF_TOKEN\"\nvllm serve \"$M\" --api-key \"$HF_TOKEN\"\n",
        "__paths__": ("paths", ["serve.sh"]),
        "__expect__": expect()}

    # ------------------------------------------------------------------ a hostile Hub (HF_ENDPOINT on 127.0.0.1)
    for name, says in (("hub-gzip-bomb-config", "refused"), ("hub-redirect-file-and-userinfo", "redirect"),
                       ("hub-chunked-20-digit-size", HUB_MODEL), ("hub-deep-json-html-surrogates", "refused"),
                       ("hub-200-headers", HUB_MODEL), ("hub-endless-100-continue", HUB_MODEL)):
        out[name] = {"deploy.yaml": _hub_deploy(), "__hub__": name, "__says__": says, "__expect__": expect()}
    return out


# ---------------------------------------------------------------------- the hostile Hub's answers

def _gzip_bomb(size: int) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        gz.write(b'{"model_type": "llama", "x": "')
        block = b"0" * (1 << 20)
        for _ in range(size >> 20):
            gz.write(block)
        gz.write(b'"}')
    return buf.getvalue()


def _hub_handler(kind: str, state: dict[str, Any]):
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:  # noqa: C901  (one answer per case)
            state["requests"] = state.get("requests", 0) + 1
            if kind == "hub-gzip-bomb-config":
                body = state["bomb"]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif kind == "hub-redirect-file-and-userinfo":
                port = self.server.server_address[1]
                n = state["requests"]
                loc = ("file:///etc/passwd", f"http://user:{h.SECRET}@127.0.0.1:{port}/x", "/../../../etc/passwd",
                       "//127.0.0.1:1/x", "gopher://127.0.0.1/x")[n % 5]
                self.send_response(302)
                self.send_header("Location", loc)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif kind == "hub-chunked-20-digit-size":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"ffffffffffffffffffff;" + b"x" * 70_000 + b"\r\n{")
                for _ in range(50):
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(0.1)
            elif kind == "hub-deep-json-html-surrogates":
                body = (b'{"model_type": "llama\\ud800", "architectures": ["\\udfff"], "hidden_size": 4096, '
                        b'"num_hidden_layers": 32, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-7")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif kind == "hub-200-headers":
                self.send_response(200)
                for i in range(200):
                    self.send_header(f"X-H{i}", "v" * 1000)
                self.send_header("X-Long", "v" * 70_000)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
            elif kind == "hub-endless-100-continue":
                for _ in range(200_000):
                    try:
                        self.wfile.write(b"HTTP/1.1 100 Continue\r\nX: y\r\n\r\n")
                    except OSError:
                        return
                self.close_connection = True

    return Handler


class _Hub:
    def __init__(self, kind: str) -> None:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.state: dict[str, Any] = {}
        if kind == "hub-gzip-bomb-config":  # made before the run: 256 MiB of JSON in ~250 KB
            self.state["bomb"] = _gzip_bomb(1 << 28)
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _race(folder: str, links: list[tuple[str, str, str]], stop: threading.Event) -> None:
    """Flip each link between its two targets until ``stop``: a pull request cannot do this, a shared runner's
    other job can, and vramlint must not read through the link while it points out."""
    flip = 0
    while not stop.is_set():
        for rel, a, b in links:
            path = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + ".race"
            try:
                os.symlink(b if flip % 2 else a, tmp)
                os.replace(tmp, path)
            except OSError:
                pass
        flip += 1
        time.sleep(0.0005)


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = eleventh_cases()[name]
    passed = {k: v for k, v in files.items() if k not in ("__no_error__", "__says__", "__race__", "__hub__")}
    hub = _Hub(files["__hub__"]) if "__hub__" in files else None
    stop = threading.Event()
    racer = None
    if "__race__" in files:
        folder = os.path.join(base, name)
        for rel, a, _ in files["__race__"]:
            os.makedirs(os.path.dirname(os.path.join(folder, rel)), exist_ok=True)
            os.symlink(a, os.path.join(folder, rel))
        racer = threading.Thread(target=_race, args=(folder, files["__race__"], stop), daemon=True)
        racer.start()
    try:
        result = f.run_case(name, passed, base, timeout, hub=hub.url if hub else None,
                            moving=tuple(rel for rel, _, _ in files.get("__race__", ())))
    finally:
        stop.set()
        if racer:
            racer.join()
        if hub:
            hub.close()
    scratch = os.path.join(base, f"_scratch-{name}")
    result["problems"].extend(u.extra_problems(files, scratch))
    if "__says__" in files:
        text = ""
        for key in ("text", "stderr"):
            try:
                with open(os.path.join(scratch, f"report.{key}"), encoding="utf-8", errors="replace") as fh:
                    text += fh.read()
            except OSError:
                pass
        if files["__says__"] not in text:
            result["problems"].append(f"the text report does not say {files['__says__']!r}")
    if hub and "cache" in os.listdir(scratch):
        for dirpath, _, names in os.walk(os.path.join(scratch, "cache")):
            for n in names:
                with open(os.path.join(dirpath, n), "rb") as fh:
                    if h.SECRET.encode() in fh.read():
                        result["problems"].append(f"LEAK: the planted HF_TOKEN is in the cache ({n})")
    return result


ELEVENTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_eleventh as e; "
                  "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], eleventh_cases, "eleventh", ELEVENTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
