"""One test per cause the sixteenth hostile round (benchmarks/hostile_sixteenth.py) found, each on inputs of its
own: refused words argparse names in one message are one finding."""

from __future__ import annotations

import json
import time
from pathlib import Path

from vramlint.cli import main

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"


def _deployment(args: list[str], name: str = "llm", image: str = "vllm/vllm-openai:v0.9.2") -> str:
    lines = "".join(f"            - {json.dumps(a)}\n" for a in ["--model", MODEL, *args])
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n"
            "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
            f"        - name: vllm\n          image: {image}\n          args:\n{lines}"
            "          resources:\n            limits:\n              nvidia.com/gpu: \"1\"\n")


def _findings(tmp_path: Path, *argv: str) -> list[dict]:
    out = tmp_path / "_out.json"
    main(["check", *argv, "--offline", "--format", "json", "--output-file", str(out)])
    return json.loads(out.read_text())["findings"]


# ---------------------------------------------------------------------- one refusal, one finding


def test_words_argparse_cannot_place_are_one_finding_on_the_first(tmp_path: Path):
    # ArgumentParser.parse_args: error('unrecognized arguments: %s' % ' '.join(argv)), once for all of them
    words = ["--max-num-seqs 16", "--enforce-eager yes", "stray"] * 3000
    text = _deployment(words)
    (tmp_path / "d.yaml").write_text(text)
    (tmp_path / "c.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n    command:\n      - --model\n      - " + MODEL + "\n"
        + "      - '--block-size 16'\n" * 5000
        + "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n")
    began = time.process_time()
    findings = _findings(tmp_path, str(tmp_path))
    assert time.process_time() - began < 4
    refused = [x for x in findings if x["rule"] == "VRL005" and "unrecognized arguments" in x["message"]]
    by_file = {x["file"].rsplit("/", 1)[-1]: x for x in refused}
    assert len(refused) == 2 and set(by_file) == {"d.yaml", "c.yaml"}, [(x["file"], x["line"]) for x in refused]
    first_line = text.splitlines().index(f"            - {json.dumps(words[0])}") + 1
    d = by_file["d.yaml"]
    assert d["line"] == first_line
    assert "unrecognized arguments: --max-num-seqs 16 --enforce-eager yes stray" in d["message"]
    assert f"(9,000 words, on lines {first_line} to {first_line + 8999})" in d["message"]
    assert len(d["message"]) < 1000
    assert by_file["c.yaml"]["line"] == 7 and "5,000 words" in by_file["c.yaml"]["message"]


def test_one_refused_word_keeps_its_own_message():
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.model import Location

    tokens = [Token("--model", Location("f", 1, 1)), Token(MODEL, Location("f", 2, 1)),
              Token("--quantization fp8", Location("f", 3, 1))]
    inv = parse_vllm_args(tokens, "0.9.2")
    assert [e["message"] for e in inv.startup_errors if e["message"].startswith("unrecognized")] == [
        "unrecognized arguments: --quantization fp8"]


# ---------------------------------------------------------------------- YAML tags


def test_a_megabyte_tag_is_decoded_in_linear_time_and_as_ruamel_decodes_it():
    from vramlint.yamlload import load_text

    text = ("a: !<tag:e.example,2026:%21x%41" + "y" * 1_000_000 + "> v\n"
            "b: !e!%7Ez 2\n")
    began = time.process_time()
    docs, problems = load_text("%TAG !e! tag:e.example,2026:\n---\n" + text, "f.yaml")
    took = time.process_time() - began
    assert took < 3, took  # 12 CPU-s when ruamel appended the decoded tag one character at a time
    data = docs[0].data
    assert data["a"].tag.value == "tag:e.example,2026:!xA" + "y" * 1_000_000
    assert data["b"].tag.value == "tag:e.example,2026:~z"
    assert str(data["a"]) == "v"


# ---------------------------------------------------------------------- the repository's configuration


def test_a_configuration_read_with_a_problem_on_its_line_is_still_checked_whole(tmp_path: Path):
    # 1e400 is read as a string (as Go's readers do) and said; the schema's findings on the other lines were not,
    # so a pull request's configuration showed one mistake a run
    (tmp_path / ".vramlint.yaml").write_text(
        "rules-dir: ../elsewhere\ngpu: L4\nrules:\n  VRL001: {threshold: 1e400}\noverrides:\n"
        "  - files: ['**']\n    overrides: []\nbogus: 1\n")
    (tmp_path / "d.yaml").write_text(_deployment(["--max-model-len", "999999"]))
    findings = _findings(tmp_path, str(tmp_path))
    lines = sorted(x["line"] for x in findings if x["file"].endswith(".vramlint.yaml") and x["rule"] == "VRL102")
    assert lines == [1, 4, 7, 8], [(x["line"], x["message"][:80]) for x in findings]
    assert all(x["level"] == "error" for x in findings if x["file"].endswith(".vramlint.yaml"))
    # not applied, so the defaults check the deployment
    assert any(x["rule"] == "VRL005" and x["file"].endswith("d.yaml") for x in findings)


# ---------------------------------------------------------------------- JSON reports


def _lone(obj) -> bool:
    if isinstance(obj, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in obj)
    if isinstance(obj, dict):
        return any(_lone(k) or _lone(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_lone(v) for v in obj)
    return False


def test_json_reports_hold_no_lone_surrogate(tmp_path: Path):
    # a YAML "\ud800" escape is a lone surrogate in Python; json writes it as the escape, which serde_json refuses
    text = _deployment(["--max-model-len", "999999", "--served-model-name", "PAIR\U0001F600"]).replace(
        "name: llm", 'name: "llm\\ud800x"').replace('"PAIR', '"\\udfffPAIR')
    (tmp_path / "d.yaml").write_text(text)
    outs = {}
    for fmt in ("json", "sarif", "gitlab"):
        out = tmp_path / f"_out.{fmt}"
        main(["check", str(tmp_path), "--offline", "--format", fmt, "--output-file", str(out)])
        outs[fmt] = out.read_bytes().decode("utf-8")  # strict: a raw surrogate does not decode
    for fmt, raw in outs.items():
        assert not _lone(json.loads(raw)), fmt
    report = json.loads(outs["json"])
    shown = json.dumps(report, ensure_ascii=False)
    assert "\\\\udfffPAIR\U0001F600" in shown  # the lone one as text, the pair kept as the character it is
    assert report["findings"] and report["findings"][0]["rule"] == "VRL005"


def test_json_safe_leaves_escaped_backslashes_and_pairs_alone():
    from vramlint.textsafe import json_safe

    for value in ["a\\ud800", "\U0001F600", "plain", "##[x"]:
        written = json.dumps({"v": value})
        assert json.loads(json_safe(written)) == {"v": value}
    assert json.loads(json_safe(json.dumps({"v": "a\ud800"}))) == {"v": "a\\ud800"}
    assert json.loads(json_safe(json.dumps({"v": "\udc80"}, ensure_ascii=False))) == {"v": "\\udc80"}


# ---------------------------------------------------------------------- safetensors headers


def _write_safetensors(path: Path, header: dict) -> None:
    body = json.dumps(header).encode()
    path.write_bytes(len(body).to_bytes(8, "little") + body + b"\0" * 64)


def test_a_safetensors_dtype_safetensors_does_not_read_leaves_the_weights_to_the_architecture(tmp_path: Path):
    # safetensors reads the dtype by its exact name and refuses the file otherwise; vramlint counted such a tensor
    # as 2 bytes an element and called the total the checkpoint's
    from vramlint.models import read_safetensors_header, tensors_from_header

    ok = {"w": {"dtype": "F8_E4M3", "shape": [4096, 4096], "data_offsets": [0, 1]},
          "c": {"dtype": "C64", "shape": [2], "data_offsets": [1, 17]}}
    for odd in ["f16", "Ｆ16", "F16\u202e", "", "INT4", "FP4"]:
        tensors, problem = tensors_from_header({**ok, "x": {"dtype": odd, "shape": [8], "data_offsets": [0, 1]}})
        assert tensors is None and "safetensors reads" in problem, odd
    tensors, problem = tensors_from_header(ok)
    assert problem is None and tensors == {"w": ("F8_E4M3", [4096, 4096]), "c": ("C64", [2])}
    _write_safetensors(tmp_path / "model.safetensors", {"w": {"dtype": "bf16", "shape": [8], "data_offsets": [0, 16]}})
    header = read_safetensors_header(tmp_path / "model.safetensors")
    assert header is not None and tensors_from_header(header)[0] is None


def test_an_index_of_too_many_shards_says_so(tmp_path: Path):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from vramlint import hub
    from vramlint.models import MAX_SHARDS, _hub_tensors

    index = json.dumps({"weight_map": {f"w{i}": f"m-{i:05d}.safetensors" for i in range(MAX_SHARDS + 1)}}).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            found = self.path.endswith("/model.safetensors.index.json")
            body = index if found else b"{}"
            self.send_response(200 if found else 404)
            if not found:
                self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hub.reset()
        client = hub.HubClient(f"http://127.0.0.1:{server.server_address[1]}", None)
        try:
            _hub_tensors(client, "org/model", None, time.monotonic() + 20)
            raise AssertionError("an index of too many shards was read")
        except hub.HubError as exc:
            assert exc.kind == "too_large" and f"{MAX_SHARDS + 1:,} shards" in exc.detail, exc.detail
    finally:
        server.shutdown()
        server.server_close()
