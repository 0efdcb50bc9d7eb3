"""An eleventh round of hostile inputs (the fourteenth file of them), aimed at what the fourteenth session added,
judged as `hostile_thirteenth.py` judges.

    python3 benchmarks/hostile_fourteenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) could not try, since the code they aim at is new: bjw-s app-template
`persistence` read for /dev/shm (2,000 controllers x 20,000 persistence items, mounts shared through anchors,
`advancedMounts` of every odd type, controllers keyed by numbers); values overlays in a chart's own folder
(5,000 candidates, 5,000 YAML files at the chart's root, FIFOs and symlinks out of the tree among them, an overlay
that is a template or the chart's own values, one 150 levels deep holding 4 MB); `docker run` in a launch script
expanding the script's variables (a variable doubled 40 times, 10,000 self-references, 100,000 assignments, the
planted token through a variable); `opentelemetry-instrument` (an option without its value at the end, 100,000
options, 5,000 nested launchers); Habana's runtime (HABANA_VISIBLE_DEVICES of 200,000 devices, ranges, Unicode
digits, a 5,000-digit device, a newline); `.tmpl.yaml` names (FIFOs, symlinks out, a newline in the name); Helm
nil pointers under `.Values.global` (1,000 templates, a 5,000-field chain); `--kv-transfer-config` and the hybrid
KV cache manager (wrong types, a MultiConnector 200 levels deep and of 50,000 children, a 1 MB connector name one
anchor gives 300 servers, odd --kv-offloading options); OpenShift Template parameters (a value holding `${Y}`, a
1 MB value used 5,000 times, 40,000 parameters); Flux `valuesFrom` of odd types; and a hostile Hub answering the
catalog-style fields (`mlp_bias` of wrong type, numbers of wrong types, a gated MLP of 2**62).

Each case runs `vramlint check . --offline` (the Hub cases: `vramlint check .` with HF_ENDPOINT on the case's own
server) with `hostile_thirteenth.run_case`'s checks (every output format, the planted secrets, the audit hook,
`__no_error__`, `__says__`, `__any__`, `__max_report_mb__`, ...). Checks added here: `__no_internal__` (no finding
says vramlint failed: an exception caught per file is a bug, not a result), `__absent__` (no finding of this rule
in this file), `__no_error_in__` (no error-level finding in these files) and `__no_message__` (no finding message
holds this text).
The cases and their expectations were written and committed before their first run (cb08125; fdcd5d5 after the rebase onto main).

First run (`python3 benchmarks/hostile_fourteenth.py --cpu-time --timeout 30`, at cb08125, fdcd5d5 after the rebase): 15/30 within the
limits. vramlint's failures: app-template 2,000 controllers x 20,000 persistence items (killed at 30 s: every item
walked for every container); a controller `1` whose `advancedMounts: {1: ...}` gives /dev/shm (a false VRL008: the
keys compared as a number and a string); 5,000 YAML files at a chart's root (18 CPU-s: the folder listed per file);
100,000 chained assignments in a docker run script (killed, 4.9 GB: each value split with the whole table as the
cache key); `opentelemetry-instrument ... -- vllm serve` (no server: `--` taken for an option); a `kv_connector`
list in a MultiConnector's children (VRL000, TypeError); a MultiConnector 200 levels deep (VRL102 "vramlint
failed", RecursionError) and 50,000 wide (491 MB: a 2.4 MB quoted scalar tried as a YAML key); a 1 MB connector
name one anchor gives 300 services (a 302 MB JSON report, 404 MB); a 1 MB OpenShift parameter used 5,000 times
(killed, 9.5 GB); a parameter past the 10,000th left `${MAX_LEN}` as text (a false "invalid int value").

Five expectations were wrong, not vramlint (corrected where they are): the template files of
tmpl-yaml-names-fifos-symlinks did not mention vLLM (such a file is not read at all); the Flux case's flow mappings
held `[0]` in a plain scalar (invalid YAML of the case's making); a config.json of 2**31 layers is refused and said
in the summary by cause, not as a finding; and vramlint computes no budget for Gaudi servers, nor the max_model_len
check in it, said in the summary (the two habana cases expected a VRL005 per server). After the fixes (the same
command without --timeout): 30/30; the closest to the limits: script-docker-run-100k-assignments 2.54 CPU-s and
158 MB, app-template-2000-controllers-20k-persistence 1.71 CPU-s and 177 MB.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.parse
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_thirteenth as r13  # noqa: E402  (the thirteenth round's checks)
import hostile_twelfth as t  # noqa: E402

QWEN = f.QWEN
MODEL = "Qwen/Qwen2.5-1.5B-Instruct"  # in the catalog: max_position_embeddings 32,768
deployment = h.deployment
expect = f.expect
line_of = f.line_of
GPU_RESERVATION = t.GPU_RESERVATION
HUB_MODEL = t.HUB_MODEL
SERVE_BAD = t.SERVE_BAD

# ---------------------------------------------------------------------- helpers


def _bad(name: str = "llm", image: str = "vllm/vllm-openai:v0.8.5") -> tuple[str, tuple[int, int]]:
    text = deployment(QWEN + ["--max-model-len", "999999"], name=name, image=image)
    at = line_of(text, '"999999"')
    return text, (at - 1, at)


def _app_release(controllers: str, persistence: str = "", name: str = "app", extra: str = "") -> str:
    return ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: " + name + "\nspec:\n"
            "  chartRef: {kind: OCIRepository, name: app-template}\n" + extra + "  values:\n"
            "    defaultPodOptions:\n      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
            "    controllers:\n" + controllers + persistence)


def _app_controller(cid: str, max_len: str, tp: int = 1, box: str = "app") -> str:
    args = ["--model", MODEL, "--max-model-len", max_len]
    if tp > 1:
        args += ["--tensor-parallel-size", str(tp)]
    arg_lines = "".join(f"              - {json.dumps(a)}\n" for a in args)
    return (f"      {cid}:\n        containers:\n          {box}:\n"
            "            image: {repository: vllm/vllm-openai, tag: v0.8.5}\n            args:\n" + arg_lines
            + f"            resources: {{limits: {{nvidia.com/gpu: {tp}}}}}\n")


CHART_VALUES = ("model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\nimage:\n  repository: vllm/vllm-openai\n"
                "  tag: v0.8.5\nenv: {}\n")
CHART_TPL = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args: ["--model", "{{ .Values.model }}", "--max-model-len", "{{ .Values.maxLen }}"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _overlay(max_len: int, extra: str = "") -> str:
    return (f"model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: {max_len}\nimage:\n  repository: vllm/vllm-openai\n"
            f"  tag: v0.8.5\n{extra}")


def _chart(**files: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"chart/Chart.yaml": f.CHART, "chart/values.yaml": CHART_VALUES,
                           "chart/templates/deploy.yaml": CHART_TPL}
    out.update(files)
    return out


TPL_LINE = line_of(CHART_TPL, '"--max-model-len"')


def _kv_deploy(name: str, transfer: str, max_len: str = "4096", image: str = "vllm/vllm-openai:v0.26.0",
               more: list[str] | None = None) -> str:
    return deployment(QWEN + ["--kv-transfer-config", transfer, "--max-model-len", max_len] + (more or []),
                      name=name, image=image)


def _template(params: str, args: list[str], name: str = "rt") -> str:
    arg_lines = "".join(f"          - {a}\n" for a in args)
    return (f"apiVersion: template.openshift.io/v1\nkind: Template\nmetadata:\n  name: {name}\nparameters:\n{params}"
            "objects:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: srv\n  spec:\n"
            "    template:\n      spec:\n        nodeSelector:\n"
            "          cloud.google.com/gke-accelerator: nvidia-l4\n        containers:\n        - name: vllm\n"
            "          image: vllm/vllm-openai:v0.8.5\n          args:\n" + arg_lines
            + "          resources:\n            limits:\n              nvidia.com/gpu: '1'\n")


def fourteenth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad, bad_lines = _bad()

    # ------------------------------------------------------------------ bjw-s app-template persistence
    # _persistence walks every persistence item for every container that is a server: 2,000 x 20,000
    ctl = _app_controller("c0", "999999") + "".join(_app_controller(f"c{i}", "4096") for i in range(1, 2000))
    items = "".join(f"      p{i}: {{type: emptyDir, globalMounts: [{{path: /p{i}}}]}}\n" for i in range(20_000))
    app = _app_release(ctl, "    persistence:\n" + items)
    out["app-template-2000-controllers-20k-persistence"] = {
        "release.yaml": app, "__no_internal__": True,
        "__expect__": expect(("release.yaml", (line_of(app, '"999999"'), line_of(app, '"999999"') - 1)))}

    # one list of 3,000 mounts shared through an anchor by 3,000 items (the loader shares aliased nodes)
    mounts = "[" + ", ".join(f"{{path: /m{i}}}" for i in range(3000)) + "]"
    shared = (f"      p0: {{type: emptyDir, medium: Memory, globalMounts: &g {mounts}}}\n"
              + "".join(f"      p{i}: {{type: emptyDir, globalMounts: *g, advancedMounts: {{c0: {{app: *g}}}}}}\n"
                        for i in range(1, 3000)))
    ctl2 = _app_controller("c0", "999999", tp=2) + "".join(_app_controller(f"c{i}", "4096") for i in range(1, 300))
    app2 = _app_release(ctl2, "    persistence:\n" + shared)
    out["app-template-persistence-aliased-mounts"] = {
        "release.yaml": app2, "__no_internal__": True,
        "__expect__": expect(("release.yaml", (line_of(app2, '"999999"'), line_of(app2, '"999999"') - 1)))}

    odd = ("    persistence:\n"
           "      a: {type: emptyDir, advancedMounts: [c0, app]}\n"
           "      b: {type: emptyDir, advancedMounts: 'c0'}\n"
           "      c: {type: emptyDir, advancedMounts: 7}\n"
           "      d: {type: emptyDir, advancedMounts: null, globalMounts: null}\n"
           "      e: {type: emptyDir, advancedMounts: {c0: [app]}}\n"
           "      f: {type: emptyDir, advancedMounts: {c0: {app: '/dev/shm'}}}\n"
           "      g: {type: emptyDir, advancedMounts: {c0: {app: [/dev/shm, 5, null, [x]]}}}\n"
           "      h: {type: emptyDir, medium: {Memory: true}, globalMounts: [{path: {a: b}}, {path: [1]}]}\n"
           "      i: {type: hostPath, globalMounts: [{readOnly: true}]}\n"
           "      j: {type: [emptyDir], medium: Memory, globalMounts: [{path: /dev/shm}]}\n"
           "      k: {type: emptyDir, enabled: 'false', medium: Memory, globalMounts: [{path: 99999999999999999999}]}\n"
           "      p: [1, 2, 3]\n"
           "      q: ~\n"
           "      r: {type: emptyDir, advancedMounts: {'': {'': [{path: /dev/shm}]}, c0: {'': [{path: /y}]}}}\n")
    app3 = _app_release(_app_controller("c0", "999999", tp=2), odd)
    out["app-template-advancedmounts-odd-types"] = {
        "release.yaml": app3, "__no_internal__": True,
        "__expect__": expect(("release.yaml", (line_of(app3, '"999999"'), line_of(app3, '"999999"') - 1)))}

    # Helm's values are JSON: the number key 1 is the string "1", so advancedMounts.1.app names controller "1"
    # (common's _volumeMounts.tpl compares the keys as strings): /dev/shm is a memory emptyDir, no VRL008
    numeric = ("    persistence:\n      shm:\n        type: emptyDir\n        medium: Memory\n"
               "        advancedMounts:\n          1:\n            app:\n              - path: /dev/shm\n")
    app4 = _app_release(_app_controller("1", "4096", tp=2), numeric)
    out["app-template-advancedmounts-number-keys"] = {
        "release.yaml": app4, "__no_internal__": True, "__absent__": [("VRL008", "release.yaml")],
        "__expect__": expect()}

    # ------------------------------------------------------------------ overlays in a chart's own folder
    many = {f"chart/overrides/m{i:04d}.yaml": _overlay(4096) for i in range(5000)}
    out["chart-own-folder-5000-overlay-candidates"] = _chart(
        **{"chart/overrides/a-bad.yaml": _overlay(999999)}, **many, __no_internal__=True,
        __any__=[("chart/overrides/a-bad.yaml", None), ("chart/templates/deploy.yaml", TPL_LINE)],
        __expect__=expect())

    root = {f"chart/cm{i:04d}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{a: b}}\n"
            for i in range(5000)}
    out["chart-root-5000-yaml-files"] = _chart(
        **{"chart/values-bad.yaml": _overlay(999999)}, **root, __no_internal__=True,
        __any__=[("chart/values-bad.yaml", None), ("chart/templates/deploy.yaml", TPL_LINE)],
        __expect__=expect())

    out["chart-own-folder-overlays-fifo-symlinks"] = _chart(**{
        "chart/overrides/fifo.yaml": ("fifo",),
        "chart/overrides/environ.yaml": ("symlink", "/proc/self/environ"),
        "chart/overrides/zero.yaml": ("symlink", "/dev/zero"),
        "chart/overrides/outside.yaml": ("symlink", "../../../_outside/secret.yaml"),
        "chart/overrides/loop.yaml": ("symlink", "loop.yaml"),
        "chart/overrides/dir.yaml": ("symlink", "/"),
        "chart/overrides/stdin.yaml": ("symlink", "/dev/stdin"),
        "chart/ci/bad-values.yaml": _overlay(999999)},
        __no_internal__=True,
        __any__=[("chart/ci/bad-values.yaml", None), ("chart/templates/deploy.yaml", TPL_LINE)],
        __expect__=expect())

    # overlays that are the chart's own files: its values.yaml through a symlink, a template named like an
    # overlay (Helm renders it as a manifest), a second Chart.yaml making ci/ a chart of no templates
    out["chart-own-folder-overlay-is-chart-file"] = _chart(**{
        "chart/overrides/same.yaml": ("symlink", "../values.yaml"),
        "chart/overrides/tpl.yaml": ("symlink", "../templates/deploy.yaml"),
        "chart/templates/values-prod.yaml": "model: {{ .Values.model }}\nmaxLen: 999999\nimage:\n"
        "  repository: vllm/vllm-openai\n  tag: v0.8.5\n",
        "chart/ci/Chart.yaml": f.CHART,
        "chart/ci/values.yaml": _overlay(999999),
        "chart/overrides/bad.yaml": _overlay(999999)},
        __no_internal__=True,
        __any__=[("chart/overrides/bad.yaml", None), ("chart/templates/deploy.yaml", TPL_LINE)],
        __expect__=expect())

    deep = "env:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(150)) + "  " * 151 + "v: " \
        + "x" * 4_000_000 + "\n"
    out["chart-own-folder-overlay-deep-huge"] = _chart(**{
        "chart/overrides/deep.yaml": _overlay(999999, deep)}, __no_internal__=True,
        __any__=[("chart/overrides/deep.yaml", None), ("chart/templates/deploy.yaml", TPL_LINE),
                 ("chart/overrides/deep.yaml", 2)],
        __expect__=expect())

    # ------------------------------------------------------------------ docker run expanding the script's variables
    run = ("docker run --gpus all --ipc=host vllm/vllm-openai:v0.8.5 --model $model --max-model-len 999999 "
           "--served-model-name $a")
    script = "#!/bin/bash\nmodel=Qwen/Qwen2.5-1.5B-Instruct\na=x\n" + "a=$a$a\n" * 40 + run + "\n"
    out["script-docker-run-doubling-variable"] = {
        "__paths__": ("paths", ["serve.sh"]), "serve.sh": script, "__no_internal__": True,
        "__expect__": expect(("serve.sh", 4 + 40))}
    selfref = "#!/bin/bash\nmodel=Qwen/Qwen2.5-1.5B-Instruct\nn=\n" + "n=$n/x${n}y\n" * 10_000 + \
        "m=${m:-$m}\nmodel=${model}\n" + run.replace("$a", "$n$m") + "\n"
    out["script-docker-run-self-reference"] = {
        "__paths__": ("paths", ["serve.sh"]), "serve.sh": selfref, "__no_internal__": True,
        "__expect__": expect(("serve.sh", 4 + 10_000 + 2))}
    chain = "#!/bin/bash\nv0=Qwen/Qwen2.5-1.5B-Instruct\n" + "".join(f"v{i}=$v{i - 1}\n" for i in range(1, 100_000))
    chain += run.replace("$model", "$v99999").replace("$a", "$v5") + "\n"
    out["script-docker-run-100k-assignments"] = {
        "__paths__": ("paths", ["serve.sh"]), "serve.sh": chain, "__no_internal__": True,
        "__expect__": expect(("serve.sh", 2 + 100_000))}
    tok = ("#!/bin/bash\ntok=$HF_TOKEN\nenv=$(cat /proc/self/environ)\nmodel=Qwen/Qwen2.5-1.5B-Instruct\n"
           "docker run --gpus all -e HF_TOKEN=$tok vllm/vllm-openai:v0.8.5 --model $model --max-model-len 999999 "
           "--served-model-name \"$tok\" --api-key \"$env\" --revision ${HF_TOKEN:-main}\n")
    out["script-docker-run-token-variable"] = {
        "__paths__": ("paths", ["serve.sh"]), "serve.sh": tok, "__no_internal__": True,
        "__expect__": expect(("serve.sh", 5))}

    # ------------------------------------------------------------------ opentelemetry-instrument
    otel = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: otel}\nspec:\n  template:\n    spec:\n"
            "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
            "      - name: a\n        image: vllm/vllm-openai:v0.8.5\n"
            "        command: [opentelemetry-instrument, --traces_exporter]\n"
            "        resources: {limits: {nvidia.com/gpu: 1}}\n"
            "      - name: b\n        image: vllm/vllm-openai:v0.8.5\n"
            "        command: [opentelemetry-instrument, --service_name]\n        args: [vllm, serve, " + MODEL
            + ", --max-model-len, '4096']\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
            "      - name: c\n        image: vllm/vllm-openai:v0.8.5\n"
            "        command: [opentelemetry-instrument, --service_name, x, --, vllm, serve, " + MODEL
            + ", --max-model-len, '999999']\n        resources: {limits: {nvidia.com/gpu: 1}}\n")
    out["otel-option-without-value-at-end"] = {
        "deploy.yaml": otel, "__no_internal__": True,
        "__any__": [("deploy.yaml", line_of(otel, "'999999'"))], "__expect__": expect()}
    opts = ["opentelemetry-instrument"] + ["--service_name=v"] * 50_000 + ["--traces_exporter", "console"] * 25_000 \
        + ["vllm", "serve", MODEL, "--max-model-len", "999999"]
    many_opts = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: otel}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n        command:\n"
                 + "".join(f"        - {json.dumps(o)}\n" for o in opts)
                 + "        resources: {limits: {nvidia.com/gpu: 1}}\n")
    out["otel-100k-options"] = {
        "deploy.yaml": many_opts, "__no_internal__": True,
        "__any__": [("deploy.yaml", line_of(many_opts, '"999999"')),
                    ("deploy.yaml", line_of(many_opts, '"999999"') - 1)], "__expect__": expect()}
    nested = "#!/bin/sh\nexec " + "opentelemetry-instrument --service_name b " * 5000 + SERVE_BAD + "\n"
    out["otel-5000-nested-launchers"] = {
        "__paths__": ("paths", ["serve.sh"]), "serve.sh": nested, "__no_internal__": True,
        "__expect__": expect(("serve.sh", 2))}

    # ------------------------------------------------------------------ Habana's runtime
    # (corrected after the first run: vramlint does not compute a budget for Gaudi servers, nor the checks in it
    # such as vLLM's max_model_len: the expectation was a finding on the --max-model-len line of each; it is now the
    # summary's cause, "accelerators other than NVIDIA GPUs (Intel Gaudi)")
    ids = ",".join(str(i) for i in range(200_000))
    hab = ("services:\n  gaudi:\n    image: vllm/vllm-openai:v0.8.5\n    runtime: habana\n    environment:\n"
           f"      HABANA_VISIBLE_DEVICES: '{ids}'\n    command: --model {MODEL} --max-model-len 999999 "
           "--tensor-parallel-size 2\n")
    hab_sh = (f"#!/bin/bash\nIDS={ids}\ndocker run --runtime=habana -e HABANA_VISIBLE_DEVICES=$IDS "
              f"-e HABANA_VISIBLE_MODULES={ids} --ipc=host vllm/vllm-openai:v0.8.5 --model {MODEL} "
              "--max-model-len 999999\n")
    out["habana-visible-devices-200k"] = {
        "compose.yaml": hab, "__paths__": ("paths", ["compose.yaml", "serve.sh"]), "serve.sh": hab_sh,
        "__no_internal__": True, "__max_report_mb__": 32, "__says__": "Intel Gaudi", "__expect__": expect()}
    garbage = ["0-7", "all ", "-1", "0,,1", "\u0663,\u0664", "9" * 5000, "0,1\n::error::forged", "0x1,0b1",
               "1" + ",1" * 20_000, " 0 , 1 "]
    gsvc = "services:\n" + "".join(
        f"  g{i}:\n    image: vllm/vllm-openai:v0.8.5\n    runtime: habana\n    environment:\n"
        f"      HABANA_VISIBLE_DEVICES: {json.dumps(v)}\n    command: --model {MODEL} --max-model-len 999999\n"
        for i, v in enumerate(garbage))
    out["habana-visible-devices-garbage"] = {
        "compose.yaml": gsvc, "__no_internal__": True, "__says__": "Intel Gaudi", "__expect__": expect()}

    # ------------------------------------------------------------------ template file names
    # (corrected after the first run: a file that does not mention vLLM is not read at all, so the broken
    # template names the vLLM image)
    broken = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Name }}}\nspec: [\n"
              "  image: vllm/vllm-openai:v0.8.5\n")
    out["tmpl-yaml-names-fifos-symlinks"] = {
        "a.tmpl.yaml": broken, "b.TEMPLATE.YML": broken, "c.j2.yaml": broken, ".tmpl.yaml": broken,
        "fifo.tmpl.yaml": ("fifo",), "environ.tmpl.yaml": ("symlink", "/proc/self/environ"),
        "out.template.yaml": ("symlink", "../_outside/secret.yaml"),
        "n\n::error::forged.tmpl.yaml": broken, "deploy.yaml": bad,
        **{f"many/t{i}.tmpl.yaml": broken for i in range(2000)},
        "__no_internal__": True,
        "__no_error_in__": ["a.tmpl.yaml", "b.TEMPLATE.YML", "c.j2.yaml", "many/t0.tmpl.yaml"],
        "__expect__": expect(("deploy.yaml", bad_lines), ("a.tmpl.yaml", None))}

    # ------------------------------------------------------------------ .Values.global nil pointers
    globals_ = {f"chart/templates/g{i}.yaml": "kind: ConfigMap\napiVersion: v1\nmetadata: {name: g" + str(i)
                + "}\ndata:\n  a: {{ .Values.global.x" + str(i) + ".y | quote }}\n" for i in range(1000)}
    chain_tpl = "kind: ConfigMap\napiVersion: v1\nmetadata: {name: chain}\ndata:\n  a: {{ .Values.global" + \
        ".f" * 5000 + " | quote }}\n"
    out["helm-global-nil-1000-templates-long-chain"] = _chart(
        **globals_, **{"chart/templates/chain.yaml": chain_tpl}, __no_internal__=True,
        __no_error_in__=["chart/templates/g0.yaml", "chart/templates/chain.yaml"],
        __any__=[("chart/templates/g0.yaml", 5), ("chart/templates/chain.yaml", 5)],
        __expect__=expect())

    # ------------------------------------------------------------------ KV connectors, the hybrid manager
    multi_bad = json.dumps({"kv_connector": "MultiConnector", "kv_role": "kv_both", "kv_connector_extra_config": {
        "connectors": [{"kv_connector": ["NixlConnector"]}, {"kv_connector": {"a": 1}}, "x", None]}})
    kinds = [json.dumps({"kv_connector": ["NixlConnector"], "kv_role": "kv_both"}),
             json.dumps({"kv_connector": {"name": "x"}, "kv_role": 7}),
             json.dumps({"kv_connector": 5}), "[1, 2]", "null", "NixlConnector",
             json.dumps({"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": "x"}}),
             json.dumps({"kv_connector": "MultiConnector", "kv_connector_extra_config": [1]})]
    kv = "---\n".join([_kv_deploy("multi", multi_bad, "999999")]
                      + [_kv_deploy(f"k{i}", k) for i, k in enumerate(kinds)])
    at = line_of(kv, '"999999"')
    out["kv-transfer-config-wrong-types"] = {
        "deploy.yaml": kv, "__no_internal__": True, "__expect__": expect(("deploy.yaml", (at - 1, at)))}

    inner: dict[str, Any] = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
    for _ in range(200):
        inner = {"kv_connector": "MultiConnector", "kv_role": "kv_both",
                 "kv_connector_extra_config": {"connectors": [{"kv_connector": "NixlConnector"}, inner]}}
    wide = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {
        "connectors": [{"kv_connector": "NixlConnector", "kv_role": "kv_both"}] * 50_000}}
    kv2 = _kv_deploy("deep", json.dumps(inner), "999999") + "---\n" + _kv_deploy("wide", json.dumps(wide), "999999",
                                                                               image="vllm/vllm-openai:v0.24.0")
    at2 = line_of(kv2, '"999999"')
    at3 = line_of(kv2, '"999999"', 2)
    out["kv-multiconnector-deep-and-wide"] = {
        "deploy.yaml": kv2, "__no_internal__": True,
        "__expect__": expect(("deploy.yaml", (at2 - 1, at2)), ("deploy.yaml", (at3 - 1, at3)))}

    big_name = "C" * 1_000_000
    kv3 = ("x-kv: &kv '" + json.dumps({"kv_connector": big_name, "kv_role": "kv_both"}) + "'\nservices:\n"
           + "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.26.0\n    command: [--model, google/gemma-2-9b-it, "
                     f"--kv-transfer-config, *kv, --port, '{8000 + i}']\n" + GPU_RESERVATION for i in range(300)))
    out["kv-connector-1MB-name-anchor-300-servers"] = {
        "compose.yaml": kv3, "__no_internal__": True, "__max_report_mb__": 64, "__expect__": expect()}

    offl = "---\n".join([
        deployment(QWEN + ["--kv-offloading-size", "8", "--kv-offloading-backend", "lmcache", "--max-model-len",
                           "999999"], name="o0", image="vllm/vllm-openai:v0.26.0"),
        deployment(QWEN + ["--kv-offloading-size", "1e400"], name="o1", image="vllm/vllm-openai:v0.26.0"),
        deployment(QWEN + ["--kv-offloading-size", "nan", "--kv-offloading-backend", "L" * 200_000], name="o2",
                   image="vllm/vllm-openai:v0.26.0"),
        deployment(QWEN + ["--kv-offloading-size", "9" * 5000, "--kv-offloading-backend", "lmcache",
                           "--no-disable-hybrid-kv-cache-manager", "--kv-events-config", "[" * 5000 + "]" * 5000],
                   name="o3", image="vllm/vllm-openai:v0.26.0"),
        deployment(QWEN + ["--kv-offloading-size", "-4", "--disable-hybrid-kv-cache-manager", "maybe"], name="o4",
                   image="vllm/vllm-openai:v0.26.0")])
    at4 = line_of(offl, '"999999"')
    out["kv-offloading-odd-values"] = {
        "deploy.yaml": offl, "__no_internal__": True, "__expect__": expect(("deploy.yaml", (at4 - 1, at4)))}

    # ------------------------------------------------------------------ OpenShift Template parameters
    loop = _template("- name: A\n  value: '${B}'\n- name: B\n  value: '${A}${A}${A}${A}'\n- name: C\n"
                     "  value: '${{A}}'\n- name: LEN\n  value: '999999'\n",
                     ["--model", MODEL, "--served-model-name", "'${A}${B}${C}${A}${B}'", "--max-model-len",
                      "${LEN}"])
    out["openshift-parameter-values-hold-parameters"] = {
        "template.yaml": loop, "__no_internal__": True, "__no_message__": ["invalid int value: '${LEN}'"],
        "__expect__": expect(("template.yaml", (line_of(loop, "- ${LEN}"), line_of(loop, "- ${LEN}") - 1,
                                                line_of(loop, "value: '999999'"))))}
    mb = "w" * 1_000_000
    bomb = _template(f"- name: BIG\n  value: '{mb}'\n- name: LEN\n  value: '999999'\n",
                     ["--model", MODEL, "--max-model-len", "${LEN}"] + ["--served-model-name", "${BIG}${BIG}"] * 2500)
    out["openshift-parameter-1MB-value-5000-uses"] = {
        "template.yaml": bomb, "__no_internal__": True, "__max_report_mb__": 64,
        "__any__": [("template.yaml", line_of(bomb, "- ${LEN}")), ("template.yaml", line_of(bomb, "- ${LEN}") - 1),
                    ("template.yaml", line_of(bomb, "value: '999999'"))],
        "__expect__": expect()}
    params = "".join(f"- name: P{i}\n  value: 'v{i}'\n" for i in range(40_000)).replace(
        "- name: P20000\n  value: 'v20000'\n", "- name: MAX_LEN\n  value: '999999'\n")
    many_params = _template(params, ["--model", MODEL, "--max-model-len", "${MAX_LEN}"])
    out["openshift-40k-parameters"] = {
        "template.yaml": many_params, "__no_internal__": True,
        "__no_message__": ["invalid int value: '${MAX_LEN}'"],
        "__any__": [("template.yaml", line_of(many_params, "- ${MAX_LEN}")),
                    ("template.yaml", line_of(many_params, "- ${MAX_LEN}") - 1),
                    ("template.yaml", line_of(many_params, "value: '999999'"))],
        "__expect__": expect()}

    # ------------------------------------------------------------------ Flux valuesFrom of odd types
    vf = ("  valuesFrom:\n    - {kind: ConfigMap, name: [a, b], targetPath: {x: 1}}\n"
          "    - {kind: [Secret], name: s, targetPath: [1, 2]}\n    - x\n    - null\n"
          f"    - {{kind: ConfigMap, name: n, targetPath: '{'t' * 1_000_000}'}}\n"
          + "    - {kind: ConfigMap, name: same, targetPath: 'servingEngineSpec.modelSpec[0].vllmConfig.maxModelLen'}\n"
          * 25_000)
    flux = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: stack\nspec:\n"
            "  chart:\n    spec:\n      chart: vllm-stack\n      sourceRef: {kind: HelmRepository, name: r}\n" + vf
            + "  values:\n    servingEngineSpec:\n      modelSpec:\n        - name: m0\n"
            "          repository: vllm/vllm-openai\n          tag: v0.8.5\n          modelURL: " + MODEL + "\n"
            "          requestGPU: 1\n          vllmConfig:\n            maxModelLen: 999999\n")
    out["flux-valuesfrom-odd-types-25k-same"] = {
        "release.yaml": flux, "__no_internal__": True, "__max_report_mb__": 32,
        "__expect__": expect(("release.yaml", (line_of(flux, "maxModelLen: 999999"), line_of(flux, "- name: m0"))))}

    # ------------------------------------------------------------------ a hostile Hub: catalog-style fields
    hub_deploy = deployment(["--model", HUB_MODEL, "--max-model-len", "4096"])
    for name in ("hub-mlp-bias-wrong-types", "hub-mlp-bias-huge-gated-mlp"):
        out[name] = {"deploy.yaml": hub_deploy, "__hub__": name, "__no_internal__": True, "__expect__": expect()}
    # (corrected after the first run: a config.json of 2**31 layers is refused as no real model's, and an
    # unresolved model is said in the summary by cause, not as a finding)
    out["hub-mlp-bias-huge-gated-mlp"]["__says__"] = HUB_MODEL
    return out


# ---------------------------------------------------------------------- the hostile Hub's answers

_CONFIG = t._CONFIG


def _hub_handler(kind: str, state: dict[str, Any]):
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.do_GET()

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            state.setdefault("requests", []).append((self.path, dict(self.headers)))
            name = urllib.parse.urlsplit(self.path).path.rsplit("/", 1)[-1]
            if name != "config.json":
                self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"})
                return
            cfg = dict(_CONFIG)
            if kind == "hub-mlp-bias-wrong-types":
                cfg.update({"mlp_bias": "true", "hidden_act": ["silu"], "intermediate_size": "8192",
                            "num_key_value_heads": True, "tie_word_embeddings": "yes", "sliding_window": [1],
                            "attention_chunk_size": {"x": 1}, "quantization_config": "gptq",
                            "rope_scaling": [1, 2], "head_dim": -64, "attention_bias": {"a": 1},
                            "text_config": {"mlp_bias": [True], "model_type": 7}})
            else:
                cfg.update({"mlp_bias": True, "intermediate_size": 2**62, "num_hidden_layers": 2**31})
            self._send(200, json.dumps(cfg).encode(), {"Content-Type": "application/json"})

    return Handler


class _Hub:
    def __init__(self, kind: str) -> None:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.state: dict[str, Any] = {}
        self.other = None
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------- checks of this round

OWN = ("__no_internal__", "__absent__", "__no_error_in__", "__no_message__")


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = fourteenth_cases()[name]
    kind = files.get("__hub__")
    hub = _Hub(kind) if kind else None
    passed = {k: v for k, v in files.items() if k not in OWN}
    own13 = ("__no_error__", "__says__", "__hub__", "__literal__", "__any__", "__unsuppressed__", "__md_absent__",
             "__max_report_mb__", "__github_files__")
    inner = {k: v for k, v in passed.items() if k not in own13}
    try:
        result = f.run_case(name, inner, base, timeout, hub=hub.url if hub else None)
    finally:
        if hub:
            hub.close()
    problems = result["problems"]
    scratch = os.path.join(base, f"_scratch-{name}")
    problems.extend(r13.u.extra_problems(files, scratch))
    reports: dict[str, str] = {}
    for key in ("text", "stderr", "json"):
        try:
            with open(os.path.join(scratch, f"report.{key}"), encoding="utf-8", errors="replace") as fh:
                reports[key] = fh.read()
        except OSError:
            reports[key] = ""
    findings: list[dict] = []
    try:
        findings = json.loads(reports["json"]).get("findings") or []
    except (ValueError, AttributeError):
        pass
    if "__says__" in files and files["__says__"] not in reports["text"] + reports["stderr"]:
        problems.append(f"the text report does not say {files['__says__']!r}")
    if "__any__" in files:
        if not any(x.get("file") == file and (line is None or x.get("line") == line)
                   for file, line in files["__any__"] for x in findings):
            near = [f"{x.get('rule')} {x.get('file')}:{x.get('line')}" for x in findings][:4]
            problems.append(f"none of the findings {files['__any__']} (has {near})"
                            .encode("unicode_escape").decode("ascii"))
    if "__max_report_mb__" in files:
        for key in ("text", "stderr", *f.FORMATS):
            path = os.path.join(scratch, f"report.{key}")
            size = os.path.getsize(path) if os.path.exists(path) else 0
            if size > files["__max_report_mb__"] * 1e6:
                problems.append(f"the {key} report is {size / 1e6:.0f} MB (over {files['__max_report_mb__']} MB)")
    if files.get("__no_internal__"):
        failed = [x for x in findings if "vramlint failed while" in (x.get("message") or "")]
        if failed:
            x = failed[0]
            problems.append(f"internal failure: {x.get('rule')} {x.get('file')}:{x.get('line')} "
                            f"{(x.get('message') or '')[:160]}".encode("unicode_escape").decode("ascii"))
    for rule, file in files.get("__absent__", ()):
        hit = [x for x in findings if x.get("rule") == rule and x.get("file") == file and not x.get("suppressed")]
        if hit:
            problems.append(f"a {rule} finding on {file}:{hit[0].get('line')} where none is right: "
                            f"{(hit[0].get('message') or '')[:120]}")
    for file in files.get("__no_error_in__", ()):
        hit = [x for x in findings if x.get("file") == file and x.get("level") == "error"]
        if hit:
            problems.append(f"an error on {file}:{hit[0].get('line')} where vramlint cannot be sure: "
                            f"{hit[0].get('rule')} {(hit[0].get('message') or '')[:120]}")
    for text in files.get("__no_message__", ()):
        hit = [x for x in findings if text in (x.get("message") or "")]
        if hit:
            problems.append(f"a finding says {text!r} ({hit[0].get('rule')} {hit[0].get('file')}:"
                            f"{hit[0].get('line')})")
    if hub:
        problems.extend(r13._hub_problems(kind, hub))
        for dirpath, _, names in os.walk(os.path.join(scratch, "cache")):
            for n in names:
                with open(os.path.join(dirpath, n), "rb") as fh:
                    if h.SECRET.encode() in fh.read():
                        problems.append(f"LEAK: the planted HF_TOKEN is in the cache ({n})")
    return result


FOURTEENTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_fourteenth as e; "
                    "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], fourteenth_cases, "fourteenth", FOURTEENTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
