import json

import pytest

from vramlint.cli import main


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    """explain wraps at the terminal width (tests/test_text_format.py checks that): these tests read whole lines."""
    monkeypatch.setenv("COLUMNS", "1000")


def run(capsys, *argv):
    code = main(["explain", *argv])
    return code, capsys.readouterr().out


def test_pasted_command_line_json(capsys):
    code, out = run(capsys, "--gpu", "T4", "--vllm-version", "0.6.5", "--offline", "--format", "json", "--",
                    "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    assert code == 0
    (server,) = json.loads(out)["servers"]
    b = server["budget"]
    assert b["gpu"] == "T4" and b["engine"] == "v0" and b["vllm_version"] == "0.6.5"
    for key in ("total_gib", "usable_gib", "weights_gib", "non_torch_gib", "activation_gib", "cudagraph_gib",
                "kv_cache_gib", "kv_bytes_per_token", "block_size", "num_gpu_blocks", "kv_tokens", "max_model_len",
                "max_concurrency", "starts", "errors"):
        assert key in b
    assert b["kv_bytes_per_token"] == 114688 and b["weights_gib"] == 6.02


def test_text_has_bar_numbers_and_sources(capsys):
    code, out = run(capsys, "--gpu", "L4", "--vllm-version", "0.11.0", "--offline", "--",
                    "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    assert code == 0
    assert "[W" in out and "KV cache" in out and "headroom" in out
    assert "vLLM 0.11.0 (--vllm-version)" in out and "vllm_version: --vllm-version" in out


def test_text_shows_the_stages_of_the_budget_in_order(capsys):
    """explain groups the budget under the stages vLLM's start-up goes through, as vramlint.budget computes it."""
    from vramlint.budget import STAGES

    code, out = run(capsys, "--gpu", "L4", "--vllm-version", "0.11.0", "--offline", "--",
                    "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct", "--tensor-parallel-size", "5")
    headings = [line[2:] for line in out.splitlines() if line[:3] == "  " + line[2:3] and line[2:3].isdigit()]
    assert headings == [f"{n} {name}" for n, (name, _) in enumerate(STAGES, 1)]
    verdict = out.split("\n  5 verdict\n", 1)[1]
    assert verdict.startswith("    FAILS [VRL005 at line 1]: vLLM 0.11.0 will not start: Total number of attention heads (24) "
                              "must be divisible")


def test_unresolved_gpu_gives_null_budget(capsys):
    code, out = run(capsys, "--offline", "--format", "json", "--", "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    (server,) = json.loads(out)["servers"]
    assert server["budget"] is None
    assert any("--gpu" in why for why in server["unresolved"])


def test_gpu_outside_catalog_needs_memory(capsys):
    # as in `check`, a GPU name outside the catalog is a usage error unless its memory is given
    code, out = run(capsys, "--gpu", "MI300A", "--offline", "--format", "json", "--", "vllm", "serve",
                    "meta-llama/Llama-3.2-3B-Instruct")
    assert code == 2 and out == ""
    code, out = run(capsys, "--gpu", "MI300A", "--gpu-memory-gib", "191.5", "--offline", "--format", "json", "--",
                    "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    assert json.loads(out)["servers"][0]["budget"]["total_gib"] == 191.5


def test_gpu_memory_gib_replaces_a_catalog_gpus_total(capsys):
    """The total CUDA reports differs between boards of one model (T4: 14.56 GiB in the vLLM forum log, 14.74 in
    a Colab notebook's 0.8.2 log: `total_gpu_memory (14.74GiB) x gpu_memory_utilization (0.89) = 13.18GiB`,
    6.22 GiB of KV cache, 3637 blocks): --gpu-memory-gib gives it, the compute capability stays the T4's (V0)."""
    argv = ["--gpu", "T4", "--vllm-version", "0.8.2", "--offline", "--format", "json", "--", "vllm", "serve",
            "meta-llama/Llama-3.2-3B-Instruct", "--dtype", "float16", "--max-model-len", "2048", "--max-num-seqs", "192",
            "--gpu-memory-utilization", "0.8938626454842437"]
    code, out = run(capsys, *argv[:4], "--gpu-memory-gib", "14.74", *argv[4:])
    b = json.loads(out)["servers"][0]["budget"]
    assert (b["gpu"], b["total_gib"], b["engine"]) == ("T4", 14.74, "v0")
    assert b["sources"]["total_gib"] == "--gpu-memory-gib (the catalog's T4 reports 14.56)"
    assert b["usable_gib"] == 13.18 and abs(b["kv_cache_gib"] - 6.22) <= 0.01 and abs(b["num_gpu_blocks"] - 3637) <= 5
    code, out = run(capsys, *argv)
    assert json.loads(out)["servers"][0]["budget"]["total_gib"] == 14.56


def test_explain_says_why_memory_does_not_shrink_with_max_model_len(capsys):
    """The vLLM forum T4 question: Llama-3.2-3B used the same memory at 4096, 8192 and 16384 tokens (vLLM logged
    13.11 GiB requested each time; 3422 / 3409 / 3381 blocks). The log format and the arithmetic are vLLM
    0.6.5's (0.6.4 also counts the CUDA context as non-torch memory)."""
    outs = {}
    for length in ("4096", "8192", "16384"):
        code, out = run(capsys, "--gpu", "T4", "--vllm-version", "0.6.5", "--offline", "--", "vllm", "serve",
                        "meta-llama/Llama-3.2-3B-Instruct", "--dtype", "half", "--max-model-len", length)
        assert code == 0
        outs[length] = out
        assert "whatever max_model_len is: the KV cache gets everything left after the weights" in out
        assert "requests of that length fit" in out and f"at {length} tokens)" in out
    # the memory vLLM takes is the same at every length; only the concurrency changes
    assert all("x utilisation 0.9         13.10 GiB" in o for o in outs.values())
    _, old = run(capsys, "--gpu", "T4", "--vllm-version", "0.6.4", "--offline", "--format", "json", "--", "vllm", "serve",
                 "meta-llama/Llama-3.2-3B-Instruct", "--dtype", "half", "--max-model-len", "8192")
    assert json.loads(old)["servers"][0]["budget"]["non_torch_gib"] == 0.35  # not the 0.05 the forum log shows


def test_kv_line_of_a_model_with_several_layer_groups(capsys):
    """A hybrid model's blocks each hold one group's layers: the text must not claim blocks x block size = the
    tokens vLLM reports (max concurrency x max_model_len from vLLM 0.21)."""
    argv = ["explain", "--gpu", "H100-SXM", "--offline", "--format", "json", "--",
            "vllm", "serve", "Qwen/Qwen3.5-27B", "--max-model-len", "32768"]
    assert main(argv) == 0
    budget = json.loads(capsys.readouterr().out)["servers"][0]["budget"]
    assert budget["kv_tokens"] != budget["num_gpu_blocks"] * budget["block_size"]
    # max concurrency x max_model_len (the JSON rounds the concurrency to 2 decimals)
    assert abs(budget["kv_tokens"] - budget["max_concurrency"] * 32768) < 0.01 * 32768
    assert main(argv[:4] + argv[6:]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("KV cache"))
    assert f"{budget['num_gpu_blocks']} blocks of {budget['block_size']} tokens shared by the layer groups" in line
    assert f"= {budget['kv_tokens']} tokens as vLLM reports them" in line
    assert "blocks x" not in line


def test_a_gpu_not_named_gets_a_requirement_in_json_and_text(capsys):
    argv = ["--offline", "--vllm-version", "0.10.2", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len", "16384"]
    code, out = run(capsys, "--format", "json", *argv)
    doc = json.loads(out)
    (server,) = doc["servers"]
    req = server["gpu_requirement"]
    assert code == 0 and server["budget"] is None
    assert req["min_total_gib"] > 16 and "L4" in req["fits"] and "T4" in req["does_not_fit"]
    assert req["max_model_len"] == 16384 and req["needs_gib"]["one_request_kv"] == 2.0
    assert [g["cause"] for g in doc["unchecked"]] == ["gpu-not-said"]
    code, out = run(capsys, *argv)
    assert f"needs >= {req['min_total_gib']:.1f} GiB per GPU" in out and "KV of one 16384-token request" in out
    assert "does not start (the weights do not fit): " in out and "T4" in out
    assert out.count("set `gpu:` in .vramlint.yaml") == 1


def test_a_fleet_shows_the_budget_on_each_gpu(capsys):
    code, out = run(capsys, "--offline", "--gpu", "L4,L40S", "--vllm-version", "0.10.2", "--format", "json", "--",
                    "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct")
    (server,) = json.loads(out)["servers"]
    assert [b["gpu"] for b in server["fleet"]] == ["L4", "L40S"] and server["budget"]["gpu"] == "L4"
    assert [b["starts"] for b in server["fleet"]] == [False, True]


def test_the_verdict_is_vrl005s_a_refused_command_line_does_not_start(capsys, tmp_path):
    # --block-size 3 is not one of vLLM 0.10.2's choices: its argument parser exits before any memory is sized, so
    # the budget alone (which fits) must not make explain say "starts"
    argv = ["--offline", "--gpu", "L4", "--vllm-version", "0.10.2", "--", "vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct",
            "--block-size", "3", "--max-model-len", "4096"]
    code, out = run(capsys, *argv)
    assert code == 0
    verdict = out.split(" verdict\n", 1)[1].split("  inputs:", 1)[0]
    assert "starts: yes" not in verdict
    assert "FAILS [VRL005 at line 1]: vLLM 0.10.2 will not start: argument --block-size: invalid choice: 3" in verdict
    _, out = run(capsys, "--format", "json", *argv)
    (server,) = json.loads(out)["servers"]
    assert server["budget"]["errors"] == [] and server["verdict"]["starts"] is False
    assert [r["rule"] for r in server["verdict"]["refusals"]] == ["VRL005"]
    # the same settings with a block size vLLM accepts start, in both formats
    argv[argv.index("3")] = "16"
    _, out = run(capsys, *argv)
    assert "    starts: yes" in out.split(" verdict\n", 1)[1]
    _, out = run(capsys, "--format", "json", *argv)
    assert json.loads(out)["servers"][0]["verdict"] == {"starts": True, "refusals": []}


def test_the_verdict_in_a_file_agrees_with_check(capsys, tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096",
                 "--dtype", "float8"]
          resources:
            limits:
              nvidia.com/gpu: "1"
""")
    _, out = run(capsys, "--offline", "--format", "json", str(path))
    (server,) = json.loads(out)["servers"]
    main(["check", "--offline", "--output-format", "json", "--select", "VRL005", str(path)])
    from_check = [(f["line"], f["message"]) for f in json.loads(capsys.readouterr().out)["findings"]]
    assert from_check and [(r["line"], r["message"]) for r in server["verdict"]["refusals"]] == from_check
    assert server["verdict"]["starts"] is False and from_check[0][0] == 14
