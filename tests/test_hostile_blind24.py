"""The twenty-fourth round of hostile inputs (benchmarks/hostile_blind24.py), the cheap ones as tests: each
failed on main before the fix it holds (a read or listing outside the tree, a cut or refusal said nowhere, a
finding on the wrong line). Every case is written to tmp_path; most run the real CLI in a process of its own."""

from __future__ import annotations

import os

from tests.test_hostile_bounds import run_cli, write

CHART = "apiVersion: v2\nname: c\nversion: 0.1.0\n"
TEMPLATE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            "          args: [\"--model\", \"{{ .Values.model }}\"]\n")


def test_a_charts_folder_linked_out_of_the_tree_is_not_listed_and_is_said_on_the_chart(tmp_path):
    outside = tmp_path / "outside"
    write(outside, {"stolen/Chart.yaml": CHART.replace("name: c", "name: stolen"),
                    "stolen/values.yaml": "model: planted/outside-model\n", "stolen/templates/d.yaml": TEMPLATE})
    repo = tmp_path / "repo"
    write(repo, {"c/Chart.yaml": CHART, "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                 "c/templates/d.yaml": TEMPLATE})
    os.symlink(outside, repo / "c" / "charts")
    _, report, err = run_cli(repo, timeout=60)
    [said] = [f for f in report["findings"] if "c/charts leads outside the scanned tree" in f["message"]]
    assert said["file"] == "c/Chart.yaml" and said["level"] == "warning"
    assert "planted/outside-model" not in str(report) + err
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def _secret_beside_vllm(value: str) -> str:
    return (f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\ndata:\n  token: "{value}"\n---\n'
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            "          args: [\"--model\", \"Qwen/Qwen2.5-1.5B-Instruct\"]\n"
            "          envFrom:\n            - secretRef: {name: hf}\n")


def test_a_secret_value_that_is_not_base64_is_refused_without_quoting_it(tmp_path):
    # hostile24: the refusal quoted the first 60 characters of the value, which is a secret (a plain token)
    write(tmp_path, {"p.yaml": _secret_beside_vllm("hf_plantedSecretValue"),
                     "q.yaml": _secret_beside_vllm("hf_planted$(printf x)")})
    code, report, err = run_cli(tmp_path, timeout=60)
    refused = {f["file"]: f for f in report["findings"] if "is not base64" in f["message"]}
    assert code == 1 and set(refused) == {"p.yaml", "q.yaml"}
    assert all(f["line"] == 6 and f["level"] == "error" for f in refused.values())
    assert "21 characters, not a multiple of 4" in refused["p.yaml"]["message"]
    assert "hf_planted" not in str(report) + err


def _application(path: str) -> str:
    return ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\nspec:\n"
            "  destination:\n    namespace: ai\n  source:\n    repoURL: https://example.invalid/x.git\n"
            f"    path: {path}\n    helm:\n      valueFiles: [values.yaml]\n")


def test_an_argo_cd_source_path_that_is_absolute_or_leads_out_of_the_repository_is_said_on_its_line(tmp_path):
    # hostile23/24 leftover: Argo CD's repo server refuses both (util/app/path.Path); they were skipped silently
    write(tmp_path, {"c/Chart.yaml": CHART, "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                     "c/templates/d.yaml": TEMPLATE, "gitops/a.yaml": _application("../outside/chart"),
                     "gitops/b.yaml": _application("/../../outside/chart"), "gitops/ok.yaml": _application("c")})
    _, report, _ = run_cli(tmp_path, timeout=60)
    said = {f["file"]: f for f in report["findings"] if "Argo CD's repo server refuses it" in f["message"]}
    assert set(said) == {"gitops/a.yaml", "gitops/b.yaml"}
    assert said["gitops/a.yaml"]["line"] == 10 and "app path outside root" in said["gitops/a.yaml"]["message"]
    assert said["gitops/b.yaml"]["line"] == 10 and "app path is absolute" in said["gitops/b.yaml"]["message"]
    assert all(f["level"] == "warning" for f in said.values())


def test_llminferenceservice_base_refs_are_said_once_on_the_field(tmp_path):
    # hostile24: 10,000 baseRefs (configs KServe merges under the spec) were said nowhere
    refs = "".join(f"    - name: cfg-{i}\n" for i in range(10000))
    write(tmp_path, {"l.yaml": "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n"
                               f"  name: q\nspec:\n  baseRefs:\n{refs}  model:\n    uri: hf://Qwen/Qwen2.5-7B-Instruct\n"
                               "  template:\n    containers:\n      - name: main\n        resources:\n"
                               "          limits:\n            nvidia.com/gpu: \"1\"\n"})
    _, report, _ = run_cli(tmp_path, timeout=60)
    [said] = [f for f in report["findings"] if "spec.baseRefs" in f["message"]]
    assert said["line"] in (6, 7) and said["level"] == "note" and "cfg-0, cfg-1, cfg-2 and 9,997 more" in \
        said["message"]
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-7B-Instruct"]


def _deployment(model: str) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            f"          args: [\"--model\", \"{model}\"]\n")


def test_a_local_model_folder_outside_the_tree_is_said_on_the_model_line(tmp_path):
    # hostile24: a --model folder outside the scanned tree (absolute, /proc/self, or a link in the repository) was
    # refused, but said only in the run's summary
    outside = tmp_path / "outside" / "model"
    write(outside, {"config.json": '{"architectures": ["PlantedArch"], "model_type": "llama"}'})
    repo = tmp_path / "repo"
    (repo / "snap").mkdir(parents=True)
    os.symlink(outside, repo / "snap" / "0123abcd")
    write(repo, {"a.yaml": _deployment(str(outside)), "b.yaml": _deployment("/proc/self"),
                 "c.yaml": _deployment("./snap/0123abcd")})
    _, report, err = run_cli(repo, timeout=60)
    said = {f["file"]: f for f in report["findings"] if f["rule"] == "VRL010" and "outside the scanned tree" in
            f["message"]}
    assert set(said) == {"a.yaml", "b.yaml", "c.yaml"} and all(f["line"] == 11 for f in said.values())
    assert "PlantedArch" not in str(report) + err


def test_a_model_folder_of_the_tree_whose_config_json_is_broken_is_said_on_the_model_line(tmp_path):
    # round 23 leftover (config-architectures-absurd): a local config.json that is not JSON or not usable (a layer
    # count of 1e999) was said only in the run's summary
    write(tmp_path, {".vramlint.yaml": "model-aliases:\n  /models/a: ./a\n  /models/b: ./b\n",
                     "a/config.json": '{"architectures": ["LlamaForCausalLM"], "hidden_size": ',
                     "b/config.json": '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", '
                                      '"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 1e999}',
                     "a.yaml": _deployment("/models/a"), "b.yaml": _deployment("/models/b")})
    _, report, _ = run_cli(tmp_path, timeout=60)
    said = {f["file"]: f for f in report["findings"] if f["rule"] == "VRL010" and "config.json" in f["message"]}
    assert set(said) == {"a.yaml", "b.yaml"} and all(f["line"] == 11 for f in said.values())
    assert "num_hidden_layers is inf" in said["b.yaml"]["message"]
    assert "in the scanned tree: " not in str(report["findings"])


def test_a_40_digit_max_model_len_gets_vllms_own_comparison_with_the_models_maximum(tmp_path):
    # round 23 leftover: vLLM's parser takes it (int()), then ModelConfig._get_and_verify_max_len refuses it against
    # the model's 32,768; vramlint said "beyond int64, not read" (VRL102) instead of vLLM's message
    big = "1234567890" * 4
    write(tmp_path, {"d.yaml": _deployment("Qwen/Qwen2.5-7B-Instruct").replace(
        '"]\n', f'", "--max-model-len", "{big}"]\n')})
    code, report, _ = run_cli(tmp_path, "--gpu", "L4", timeout=60)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    assert code == 1 and error["rule"] == "VRL005" and error["line"] == 11
    assert f"User-specified max_model_len ({big}) is greater than the derived max_model_len" in error["message"]


def test_group_counts_past_int32_are_one_warning_on_the_first_of_them(tmp_path):
    # hostile24: an LWS size of 10**30 and KubeRay replicas/maxReplicas/numOfHosts of 10**18 (int32 fields of the
    # operators' Go types, which their controllers cannot decode) were said nowhere
    ray = ("apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: r\nspec:\n  headGroupSpec:\n"
           "    rayStartParams: {}\n    template:\n      spec:\n        containers:\n          - name: head\n"
           "            image: vllm/vllm-openai:v0.8.5\n"
           "            command: [\"sh\", \"-c\", \"vllm serve Qwen/Qwen2.5-1.5B-Instruct --tensor-parallel-size 2\"]\n"
           "            resources: {limits: {nvidia.com/gpu: 1}}\n  workerGroupSpecs:\n    - groupName: gpu\n"
           f"      replicas: {10**18}\n      minReplicas: 1\n      maxReplicas: {10**18}\n"
           "      rayStartParams: {}\n      template:\n        spec:\n          containers:\n"
           "            - name: worker\n              image: vllm/vllm-openai:v0.8.5\n"
           "              resources: {limits: {nvidia.com/gpu: 1}}\n")
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: l\nspec:\n"
           f"  leaderWorkerTemplate:\n    size: {10**30}\n    workerTemplate:\n      spec:\n        containers:\n"
           "          - name: vllm\n            image: vllm/vllm-openai:v0.8.5\n"
           "            command: [\"sh\", \"-c\", \"vllm serve Qwen/Qwen2.5-1.5B-Instruct\"]\n"
           "            resources: {limits: {nvidia.com/gpu: 1}}\n")
    ok = lws.replace(str(10**30), "2")
    write(tmp_path, {"ray.yaml": ray, "lws.yaml": lws, "ok.yaml": ok.replace("name: l\n", "name: ok\n")})
    _, report, _ = run_cli(tmp_path, timeout=60)
    said = [f for f in report["findings"] if "cannot hold" in f["message"]]
    assert sorted((f["file"], f["line"]) for f in said) == [("lws.yaml", 7), ("ray.yaml", 17)]
    assert all(f["level"] == "warning" for f in said)
    assert "so are maxReplicas" in next(f for f in said if f["file"] == "ray.yaml")["message"]
