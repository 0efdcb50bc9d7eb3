"""Kustomize overlays built in-process (vramlint.kustomize): each overlay is a deployment of its own, its servers'
values point at the line that set them (the patch line, the kustomization line, the base line), a patch file
is never a server, and a base judged through its overlays says a defect of its own once."""

from __future__ import annotations

import os
from pathlib import Path

from _check_util import run_json

from vramlint.scan import scan

BASE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  replicas: 1
  selector:
    matchLabels: {app: llm}
  template:
    metadata:
      labels: {app: llm}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args:
            - --model=Qwen/Qwen2.5-7B-Instruct
            - --max-model-len=$(MAX_MODEL_LEN)
            - --gpu-memory-utilization=0.9
          env:
            - name: MAX_MODEL_LEN
              valueFrom:
                configMapKeyRef:
                  name: engine
                  key: MAX_MODEL_LEN
          resources:
            limits:
              nvidia.com/gpu: "1"
"""

BASE_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
configMapGenerator:
  - name: engine
    literals:
      - MAX_MODEL_LEN=8192
"""

PROD_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: inference-prod
namePrefix: prod-
resources:
  - ../../base
images:
  - name: vllm/vllm-openai
    newTag: v0.9.2
patches:
  - path: gpu.yaml
configMapGenerator:
  - name: engine
    behavior: merge
    literals:
      - MAX_MODEL_LEN=16384
"""

PROD_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-tesla-a100
      containers:
        - name: vllm
          args:
            - --model=Qwen/Qwen2.5-14B-Instruct
            - --max-model-len=$(MAX_MODEL_LEN)
            - --tensor-parallel-size=2
          resources:
            limits:
              nvidia.com/gpu: "2"
"""

DEV_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
replicas:
  - name: llm
    count: 3
patches:
  - target:
      kind: Deployment
      name: llm
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --max-num-seqs=64
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _app(tmp_path: Path, **extra: str) -> Path:
    files = {"app/base/deployment.yaml": BASE_DEPLOYMENT, "app/base/kustomization.yaml": BASE_KUSTOMIZATION,
             "app/overlays/prod/kustomization.yaml": PROD_KUSTOMIZATION, "app/overlays/prod/gpu.yaml": PROD_PATCH,
             "app/overlays/dev/kustomization.yaml": DEV_KUSTOMIZATION}
    files.update(extra)
    return _write(tmp_path, files)


def _scan(root: Path):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return scan(["."])
    finally:
        os.chdir(cwd)


def _by_overlay(inv) -> dict[str, object]:
    return {s.location.yaml_path.rsplit("?overlay=", 1)[-1]: s for s in inv.servers}


def test_each_overlay_is_a_server_with_its_own_values(tmp_path):
    inv = _scan(_app(tmp_path))
    servers = _by_overlay(inv)
    assert sorted(servers) == ["app/overlays/dev", "app/overlays/prod"]  # the base is judged through them
    prod, dev = servers["app/overlays/prod"], servers["app/overlays/dev"]
    # prod: the patch's args replace the base's, the generator's merged literal fills $(MAX_MODEL_LEN), the
    # image transformer's tag sets the version, the patch's nodeSelector and GPU count set the GPU
    assert prod.model == "Qwen/Qwen2.5-14B-Instruct" and prod.args["max_model_len"] == 16384
    assert prod.args["tensor_parallel_size"] == 2 and "gpu_memory_utilization" not in prod.args
    assert prod.image == "vllm/vllm-openai:v0.9.2" and prod.vllm_version == "0.9.2"
    assert prod.gpu.type == "A100-40GB" and prod.gpu.count == 2
    assert prod.name == "prod-llm"
    # dev: the base's values, the base generator's literal, the JSON patch's added flag, the replicas field
    assert dev.model == "Qwen/Qwen2.5-7B-Instruct" and dev.args["max_model_len"] == 8192
    assert dev.args["max_num_seqs"] == 64 and dev.image == "vllm/vllm-openai:v0.8.5"
    assert dev.gpu.type == "L4" and dev.replicas == 3


def test_locations_point_at_the_line_that_set_the_value(tmp_path):
    inv = _scan(_app(tmp_path))
    servers = _by_overlay(inv)
    prod, dev = servers["app/overlays/prod"], servers["app/overlays/dev"]
    # the server stands on the base's container; what a patch set is on the patch's line
    assert (prod.location.file, prod.location.line) == ("app/base/deployment.yaml", 16)
    loc = prod.arg_locations["tensor_parallel_size"]
    assert (loc.file, loc.line) == ("app/overlays/prod/gpu.yaml", 15)
    assert (prod.model_location.file, prod.model_location.line) == ("app/overlays/prod/gpu.yaml", 13)
    assert (prod.image_location.file, prod.image_location.line) == ("app/overlays/prod/kustomization.yaml", 9)
    assert (prod.gpu.location.file, prod.gpu.location.line) == ("app/overlays/prod/gpu.yaml", 9)
    # the JSON patch written inside the kustomization: the line of its `value:`
    loc = dev.arg_locations["max_num_seqs"]
    assert (loc.file, loc.line) == ("app/overlays/dev/kustomization.yaml", 15)
    assert (dev.arg_locations["gpu_memory_utilization"].file,
            dev.arg_locations["gpu_memory_utilization"].line) == ("app/base/deployment.yaml", 21)


def test_a_patch_file_is_never_a_server(tmp_path):
    inv = _scan(_app(tmp_path))
    assert all("?overlay=" in s.location.yaml_path for s in inv.servers)
    assert len(inv.servers) == 2
    assert not any(s.location.file == "app/overlays/prod/gpu.yaml" for s in inv.servers)


def test_a_base_without_overlay_is_judged_alone_with_its_key_unchanged(tmp_path):
    root = _write(tmp_path, {"base/deployment.yaml": BASE_DEPLOYMENT, "base/kustomization.yaml": BASE_KUSTOMIZATION})
    [server] = _scan(root).servers
    assert server.location.yaml_path == "spec.template.spec.containers[0]"  # no overlay in the key
    assert server.args["max_model_len"] == 8192  # its own generator is applied


def test_a_base_defect_is_reported_once_naming_the_overlays(tmp_path, capsys):
    typo = BASE_DEPLOYMENT.replace("--gpu-memory-utilization=0.9", "--gpu-memory-utilisation=0.9")
    root = _app(tmp_path, **{"app/base/deployment.yaml": typo,
                             "app/overlays/prod/gpu.yaml": PROD_PATCH.replace(
                                 "            - --tensor-parallel-size=2\n",
                                 "            - --tensor-parallel-size=2\n            - --gpu-memory-utilisation=0.9\n")})
    cwd = os.getcwd()
    os.chdir(root)
    try:
        _, doc = run_json(capsys, ".", "--select", "VRL009", test_rules=False)
    finally:
        os.chdir(cwd)
    unknown = [(f["file"], f["line"], f["message"]) for f in doc["findings"]]
    on_base = [u for u in unknown if u[0] == "app/base/deployment.yaml"]
    on_patch = [u for u in unknown if u[0] == "app/overlays/prod/gpu.yaml"]
    # the base's typo reaches only the dev overlay (prod's patch replaces the args): once, on the base line
    assert len(on_base) == 1 and on_base[0][1] == 21 and "overlay app/overlays/dev" in on_base[0][2]
    assert len(on_patch) == 1 and on_patch[0][1] == 16


def test_a_shared_base_defect_is_said_once_for_all_overlays(tmp_path, capsys):
    typo = BASE_DEPLOYMENT.replace("--gpu-memory-utilization=0.9", "--gpu-memory-utilisation=0.9")
    # prod without its patch and its image tag: both overlays run the base's line with the same vLLM
    prod = PROD_KUSTOMIZATION.replace("patches:\n  - path: gpu.yaml\n", "").replace(
        "images:\n  - name: vllm/vllm-openai\n    newTag: v0.9.2\n", "")
    root = _app(tmp_path, **{"app/base/deployment.yaml": typo, "app/overlays/prod/kustomization.yaml": prod})
    (root / "app/overlays/prod/gpu.yaml").unlink()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        _, doc = run_json(capsys, ".", "--select", "VRL009", test_rules=False)
    finally:
        os.chdir(cwd)
    [finding] = doc["findings"]
    assert finding["file"] == "app/base/deployment.yaml" and finding["line"] == 21
    assert "the same through each of these overlays: app/overlays/dev, app/overlays/prod" in finding["message"]


def test_env_from_a_generated_configmap_env_file(tmp_path):
    deployment = BASE_DEPLOYMENT.replace(
        "            - --model=Qwen/Qwen2.5-7B-Instruct\n", "            - --model=$(MODEL_ID)\n").replace(
        "          env:\n", "          envFrom:\n            - configMapRef:\n                name: runtime\n"
        "          env:\n")
    root = _write(tmp_path, {
        "base/deployment.yaml": deployment, "base/kustomization.yaml": BASE_KUSTOMIZATION,
        "l4/kustomization.yaml": "resources:\n  - ../base\nconfigMapGenerator:\n  - name: runtime\n    envs:\n"
                                 "      - runtime.env\n",
        "l4/runtime.env": "# the model this overlay serves\nMODEL_ID=Qwen/Qwen2.5-3B-Instruct\n"})
    [server] = _scan(root).servers
    assert server.model == "Qwen/Qwen2.5-3B-Instruct" and server.args["max_model_len"] == 8192


def test_components_and_strategic_merge_list_and_name_prefix(tmp_path):
    root = _write(tmp_path, {
        "base/deployment.yaml": BASE_DEPLOYMENT, "base/kustomization.yaml": BASE_KUSTOMIZATION,
        "eager/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
                                    "  - target: {kind: Deployment}\n    patch: |\n"
                                    "      - op: add\n        path: /spec/template/spec/containers/0/args/-\n"
                                    "        value: --enforce-eager\n",
        "site/kustomization.yaml": "namePrefix: site-\nresources:\n  - ../base\ncomponents:\n  - ../eager\n"
                                   "patchesStrategicMerge:\n  - shm.yaml\n",
        "site/shm.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n"
                         "    spec:\n      containers:\n        - name: vllm\n          volumeMounts:\n"
                         "            - {name: shm, mountPath: /dev/shm}\n      volumes:\n"
                         "        - name: shm\n          emptyDir: {medium: Memory}\n"})
    [server] = _scan(root).servers
    assert server.args.get("enforce_eager") is True
    assert server.shm is True  # the merged container keeps its args and gets the patch's mount
    assert server.name == "site-llm" and server.model == "Qwen/Qwen2.5-7B-Instruct"


def test_remote_base_and_unevaluated_fields_are_said_once(tmp_path):
    root = _app(tmp_path)
    text = PROD_KUSTOMIZATION.replace("resources:\n  - ../../base\n",
                                      "resources:\n  - ../../base\n  - https://github.com/example/models//vllm?ref=v1\n")
    (root / "app/overlays/prod/kustomization.yaml").write_text(text + "transformers:\n  - t.yaml\n")
    inv = _scan(root)
    notes = [p for p in inv.problems if p.file == "app/overlays/prod/kustomization.yaml"]
    remote = [p for p in notes if "remote base https://github.com/example/models//vllm?ref=v1" in p.message]
    plugin = [p for p in notes if "`transformers`" in p.message]
    assert len(remote) == 1 and remote[0].line == 7 and remote[0].level == "note"
    assert len(plugin) == 1 and "kustomize build" in plugin[0].message
    assert len(inv.servers) == 2  # the local base is still built


def test_missing_and_outside_files_are_unknowns_not_errors(tmp_path):
    root = _write(tmp_path / "repo", {
        "base/deployment.yaml": BASE_DEPLOYMENT,
        "base/kustomization.yaml": "resources:\n  - deployment.yaml\nconfigMapGenerator:\n  - name: engine\n"
                                   "    envs:\n      - engine.env\n",
        "prod/kustomization.yaml": "resources:\n  - ../base\n  - ../../elsewhere/extra.yaml\n"})
    _write(tmp_path, {"elsewhere/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
    inv = _scan(root)
    [server] = inv.servers
    assert server.args.get("max_model_len") is None  # its value is in an env file that is not there
    messages = {(p.file, p.line): p for p in inv.problems if p.file.endswith("kustomization.yaml")}
    assert "engine.env is not in the repository" in messages[("base/kustomization.yaml", 6)].message
    assert "outside the scanned tree" in messages[("prod/kustomization.yaml", 3)].message
    assert all(p.level == "note" for p in messages.values())


def test_a_cycle_and_deep_nesting_end(tmp_path):
    root = _write(tmp_path, {"a/kustomization.yaml": "resources:\n  - ../b\n",
                             "b/kustomization.yaml": "resources:\n  - ../a\n  - deployment.yaml\n",
                             "b/deployment.yaml": BASE_DEPLOYMENT})
    inv = _scan(root)  # each includes the other: no root, so the cycle's first is built; nothing hangs
    assert len(inv.servers) == 1
    assert [p.file for p in inv.problems if "a cycle" in p.message] == ["a/kustomization.yaml"]
    chain = {f"k{i}/kustomization.yaml": f"resources:\n  - ../k{i + 1}\n" for i in range(40)}
    chain["k40/kustomization.yaml"] = "resources:\n  - deployment.yaml\n"
    chain["k40/deployment.yaml"] = BASE_DEPLOYMENT
    deep = _scan(_write(tmp_path / "deep", chain))
    assert any("nested more than" in p.message for p in deep.problems)


def test_one_overlay_scanned_alone_says_its_base_is_outside(tmp_path):
    root = _app(tmp_path)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        inv = scan(["app/overlays/prod"])
    finally:
        os.chdir(cwd)
    assert inv.servers == []  # the patch is not a server, and the base is not read from outside the run
    [note] = [p for p in inv.problems if "outside the scanned tree" in p.message]
    assert (note.file, note.line, note.level) == ("app/overlays/prod/kustomization.yaml", 6, "note")


def test_a_build_past_the_node_bound_is_said(tmp_path, monkeypatch):
    from vramlint import kustomize

    monkeypatch.setattr(kustomize, "MAX_BUILD_NODES", len(BASE_DEPLOYMENT) // 8 - 1)
    inv = _scan(_app(tmp_path))
    assert inv.servers == []
    bound = [p for p in inv.problems if "vramlint's bound" in p.message]
    assert {p.file for p in bound} == {"app/base/kustomization.yaml"} and len(bound) == 1


def test_a_resource_that_is_not_valid_yaml_keeps_its_own_finding(tmp_path):
    root = _app(tmp_path, **{"app/base/deployment.yaml": BASE_DEPLOYMENT + "  bad: [unclosed\n"})
    inv = _scan(root)
    assert any(p.file == "app/base/deployment.yaml" and p.level == "error" for p in inv.problems)
    assert any(p.file == "app/base/kustomization.yaml" and "deployment.yaml not read" in p.message
               for p in inv.problems)


def test_a_base_defect_seen_with_two_vllm_releases_is_still_one_finding(tmp_path, capsys):
    typo = BASE_DEPLOYMENT.replace("--gpu-memory-utilization=0.9", "--gpu-memory-utilisation=0.9")
    prod = PROD_KUSTOMIZATION.replace("patches:\n  - path: gpu.yaml\n", "")  # keeps its image tag v0.9.2
    root = _app(tmp_path, **{"app/base/deployment.yaml": typo, "app/overlays/prod/kustomization.yaml": prod})
    (root / "app/overlays/prod/gpu.yaml").unlink()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        _, doc = run_json(capsys, ".", "--select", "VRL009", test_rules=False)
    finally:
        os.chdir(cwd)
    [finding] = doc["findings"]  # vLLM 0.8.5 through dev, 0.9.2 through prod: one line to fix
    assert (finding["file"], finding["line"], finding["level"]) == ("app/base/deployment.yaml", 21, "error")
    assert "through overlay app/overlays/dev; also through app/overlays/prod, with their own values" in \
        finding["message"]


def test_one_kustomization_that_fails_to_build_leaves_the_others(tmp_path, monkeypatch):
    # a fault injected into one overlay's build (a vramlint bug on some input): that overlay is said as a problem on
    # its kustomization, the other overlay is still built, and none of the failed overlay's servers is half-kept
    from vramlint import kustomize

    real = kustomize._servers_of

    def failing_for_prod(emitter, kust_file):
        if "prod" in kust_file:
            raise RuntimeError("injected")
        return real(emitter, kust_file)

    monkeypatch.setattr(kustomize, "_servers_of", failing_for_prod)
    inv = _scan(_app(tmp_path))
    overlays = _by_overlay(inv)
    assert "app/overlays/dev" in overlays and "app/overlays/prod" not in overlays
    failed = [p for p in inv.problems if "building this kustomization" in p.message]
    assert [p.file for p in failed] == ["app/overlays/prod/kustomization.yaml"]
    # the files only the failed overlay read are read as files again (its patch), not dropped silently
    assert any(s.location.file == "app/overlays/prod/gpu.yaml" for s in inv.servers)


def test_scan_knows_the_kustomization_names_without_importing_the_module(tmp_path):
    import subprocess
    import sys

    from vramlint import kustomize
    from vramlint import scan as scan_module

    assert scan_module._KUSTOMIZATION_NAMES == frozenset(kustomize.KUSTOMIZATION_NAMES)
    (tmp_path / "d.yaml").write_text(BASE_DEPLOYMENT)
    code = ("import sys; from vramlint.scan import scan; scan([sys.argv[1]]); "
            "print('vramlint.kustomize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_kustomization_file_named_without_extension_is_built(tmp_path):
    # kustomize looks for kustomization.yaml, kustomization.yml and Kustomization (konfig.RecognizedKustomizationFileNames)
    root = _app(tmp_path)
    for overlay in ("prod", "dev"):
        folder = root / "app" / "overlays" / overlay
        (folder / "kustomization.yaml").rename(folder / "Kustomization")
    servers = _by_overlay(_scan(root))
    assert sorted(servers) == ["app/overlays/dev", "app/overlays/prod"]
    assert servers["app/overlays/prod"].args["max_model_len"] == 16384


def _value_at(server, dest: str) -> tuple[str, int]:
    loc = server.arg_locations[dest]
    return loc.file, loc.line


def test_a_value_a_reference_takes_from_a_generated_configmap_is_on_the_line_that_set_it(tmp_path):
    # prod's merged literal, dev's base literal: `--max-model-len=$(MAX_MODEL_LEN)` is written on the base line,
    # but the value is the generator's, and that line is the one to change
    servers = _by_overlay(_scan(_app(tmp_path)))
    assert _value_at(servers["app/overlays/prod"], "max_model_len") == ("app/overlays/prod/kustomization.yaml", 16)
    assert _value_at(servers["app/overlays/dev"], "max_model_len") == ("app/base/kustomization.yaml", 8)
    # a value written on the item itself stays there
    assert _value_at(servers["app/overlays/dev"], "gpu_memory_utilization") == ("app/base/deployment.yaml", 21)


def test_a_too_long_context_from_an_overlay_env_file_is_reported_and_fixed_there(tmp_path, capsys):
    prod = PROD_KUSTOMIZATION.replace("    literals:\n      - MAX_MODEL_LEN=16384\n", "    envs:\n      - engine.env\n")
    root = _app(tmp_path, **{"app/overlays/prod/kustomization.yaml": prod,
                             "app/overlays/prod/engine.env": "# longest request served\nMAX_MODEL_LEN=1000000\n"})
    cwd = os.getcwd()
    os.chdir(root)
    try:
        _, doc = run_json(capsys, ".", "--select", "VRL005", test_rules=False)
        [finding] = [f for f in doc["findings"] if "max_model_len" in f["message"]]
        assert (finding["file"], finding["line"], finding["column"]) == ("app/overlays/prod/engine.env", 2, 15)
        from vramlint.cli import main

        main(["check", ".", "--offline", "--select", "VRL005", "--fix", "--unsafe-fixes"])
        capsys.readouterr()
    finally:
        os.chdir(cwd)
    # the fix rewrites the overlay's value, not the base's reference
    assert (root / "app/overlays/prod/engine.env").read_text() == "# longest request served\nMAX_MODEL_LEN=32768\n"
    assert "--max-model-len=$(MAX_MODEL_LEN)" in (root / "app/base/deployment.yaml").read_text()


def test_a_value_a_replacement_sets_is_on_the_source_line(tmp_path):
    # a replacement copies a ConfigMap value into the env entry the argument references
    deployment = BASE_DEPLOYMENT.replace(
        "              valueFrom:\n                configMapKeyRef:\n                  name: engine\n"
        "                  key: MAX_MODEL_LEN\n", "              value: \"4096\"\n")
    root = _write(tmp_path, {
        "base/deployment.yaml": deployment,
        "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
        "long/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n"
                              "  context: \"65536\"\n",
        "long/kustomization.yaml": "resources:\n  - ../base\n  - settings.yaml\nreplacements:\n  - source:\n"
                                   "      kind: ConfigMap\n      name: settings\n      fieldPath: data.context\n"
                                   "    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n"
                                   "          - spec.template.spec.containers.[name=vllm].env.[name=MAX_MODEL_LEN]"
                                   ".value\n"})
    [server] = _scan(root).servers
    assert server.args["max_model_len"] == 65536
    assert _value_at(server, "max_model_len") == ("long/settings.yaml", 6)


def test_components_run_after_the_kustomizations_generators_and_nest(tmp_path):
    # kusttarget.go accumulateTarget: resources, generators, then components, then transformers; a component's
    # own components are accumulated the same way
    base = BASE_KUSTOMIZATION.replace("configMapGenerator:\n  - name: engine\n    literals:\n      - MAX_MODEL_LEN=8192\n",
                                      "")
    root = _write(tmp_path, {
        "base/deployment.yaml": BASE_DEPLOYMENT, "base/kustomization.yaml": base,
        "prod/kustomization.yaml": "resources:\n  - ../base\nconfigMapGenerator:\n  - name: engine\n    literals:\n"
                                   "      - MAX_MODEL_LEN=8192\ncomponents:\n  - ../long-context\n",
        # the component patches the ConfigMap its parent generates
        "long-context/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                          "patches:\n  - patch: |-\n      apiVersion: v1\n      kind: ConfigMap\n"
                                          "      metadata:\n        name: engine\n      data:\n"
                                          "        MAX_MODEL_LEN: \"32768\"\ncomponents:\n  - ../seqs\n",
        "seqs/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
                                   "  - target:\n      kind: Deployment\n    patch: |-\n      - op: add\n"
                                   "        path: /spec/template/spec/containers/0/args/-\n"
                                   "        value: --max-num-seqs=32\n"})
    inv = _scan(root)
    [server] = inv.servers
    assert server.args["max_model_len"] == 32768 and server.args["max_num_seqs"] == 32
    assert not [p for p in inv.problems if "matches no object" in p.message]


def test_a_component_named_as_a_resource_is_said(tmp_path):
    root = _write(tmp_path, {
        "base/deployment.yaml": BASE_DEPLOYMENT, "base/kustomization.yaml": BASE_KUSTOMIZATION,
        "extra/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
        "prod/kustomization.yaml": "resources:\n  - ../base\n  - ../extra\n"})
    inv = _scan(root)
    assert [p for p in inv.problems if "resource ../extra is a Component" in p.message and p.level == "warning"]


def test_strategic_merge_as_kustomize_applies_it(tmp_path):
    two = BASE_DEPLOYMENT.replace("      containers:\n", "      containers:\n        - name: proxy\n"
                                  "          image: envoyproxy/envoy:v1.31.0\n          args: [--log-level, info]\n")
    root = _write(tmp_path, {
        "base/deployment.yaml": two, "base/kustomization.yaml": BASE_KUSTOMIZATION,
        # a patch naming only the vLLM container moves it first (ListPrepend), so the JSON patch's index 0 after
        # it is vLLM; a patch's own metadata.name does not rename the object without allowNameChange
        "tuned/kustomization.yaml": "resources:\n  - ../base\npatches:\n  - target:\n      kind: Deployment\n"
                                    "    patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
                                    "      metadata:\n        name: any\n      spec:\n        template:\n"
                                    "          spec:\n            containers:\n              - name: vllm\n"
                                    "                image: vllm/vllm-openai:v0.9.2\n"
                                    "  - target:\n      kind: Deployment\n    patch: |-\n      - op: add\n"
                                    "        path: /spec/template/spec/containers/0/args/-\n"
                                    "        value: --max-num-seqs=32\n",
        # an overlay that deletes the Deployment deploys no server
        "off/kustomization.yaml": "resources:\n  - ../base\npatches:\n  - patch: |-\n      apiVersion: apps/v1\n"
                                  "      kind: Deployment\n      metadata:\n        name: llm\n      $patch: delete\n"})
    servers = _by_overlay(_scan(root))
    assert sorted(servers) == ["tuned"]
    tuned = servers["tuned"]
    assert tuned.args["max_num_seqs"] == 32 and tuned.vllm_version == "0.9.2" and tuned.name == "llm"


def _one_overlay(tmp_path, kustomization: str, deployment: str = BASE_DEPLOYMENT, **extra: str):
    root = _write(tmp_path, {"base/deployment.yaml": deployment, "base/kustomization.yaml": BASE_KUSTOMIZATION,
                             "o/kustomization.yaml": "resources:\n  - ../base\n" + kustomization, **extra})
    inv = _scan(root)
    return inv, inv.servers


def test_images_entries_apply_in_order_as_kustomize_matches_them(tmp_path):
    # a second entry sees what the first wrote; the name is kustomize's regular expression
    _, [server] = _one_overlay(tmp_path, "images:\n  - name: vllm/vllm-openai\n    newName: docker.io/vllm/vllm-openai\n"
                                         "  - name: docker\\.io/.*\n    newTag: v0.9.2\n")
    assert server.image == "docker.io/vllm/vllm-openai:v0.9.2" and server.vllm_version == "0.9.2"


def test_images_new_tag_and_digest_both_written(tmp_path):
    digest = "sha256:" + "a" * 64
    _, [server] = _one_overlay(tmp_path, f"images:\n  - name: vllm/vllm-openai\n    newTag: v0.9.2\n"
                                         f"    digest: {digest}\n")
    assert server.image == f"vllm/vllm-openai:v0.9.2@{digest}" and server.vllm_version == "0.9.2"


def test_images_tag_suffix_twice_on_a_pod_template_as_kustomize_does(tmp_path):
    # ImageTagTransformer runs its legacy filter and its field-spec filter on spec/template/spec/containers
    _, [server] = _one_overlay(tmp_path, "images:\n  - name: vllm/vllm-openai\n    tagSuffix: -cu126\n")
    assert server.image == "vllm/vllm-openai:v0.8.5-cu126-cu126"


def test_replicas_only_for_the_kinds_kustomize_knows(tmp_path):
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: llm\nspec:\n"
           "  replicas: 1\n  leaderWorkerTemplate:\n    size: 1\n    workerTemplate:\n      spec:\n"
           "        containers:\n          - name: vllm\n            image: vllm/vllm-openai:v0.8.5\n"
           "            args: [--model=Qwen/Qwen2.5-7B-Instruct]\n            resources:\n"
           "              limits: {nvidia.com/gpu: 1}\n")
    inv, [server] = _one_overlay(tmp_path, "replicas:\n  - name: llm\n    count: 4\n", lws)
    assert server.replicas == 1
    [said] = [p for p in inv.problems if "replicas names llm" in p.message]
    assert said.level == "warning" and said.file == "o/kustomization.yaml" and said.line == 4


def test_replacements_as_kustomize_writes_them(tmp_path):
    deployment = BASE_DEPLOYMENT.replace("- name: vllm\n          image: vllm/vllm-openai:v0.8.5",
                                         "- name: vllm-engine\n          image: vllm/vllm-openai")
    release = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: release\ndata:\n  tag: v0.9.2\n")
    inv, [server] = _one_overlay(tmp_path, (
        "  - release.yaml\nreplacements:\n"
        # `[name=vllm]` is kyaml's unanchored regular expression; index 1 past the one piece appends
        "  - source:\n      kind: ConfigMap\n      name: release\n      fieldPath: data.tag\n    targets:\n"
        "      - select:\n          kind: Deployment\n        fieldPaths:\n"
        "          - spec.template.spec.containers.[name=vllm].image\n        options:\n          delimiter: ':'\n"
        "          index: 1\n"
        # a literal sourceValue into an int field keeps it an int
        "  - sourceValue: \"2\"\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n"
        "          - spec.replicas\n"
        # a field the target lacks: kustomize build fails (no options.create)
        "  - sourceValue: x\n    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n"
        "          - spec.template.spec.hostname\n"), deployment, **{"o/release.yaml": release})
    assert server.image == "vllm/vllm-openai:v0.9.2" and server.vllm_version == "0.9.2"
    assert server.replicas == 2
    assert [p for p in inv.problems if "replacement target field spec.template.spec.hostname" in p.message]


def test_generator_inputs_and_behaviors_as_kustomize_reads_them(tmp_path):
    # kv.go: a bare name in an env file is an empty value (kustomize v5), a literal loses one pair of quotes
    inv, [server] = _one_overlay(tmp_path, (
        "configMapGenerator:\n  - name: engine\n    behavior: merge\n    envs:\n      - engine.env\n"
        "    literals:\n      - 'EXTRA=\"--max-num-seqs=16\"'\n"
        "  - name: tuning\n    behavior: merge\n    literals:\n      - A=1\n"
        "  - name: engine\n    literals:\n      - B=2\n"), BASE_DEPLOYMENT.replace(
            "            - --gpu-memory-utilization=0.9\n", "            - --gpu-memory-utilization=0.9\n"
            "            - $(EXTRA)\n").replace("          env:\n", "          env:\n            - name: EXTRA\n"
                                               "              valueFrom:\n                configMapKeyRef:\n"
                                               "                  name: engine\n                  key: EXTRA\n"),
        **{"o/engine.env": "\ufeffMAX_MODEL_LEN=4096\nHF_TOKEN\n"})
    assert server.args["max_model_len"] == 4096 and server.args["max_num_seqs"] == 16
    said = {p.line: p for p in inv.problems if p.file == "o/kustomization.yaml"}
    # merge with no ConfigMap before it, create of one that exists: kustomize build fails on both
    assert "no ConfigMap tuning comes before it" in said[10].message and said[10].level == "warning"
    assert "already exists" in said[14].message and said[14].level == "warning"


def test_a_patch_without_target_names_its_object_exactly(tmp_path):
    # GetById of the patch's own id: a name that is a regular expression matching `llm` names no object
    inv, [server] = _one_overlay(tmp_path, "patches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
                                           "      metadata:\n        name: l.m\n      spec:\n        replicas: 5\n")
    assert server.replicas == 1
    assert [p for p in inv.problems if "the patch for Deployment l.m matches no object" in p.message]


def test_a_replacement_from_a_configmap_whose_env_file_is_missing_is_said_once(tmp_path):
    inv, [server] = _one_overlay(tmp_path, (
        "configMapGenerator:\n  - name: settings\n    envs:\n      - settings.env\n"
        "replacements:\n  - source:\n      kind: ConfigMap\n      name: settings\n      fieldPath: data.TAG\n"
        "    targets:\n      - select:\n          kind: Deployment\n        fieldPaths:\n"
        "          - spec.template.spec.containers.[name=vllm].image\n        options:\n          delimiter: ':'\n"
        "          index: 1\n"))
    messages = [p.message for p in inv.problems if p.file == "o/kustomization.yaml"]
    assert any("env file settings.env is not in the repository" in m for m in messages)
    assert not any("replacement source field" in m for m in messages)  # the same cause, said once
    assert server.image == "vllm/vllm-openai:v0.8.5"


def test_a_selector_python_cannot_match_in_bounded_time_is_compared_as_text(tmp_path):
    # RE2 (kustomize) matches `(a+)+b` in linear time; Python's engine would take exponential time on a long name
    import time

    from vramlint.kustomize import _full_match

    started = time.process_time()
    assert not _full_match("(a+)+b", "a" * 60) and _full_match("(a+)+b", "(a+)+b")
    assert _full_match("llm-.*", "llm-7b") and not _full_match("llm", "llm-7b")
    assert time.process_time() - started < 1.0


def test_a_long_merge_list_is_merged_in_one_pass(tmp_path):
    # 5,000 env items patched over 5,000: a scan of the base list per patch item was quadratic
    import time

    from vramlint.kustomize import KMap, KSeq, _merge_list

    old, new = KSeq(), KSeq()
    for i in range(5000):
        old.append(KMap({"name": f"V{i}", "value": str(i)}))
        new.append(KMap({"name": f"V{4999 - i}", "value": f"p{4999 - i}"}))
    old.iorg, new.iorg = [None] * 5000, [None] * 5000
    started = time.process_time()
    _merge_list(old, new, "name", True, 0)
    assert time.process_time() - started < 1.0
    assert [o["name"] for o in old[:2]] == ["V4999", "V4998"] and old[0]["value"] == "p4999" and len(old) == 5000


def test_components_that_include_each_other_are_a_cycle_said(tmp_path):
    # hostile22: kustomize's loader refuses the second visit ("cycle detected"); vramlint passed over it unsaid
    component = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents:\n  - ../{}\n"
    root = _write(tmp_path, {"base/deployment.yaml": BASE_DEPLOYMENT,
                             "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
                             "comp-a/kustomization.yaml": component.format("comp-b"),
                             "comp-b/kustomization.yaml": component.format("comp-a"),
                             "overlay/kustomization.yaml": "resources:\n  - ../base\ncomponents:\n  - ../comp-a\n"})
    inv = _scan(root)
    said = [(p.file.rsplit("/", 2)[-2], p.line, p.level) for p in inv.problems if "a cycle" in p.message]
    assert said == [("comp-b", 4, "warning")]


def test_a_component_whose_file_cannot_be_read_is_said_where_it_fails_and_on_the_entry(tmp_path):
    # hostile23: a component holding an alias bomb was "has no kustomization file"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    bomb = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" + "\n".join(levels) + "\n"
    root = _app(tmp_path, **{"app/overlays/prod/kustomization.yaml": PROD_KUSTOMIZATION + "components:\n  - ../bomb\n",
                             "app/overlays/bomb/kustomization.yaml": bomb})
    inv = _scan(root)
    entry = [p for p in inv.problems if "its kustomization file" in p.message]
    assert len(entry) == 1 and entry[0].file.endswith("prod/kustomization.yaml") and entry[0].level == "warning"
    at_file = [p for p in inv.problems if p.file.endswith("bomb/kustomization.yaml") and "alias" in p.message]
    assert at_file and at_file[0].line is not None and at_file[0].line > 2
    assert not any("has no kustomization file" in p.message for p in inv.problems)
