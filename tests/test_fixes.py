"""Fixes: each rule's fix in each source format, applied by `check --fix`, then re-checked.

For every case: the finding carries a fix with edits, `--fix --unsafe-fixes` removes that finding and adds no
other (compared by rule and file), and the file is unchanged outside the edited spans (comments kept)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from vramlint.fixes import apply_edits, forget_texts
from vramlint.model import Edit

REPO = Path(__file__).resolve().parents[1]
HELM_BASIC = REPO / "tests" / "fixtures" / "helm" / "basic"

K8S_HEAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: {instance}
      containers:
        - name: vllm
          image: vllm/vllm-openai:{tag}
"""
LIMITS = """\
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""


def k8s(body: str, name: str = "llama", instance: str = "g5.xlarge", tag: str = "v0.6.3", gpus: int = 1) -> str:
    return K8S_HEAD.format(name=name, instance=instance, tag=tag) + body + LIMITS.format(gpus=gpus)


COMPOSE_LIST = """\
# two engines on device 0
services:
  chat:
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "meta-llama/Llama-3.2-3B-Instruct", "--max-model-len", "16384",
              "--gpu-memory-utilization", "0.60"]  # the larger one
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
  small:
    image: vllm/vllm-openai:v0.9.2
    command:
      - --model
      - Qwen/Qwen2.5-1.5B-Instruct
      - --gpu-memory-utilization
      - "0.45"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
"""

KAITO_WORKSPACE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: llama-params
data:
  inference_config.yaml: |
    vllm:
      gpu-memory-utilization: 0.9
      max-model-len: 131072  # the full context
---
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-llama
resource:
  instanceType: "Standard_NV36ads_A10_v5"
  labelSelector:
    matchLabels:
      apps: llama
inference:
  preset:
    name: "llama-3.1-8b-instruct"
  config: "llama-params"
"""

CASES = {
    # rule fixed, files, extra flags
    "VRL005 list --flag=value": ("VRL005", {"d.yaml": k8s(
        "          args:\n            - --model=meta-llama/Llama-3.1-8B-Instruct\n"
        "            - --max-model-len=131072  # the full context\n")}, []),
    "VRL005 list items, quoted": ("VRL005", {"d.yaml": k8s(
        '          args:\n            - "--model"\n            - "meta-llama/Llama-3.1-8B-Instruct"\n'
        '            - "--max-model-len"\n            - "131072"\n')}, []),
    "VRL005 shell string": ("VRL005", {"d.yaml": k8s(
        '          command: ["/bin/sh", "-c"]\n'
        '          args: ["vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072 --port 8000"]\n')}, []),
    "VRL005 shell block scalar": ("VRL005", {"d.yaml": k8s(
        "          command:\n            - sh\n            - -c\n            - |\n"
        "              exec vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
        "                --max-model-len 131072 \\\n                --port 8000\n")}, []),
    "VRL005 --config file": ("VRL005", {"cfg/vllm_config.yaml": (
        "# vLLM config\nmodel: meta-llama/Llama-3.1-8B-Instruct\nmax-model-len: 131072  # too long\n"
        "gpu-memory-utilization: 0.9\n")},
        ["--gpu", "A10G", "--vllm-version", "0.6.3"]),
    "VRL007 compose string": ("VRL007", {"compose.yaml": (REPO / "examples/compose/compose.yaml").read_text()},
                              ["--gpu", "L4"]),
    "VRL007 compose list": ("VRL007", {"compose.yaml": COMPOSE_LIST}, ["--gpu", "L4"]),
    "VRL001 adds a list item": ("VRL001", {"d.yaml": k8s(
        '          args:\n            - "--model"\n            - "meta-llama/Llama-3.1-8B-Instruct"  # served\n',
        instance="g6e.xlarge", tag="v0.10.2")}, []),
    "VRL001 adds to a shell string": ("VRL001", {"d.yaml": k8s(
        '          command: ["/bin/sh", "-c"]\n'
        '          args: ["vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000"]\n',
        instance="g6e.xlarge", tag="v0.10.2")}, []),
    "VRL002 adds to a flow list": ("VRL002", {"d.yaml": k8s(
        '          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096",\n'
        '                 "--gpu-memory-utilization", "0.76"]\n', tag="v0.10.2")}, []),
    "VRL009 removes from a list": ("VRL009", {"d.yaml": k8s(
        "          args:\n            - --model=meta-llama/Llama-3.2-3B-Instruct\n            - --foo-bar\n"
        "            - \"3\"\n            - --max-model-len=8192\n", tag="v0.10.2")}, []),
    "VRL009 renames a misspelt flag": ("VRL009", {"d.yaml": k8s(
        '          command: ["/bin/sh", "-c"]\n'
        '          args: ["vllm serve meta-llama/Llama-3.2-3B-Instruct --max-modle-len 8192"]\n', tag="v0.10.2")}, []),
    "VRL009 removes a --config file key": ("VRL009", {"cfg/vllm_config.yaml": (
        "# vLLM config\nmodel: meta-llama/Llama-3.2-3B-Instruct\nnum-scheduler-steps: 8  # multi-step\n"
        "max-model-len: 8192\n")}, ["--gpu", "L4", "--vllm-version", "0.10.2"]),
    "VRL008 KServe predictor": ("VRL008", {"isvc.yaml": (REPO / "examples/kserve/inferenceservice.yaml").read_text(),
                                           "runtime.yaml": (REPO / "examples/kserve/servingruntime.yaml").read_text()},
                                []),
    "VRL008 existing volumes and mounts": ("VRL008", {"d.yaml": k8s(
        "          args:\n            - --model=Qwen/Qwen2.5-7B-Instruct\n            - --max-model-len=8192\n"
        "            - --tensor-parallel-size=2\n          volumeMounts:\n          - name: cache  # the HF cache\n"
        "            mountPath: /root/.cache\n", instance="g6e.12xlarge", tag="v0.10.2", gpus=2).replace(
        "      containers:\n", "      volumes:\n      - name: cache\n        emptyDir: {}\n      containers:\n")},
        []),
    "VRL008 compose": ("VRL008", {"compose.yaml": (
        "services:\n  qwen:\n    image: vllm/vllm-openai:v0.9.2\n"
        "    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --max-model-len 8192\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 2\n              capabilities: [gpu]\n")},
        ["--gpu", "L40S"]),
    "VRL006 known chart's requestGPU": ("VRL006", {"values.yaml": (
        REPO / "examples/helm/production-stack-values.yaml").read_text()}, []),
    "VRL001 adds a Helm values key": ("VRL001", {"values.yaml": (
        REPO / "examples/helm/production-stack-values.yaml").read_text()}, []),
    "VRL002 adds a --config file key": ("VRL002", {"cfg/vllm_config.yaml": (
        "# vLLM config\nmodel: meta-llama/Llama-3.1-8B-Instruct\nmax_model_len: 4096  # short\n"
        "gpu_memory_utilization: 0.8\n")}, ["--gpu", "L4", "--vllm-version", "0.10.2"]),
    "VRL006 Kubernetes GPU request, limits and requests": ("VRL006", {"d.yaml": k8s(
        '          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4",\n'
        '                 "--max-model-len", "8192"]\n', instance="g6e.12xlarge", tag="v0.10.2", gpus=2)
        + '            requests:\n              nvidia.com/gpu: "2"  # as the limit\n'}, []),
    "VRL006 compose device count": ("VRL006", {"compose.yaml": (
        "services:\n  llama:\n    image: vllm/vllm-openai:v0.10.2\n    shm_size: 16gb\n"
        "    command: --model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max-model-len 8192\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 2  # two cards\n              capabilities: [gpu]\n")},
        ["--gpu", "L40S"]),
    "VRL005 KAITO inference config, a key line added": ("VRL005", {
        "ws.yaml": KAITO_WORKSPACE,
        # VRL002's options as configured decide the --max-num-seqs VRL005's fix adds with the shorter context
        ".vramlint.yaml": "rules:\n  max-num-seqs-over-kv-capacity:\n    min-concurrency: 16\n"},
        ["--vllm-version", "0.10.2"]),
    "VRL006 tensor parallel size": ("VRL006", {"d.yaml": k8s(
        "          args:\n            - --model=Qwen/Qwen2.5-7B-Instruct\n            - --max-model-len=8192\n"
        "            - --tensor-parallel-size=2\n", instance="g6e.xlarge", tag="v0.10.2")}, []),
}


def _check(capsys, root: Path, *flags: str) -> tuple[int, list[dict]]:
    from vramlint.cli import main

    forget_texts()
    code = main(["check", str(root), "--offline", "--output-format", "json", *flags])
    out = capsys.readouterr().out
    return code, json.loads(out)["findings"]


def _fix_run(capsys, root: Path, *flags: str) -> tuple[int, str, str]:
    from vramlint.cli import main

    forget_texts()
    code = main(["check", str(root), "--offline", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.lstrip().startswith("#")]


@pytest.mark.parametrize("case", list(CASES))
def test_fix_removes_its_finding_and_adds_none(case, tmp_path, capsys):
    rule, files, flags = CASES[case]
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _, before = _check(capsys, root, *flags)
    target = [f for f in before if f["rule"] == rule]
    assert target, f"{case}: no {rule} finding to fix: {[(f['rule'], f['message'][:80]) for f in before]}"
    assert all(f.get("fix") and f["fix"]["edits"] for f in target), target[0].get("fix")
    assert target[0]["help_url"].endswith("docs/rules.md#" + rule.lower() + "-" + target[0]["name"])

    _, _, err = _fix_run(capsys, root, "--fix", "--unsafe-fixes", *flags)
    assert "fixed" in err
    _, after = _check(capsys, root, *flags)
    assert not [f for f in after if f["rule"] == rule], [f["message"][:200] for f in after if f["rule"] == rule]
    count_before = Counter((f["rule"], f["file"]) for f in before)
    count_after = Counter((f["rule"], f["file"]) for f in after)
    assert not count_after - count_before, f"new findings after the fix: {count_after - count_before}"
    changed = 0
    for name, text in files.items():
        new = (root / name).read_text()
        changed += new != text
        assert _comments(new) == _comments(text)
    assert changed


def test_helm_values_through_templates(tmp_path, capsys):
    chart = tmp_path / "chart"
    shutil.copytree(HELM_BASIC, chart)
    (chart / "values-prod.yaml").unlink()
    values = chart / "values.yaml"
    values.write_text(values.read_text().replace("maxModelLen: 32768", "maxModelLen: 131072  # full"))
    _, before = _check(capsys, chart)
    vrl005 = [f for f in before if f["rule"] == "VRL005"]
    assert vrl005 and vrl005[0]["file"].endswith("values.yaml")
    edit = vrl005[0]["fix"]["edits"][0]
    assert edit["file"].endswith("values.yaml") and edit["line"] == vrl005[0]["line"]
    _fix_run(capsys, chart, "--fix", "--unsafe-fixes")
    _, after = _check(capsys, chart)
    assert not [f for f in after if f["rule"] == "VRL005"]
    text = values.read_text()
    assert f"maxModelLen: {edit['replacement']}  # full" in text


def test_diff_changes_nothing_and_exits_1(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    original = k8s("          args:\n            - --model=meta-llama/Llama-3.1-8B-Instruct\n"
                   "            - --max-model-len=131072\n").replace("\n", "\r\n").encode()
    (root / "d.yaml").write_bytes(original)
    code, out, err = _fix_run(capsys, root, "--diff", "--unsafe-fixes")
    assert code == 1
    assert "-            - --max-model-len=131072" in out and "+            - --max-model-len=" in out
    assert (root / "d.yaml").read_bytes() == original
    # the VRL005 fix is unsafe (a shorter context rejects long requests): not applied without --unsafe-fixes
    code, out, err = _fix_run(capsys, root, "--diff")
    assert code == 0 and out == "" and "1 more with --unsafe-fixes" in err


def test_fix_keeps_crlf_and_every_other_byte(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    original = k8s("          args:  # settings\r\n            - --model=meta-llama/Llama-3.1-8B-Instruct\r\n"
                   "            - --max-model-len=131072\r\n").replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    (root / "d.yaml").write_bytes(original.encode())
    _fix_run(capsys, root, "--fix", "--unsafe-fixes")
    new = (root / "d.yaml").read_bytes().decode()
    old_lines, new_lines = original.split("\r\n"), new.split("\r\n")
    assert len(old_lines) == len(new_lines) and "\n" not in new.replace("\r\n", "")
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert len(changed) == 1 and changed[0][0].endswith("=131072")
    assert changed[0][1].startswith("            - --max-model-len=") and changed[0][1].split("=")[1].isdigit()


def test_fix_without_unsafe_applies_only_safe(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "compose.yaml").write_text(COMPOSE_LIST)
    _, before = _check(capsys, root, "--gpu", "L4")
    vrl007 = [f for f in before if f["rule"] == "VRL007"]
    assert len(vrl007) == 1 and vrl007[0]["fix"]["safe"]
    # one finding per shared GPU: its fix edits every engine's utilisation
    assert len(vrl007[0]["fix"]["edits"]) == 2
    unsafe = sum(1 for f in before if f.get("fix") and f["fix"]["edits"] and not f["fix"]["safe"])
    code, _, err = _fix_run(capsys, root, "--fix", "--gpu", "L4")
    assert "fixed 1 finding(s) in 1 file(s)" in err
    assert (f"{unsafe} more with --unsafe-fixes" in err) if unsafe else "unsafe" not in err
    _, after = _check(capsys, root, "--gpu", "L4")
    assert not [f for f in after if f["rule"] == "VRL007"]
    assert code == 0


def test_fix_without_edits_says_why(tmp_path, capsys):
    """A production-stack model entry without vllmConfig: the chart writes --no-enable-prefix-caching whenever
    the block exists, so adding vllmConfig.maxModelLen would change more than the one flag."""
    root = tmp_path / "repo"
    root.mkdir()
    values = (REPO / "examples/helm/production-stack-values.yaml").read_text()
    values = values.replace('      vllmConfig:\n        gpuMemoryUtilization: 0.9\n        dtype: "bfloat16"\n', "")
    (root / "values.yaml").write_text(values)
    _, findings = _check(capsys, root)
    vrl001 = [f for f in findings if f["rule"] == "VRL001"]
    assert vrl001 and vrl001[0]["fix"]["edits"] == []
    assert "vllmConfig" in vrl001[0]["fix"]["reason"] and "prefix-caching" in vrl001[0]["fix"]["reason"]
    code, out, _ = _fix_run(capsys, root)
    assert f"(no automatic fix: {vrl001[0]['fix']['reason']}" in " ".join(out.split())


def test_shm_fix_does_not_add_a_line_to_a_flow_style_list(tmp_path, capsys):
    """`volumes: [...]` cannot take a `- name: dshm` line: the fix says so instead of breaking the file."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "d.yaml").write_text(k8s(
        "          args:\n            - --model=Qwen/Qwen2.5-7B-Instruct\n            - --max-model-len=8192\n"
        "            - --tensor-parallel-size=2\n          volumeMounts:\n          - name: cache\n"
        "            mountPath: /root/.cache\n", instance="g6e.12xlarge", tag="v0.10.2", gpus=2).replace(
        "      containers:\n", "      volumes: [{name: cache, emptyDir: {}}]\n      containers:\n"))
    _, findings = _check(capsys, root)
    [vrl008] = [f for f in findings if f["rule"] == "VRL008"]
    assert vrl008["fix"]["edits"] == []
    assert vrl008["fix"]["reason"] == "the pod's volumes are written in a form vramlint does not extend"


def test_overlapping_fixes_first_wins(tmp_path, capsys):
    from vramlint.fixing import apply_fixes
    from vramlint.model import Finding, Fix, Location

    path = tmp_path / "f.yaml"
    path.write_text("a: 1\nb: 2\n")
    forget_texts()
    one = Finding("VRL001", "x", "warning", "m", Location(str(path), 1),
                  fix=Fix("one", True, [Edit(str(path), 1, 4, 1, 5, "10")]))
    two = Finding("VRL002", "y", "warning", "m", Location(str(path), 1),
                  fix=Fix("two", True, [Edit(str(path), 1, 4, 1, 5, "20")]))
    done = apply_fixes([one, two])
    assert done.fixes_applied == 1 and len(done.skipped_overlap) == 1
    assert path.read_text() == "a: 10\nb: 2\n"
    assert "overlaps" in capsys.readouterr().err


def test_apply_edits_insert_and_replace():
    text = "x: [1]\r\ny: 2\r\n"
    edits = [Edit("f", 2, 4, 2, 5, "3"), Edit("f", 1, 6, 1, 6, ", 4")]
    assert apply_edits(text, edits) == "x: [1, 4]\r\ny: 3\r\n"


def test_fix_with_stdin_is_a_usage_error(capsys):
    from vramlint.cli import main

    assert main(["check", "-", "--fix"]) == 2
    assert "standard input" in capsys.readouterr().err


def test_sarif_carries_fixes_help_uri_and_related_locations(tmp_path, capsys):
    from tests.test_report_sarif import assert_valid_sarif
    from vramlint.cli import main

    root = tmp_path / "repo"
    root.mkdir()
    (root / "compose.yaml").write_text(COMPOSE_LIST)
    (root / "values.yaml").write_text((REPO / "examples/helm/production-stack-values.yaml").read_text())
    forget_texts()
    main(["check", str(root), "--offline", "--gpu", "L4", "--output-format", "sarif"])
    doc = json.loads(capsys.readouterr().out)
    assert_valid_sarif(doc)
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["VRL007"]["helpUri"].endswith("docs/rules.md#vrl007-gpu-oversubscribed")
    vrl007 = [r for r in run["results"] if r["ruleId"] == "VRL007"]
    replacements = vrl007[0]["fixes"][0]["artifactChanges"][0]["replacements"]
    assert {r["insertedContent"]["text"] for r in replacements} == {"0.57", "0.42"}
    assert replacements[0]["deletedRegion"]["startLine"] == 6
    assert vrl007[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] in (6, 19)
    vrl006 = [r for r in run["results"] if r["ruleId"] == "VRL006"]
    assert vrl006[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 34
    assert vrl006[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "2"


def test_every_finding_of_a_value_rule_on_the_examples_has_a_fix(capsys):
    from vramlint.cli import main

    forget_texts()
    main(["check", str(REPO / "examples"), "--offline", "--output-format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    value_rules = {"VRL001", "VRL002", "VRL005", "VRL006", "VRL007", "VRL008", "VRL009"}
    checked = [f for f in findings if f["rule"] in value_rules]
    assert len(checked) >= 5
    for f in checked:
        fix = f.get("fix")
        assert fix and fix["description"], f
        assert fix["edits"] or fix["reason"], f


def test_text_summary_and_github_say_how_many_fixes(capsys):
    from vramlint.cli import main

    forget_texts()
    main(["check", str(REPO / "examples"), "--offline", "--output-format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    safe = sum(1 for f in findings if f.get("fix") and f["fix"]["edits"] and f["fix"]["safe"])
    unsafe = sum(1 for f in findings if f.get("fix") and f["fix"]["edits"] and not f["fix"]["safe"])
    assert safe and unsafe
    forget_texts()
    main(["check", str(REPO / "examples"), "--offline", "--color", "never"])
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert f"{safe} fixable with --fix, {unsafe} more with --fix --unsafe-fixes" in last
    forget_texts()
    main(["check", str(REPO / "examples"), "--offline", "--output-format", "github"])
    notices = [line for line in capsys.readouterr().out.splitlines() if "fixable with" in line]
    assert len(notices) == 1 and notices[0].startswith("::notice ") and f"{safe} fixable with --fix" in notices[0]


def test_kaito_fix_adds_the_key_in_the_inference_config_block(tmp_path, capsys):
    """The flag VRL005's fix adds goes in the ConfigMap's `vllm:` block, in its indentation and key style, not
    after the Workspace's own keys (the preset name is the last line vramlint read for this server)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "ws.yaml").write_text(KAITO_WORKSPACE)
    (root / ".vramlint.yaml").write_text("rules:\n  VRL002:\n    min-concurrency: 16\n")
    _fix_run(capsys, root, "--fix", "--unsafe-fixes", "--vllm-version", "0.10.2")
    text = (root / "ws.yaml").read_text()
    lines = text.splitlines()
    at = lines.index("    vllm:")
    block = lines[at + 1:lines.index("---")]
    assert block[0] == "      gpu-memory-utilization: 0.9"
    assert block[1].startswith("      max-model-len: ") and block[1].endswith("  # the full context")
    assert block[2].startswith("      max-num-seqs: ") and block[2].split(": ")[1].isdigit()
    original = KAITO_WORKSPACE.splitlines()
    assert lines[:at + 1] == original[:at + 1] and lines[lines.index("---"):] == original[original.index("---"):]


def test_helm_values_key_goes_into_the_block_the_chart_reads(tmp_path, capsys):
    """production-stack: --max-model-len not set is added as vllmConfig.maxModelLen, in that block's
    indentation; everything else stays byte for byte."""
    root = tmp_path / "repo"
    root.mkdir()
    original = (REPO / "examples/helm/production-stack-values.yaml").read_text()
    (root / "values.yaml").write_text(original)
    _, before = _check(capsys, root)
    [vrl001] = [f for f in before if f["rule"] == "VRL001"]
    [edit] = vrl001["fix"]["edits"]
    assert edit["replacement"] == "        maxModelLen: 8192\n" and edit["column"] == 1
    _fix_run(capsys, root, "--fix", "--unsafe-fixes")
    new = (root / "values.yaml").read_text().splitlines()
    old = original.splitlines()
    at = new.index("        maxModelLen: 8192")
    assert new[at - 1] == "      vllmConfig:"
    # the other change is VRL006's (requestGPU of the second model): every other line is as it was
    assert [x for x in new[:at] + new[at + 1:] if "requestGPU" not in x] == [x for x in old if "requestGPU" not in x]
