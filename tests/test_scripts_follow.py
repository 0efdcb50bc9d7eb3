"""A container's command followed into a script in the scanned files (never run): ConfigMap-mounted scripts in
Kubernetes, scripts beside a compose file; and what is said when the script cannot be read."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "scripts"


def _notes(inv):
    return [p.message for p in inv.problems if p.level == "note"]


def test_configmap_script_in_another_file_gives_the_server_with_positions_in_the_script():
    inv = scan([str(FIX / "k8s" / "deploy.yaml"), str(FIX / "k8s" / "start-configmap.yaml")])
    [s] = inv.servers
    assert (s.name, s.container, s.replicas) == ("llama-script", "server", 2)
    assert s.model == "Qwen/Qwen2.5-3B-Instruct"  # "${MODEL_ID}" from the container's env
    assert s.location.file.endswith("deploy.yaml") and s.location.line == 17
    assert s.model_location.file.endswith("start-configmap.yaml") and s.model_location.line == 10
    assert s.args == {"max_model_len": 8192, "gpu_memory_utilization": 0.92}
    assert [s.arg_locations[k].line for k in ("max_model_len", "gpu_memory_utilization")] == [11, 12]
    assert s.gpu.type == "A10G" and s.gpu.count == 1 and s.vllm_version == "0.9.2"
    assert any("/scripts/start.sh" in n and "llama-start" in n for n in s.notes)
    assert not _notes(inv)


def test_configmap_not_scanned_is_said_on_the_container():
    inv = scan([str(FIX / "k8s" / "deploy.yaml")])
    assert inv.servers == []
    [note] = _notes(inv)
    assert "ConfigMap 'llama-start'" in note and "not among the scanned files" in note
    assert [p.line for p in inv.problems] == [17]


def test_script_without_a_vllm_command_is_said(tmp_path):
    (tmp_path / "d.yaml").write_text((FIX / "k8s" / "deploy.yaml").read_text())
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: llama-start\ndata:\n  start.sh: |\n"
        "    #!/bin/bash\n    exec python3 /opt/launcher.py --engine vllm\n")
    inv = scan([str(tmp_path)])
    assert inv.servers == []
    [note] = _notes(inv)
    assert "mentions vLLM but starts no vLLM server" in note and "ConfigMap 'llama-start'" in note


def test_inline_sh_c_runs_the_script(tmp_path):
    text = (FIX / "k8s" / "deploy.yaml").read_text().replace(
        'command: ["/bin/bash", "/scripts/start.sh"]',
        'command: ["/bin/sh", "-c"]\n          args: ["cd /workspace && exec /scripts/start.sh"]')
    (tmp_path / "d.yaml").write_text(text)
    (tmp_path / "cm.yaml").write_text((FIX / "k8s" / "start-configmap.yaml").read_text())
    [s] = scan([str(tmp_path)]).servers
    assert s.model == "Qwen/Qwen2.5-3B-Instruct" and s.args["max_model_len"] == 8192


def test_compose_script_beside_the_compose_file():
    inv = scan([str(FIX / "compose")])
    [s] = inv.servers
    assert s.name == "llm" and s.model == "microsoft/Phi-3-mini-4k-instruct"
    assert s.model_location.file.endswith("serve.sh") and s.model_location.line == 5
    assert s.args == {"max_model_len": 4096, "enforce_eager": True}  # MAX_LEN assigned in the script
    assert s.arg_locations["max_model_len"].line == 6 and s.arg_locations["enforce_eager"].line == 7
    notes = _notes(inv)
    assert len(notes) == 1 and "service launcher" in notes[0] and "/app/launch.sh" in notes[0]
    assert "in the image, not in the repository" in notes[0]  # and the postgres service is not vLLM: silent


def test_compose_script_outside_the_scanned_tree_is_not_read(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "serve.sh").write_text((FIX / "compose" / "serve.sh").read_text())
    (tmp_path / "app" / "compose.yaml").write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.10.2\n    entrypoint: [\"../elsewhere/serve.sh\"]\n")
    inv = scan([str(tmp_path / "app")])
    assert inv.servers == []
    [note] = [p.message for p in inv.problems]
    assert "../elsewhere/serve.sh" in note and "outside the scanned tree" in note


def test_script_read_is_capped_and_regular_files_only(tmp_path):
    from vramlint.extract import scripts
    from vramlint.fsread import scanned_roots

    big = tmp_path / "big.sh"
    big.write_text("#" * (scripts.MAX_SCRIPT_BYTES + 1))
    folder = tmp_path / "dir.sh"
    folder.mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("vllm serve x\n")
    link = tmp_path / "link.sh"
    link.symlink_to(outside)
    with scanned_roots([str(tmp_path)]):
        assert "too large" in scripts.read_script_file(str(big))[1]
        assert "not a regular file" in scripts.read_script_file(str(folder))[1]
        assert "outside the scanned tree" in scripts.read_script_file(str(link))[1]
        assert scripts.read_script_file(str(FIX / "compose" / "serve.sh"))[0] is None  # not under tmp_path
    outside.unlink()


def test_single_document_extraction_keeps_the_launcher_note():
    from vramlint.extract import extract_document
    from vramlint.yamlload import load_text

    path = FIX / "k8s" / "deploy.yaml"
    [doc], _ = load_text(path.read_text(), str(path))
    servers, problems = extract_document(doc)
    assert servers == [] and len(problems) == 1 and "not among the scanned files" not in problems[0].message


def test_which_commands_run_a_script():
    from vramlint.cmdline import Token
    from vramlint.extract.scripts import script_call

    def call(*words):
        found = script_call([Token(w, None) for w in words])
        return None if found is None else (found.path.text, [t.text for t in found.args])

    assert call("/bin/bash", "/scripts/start.sh", "--port", "8000") == ("/scripts/start.sh", ["--port", "8000"])
    assert call("tini", "--", "./serve.sh") == ("./serve.sh", [])
    assert call("bash", "-lc", "source /opt/venv/bin/activate && exec /app/run.sh 8b") == ("/app/run.sh", ["8b"])
    assert call("sh", "-x", "entry.sh") == ("entry.sh", [])
    assert call("/start.sh") == ("/start.sh", [])
    assert call("vllm", "serve", "org/model") is None
    assert call("python3", "-m", "vllm.entrypoints.openai.api_server") is None
    assert call("bash", "-c", "vllm serve org/model") is None
    assert call("sleep", "infinity") is None


def _refs_at_join(monkeypatch):
    """The script references a scan still holds when the cross-file join starts (each keeps its document)."""
    import vramlint.scan as scan_module

    held = []
    join = scan_module._join

    def spy(col):
        held.extend(col.records.script_refs)
        return join(col)

    monkeypatch.setattr(scan_module, "_join", spy)
    return held


def test_a_script_its_own_file_defines_is_read_with_that_file_and_not_kept_for_the_join(tmp_path, monkeypatch):
    deploy = (FIX / "k8s" / "deploy.yaml").read_text()
    configmap = (FIX / "k8s" / "start-configmap.yaml").read_text()
    (tmp_path / "a.yaml").write_text(deploy + "---\n" + configmap)
    # another file's ConfigMap of the same name: the container's own file's wins, as in the join
    (tmp_path / "b.yaml").write_text(configmap.replace("--max-model-len 8192", "--max-model-len 1024"))
    held = _refs_at_join(monkeypatch)
    inv = scan([str(tmp_path)])
    [s] = inv.servers
    assert s.args["max_model_len"] == 8192 and s.model_location.file.endswith("a.yaml")
    assert held == []


def test_a_script_in_the_image_is_said_without_waiting_for_the_join(tmp_path, monkeypatch):
    text = (FIX / "k8s" / "deploy.yaml").read_text()
    held = _refs_at_join(monkeypatch)
    (tmp_path / "d.yaml").write_text(text.replace("/scripts/start.sh", "/opt/start.sh"))
    inv = scan([str(tmp_path)])
    assert inv.servers == [] and held == []
    [note] = _notes(inv)
    assert "/opt/start.sh" in note and "not mounted from a ConfigMap" in note


def test_a_script_from_another_files_configmap_waits_for_the_join(tmp_path, monkeypatch):
    held = _refs_at_join(monkeypatch)
    inv = scan([str(FIX / "k8s" / "deploy.yaml"), str(FIX / "k8s" / "start-configmap.yaml")])
    assert len(held) == 1 and [s.args["max_model_len"] for s in inv.servers] == [8192]


# --- a relative script path: resolved against the `cd` before it and the container's workingDir (audit21 C9) ------

REL = FIX / "relative"


def test_a_relative_script_is_found_in_the_folder_its_cd_or_working_dir_names():
    inv = scan([str(REL / "serving.yaml"), str(REL / "launch-configmap.yaml")])
    by_container = {s.container: s for s in inv.servers}
    assert sorted(by_container) == ["decode", "prefill"]
    # `cd /opt/launch && ./run-prefill.sh`: the subPath mount at /opt/launch/run-prefill.sh
    assert by_container["prefill"].args["max_model_len"] == 16384
    assert by_container["prefill"].model_location.file.endswith("launch-configmap.yaml")
    # workingDir /opt, then `cd launch`: /opt/launch/run-decode.sh, a key of the ConfigMap mounted whole there
    assert by_container["decode"].args["max_model_len"] == 8192
    assert not _notes(inv)


def test_a_relative_script_whose_folder_the_files_do_not_say_is_not_said_to_be_in_the_image(tmp_path):
    text = (REL / "serving.yaml").read_text()
    (tmp_path / "cm.yaml").write_text((REL / "launch-configmap.yaml").read_text())
    # no `cd`, no workingDir: the image's WORKDIR decides which file ./run-prefill.sh is
    (tmp_path / "s.yaml").write_text(text.replace("cd /opt/launch && ./run-prefill.sh", "./run-prefill.sh"))
    inv = scan([str(tmp_path)])
    assert [s.container for s in inv.servers] == ["decode"]
    [note] = _notes(inv)
    assert "./run-prefill.sh" in note and "working directory" in note and "workingDir" in note
    assert "in the image" not in note
    # a `cd` to a folder known only at run time: the same unknown, said as such
    (tmp_path / "s.yaml").write_text(text.replace("cd /opt/launch &&", "cd $LAUNCH_DIR &&"))
    [note] = _notes(scan([str(tmp_path)]))
    assert "only at run time" in note and "in the image" not in note


def test_which_folder_a_script_is_opened_from():
    from vramlint.cmdline import Token
    from vramlint.extract.scripts import script_call

    def seen(script, working_dir=None):
        return script_call([Token("bash", None), Token("-c", None), Token(script, None)]).path_in_container(working_dir)

    assert seen("cd /w && ./a.sh") == "/w/a.sh"
    assert seen("cd /w; cd sub && ../a.sh") == "/w/a.sh"
    assert seen("cd sub && ./a.sh", "/home") == "/home/sub/a.sh"
    assert seen("cd sub && ./a.sh") is None  # relative to the image's WORKDIR
    assert seen("./a.sh", "/app") == "/app/a.sh"
    assert seen("cd /w && /abs/a.sh") == "/abs/a.sh"
    assert seen("cd /w | true; ./a.sh", "/app") == "/app/a.sh"  # a pipeline's `cd` runs in a subshell
    assert seen("cd ~ && ./a.sh", "/app") is None
    assert seen("cd - && ./a.sh", "/app") is None


def test_the_ascend_plugins_quantization_method_is_accepted_in_its_images_only(tmp_path):
    import json

    from vramlint.cli import main

    inv = scan([str(REL / "serving.yaml"), str(REL / "launch-configmap.yaml")])

    assert main(["check", str(REL), "--offline", "--format", "json", "--output-file", str(tmp_path / "a.json")]) == 0
    report = json.loads((tmp_path / "a.json").read_text())
    assert not [f for s in report["servers"] for f in s["findings"] if "quantization" in f["message"].lower()]
    assert len(inv.servers) == 2
    # the same script on vLLM's own image: no plugin registers "ascend" there
    (tmp_path / "s.yaml").write_text((REL / "serving.yaml").read_text().replace(
        "quay.io/ascend/vllm-ascend:v0.11.0rc1", "vllm/vllm-openai:v0.11.0"))
    (tmp_path / "cm.yaml").write_text((REL / "launch-configmap.yaml").read_text())
    main(["check", str(tmp_path / "s.yaml"), str(tmp_path / "cm.yaml"), "--offline", "--format", "json",
          "--output-file", str(tmp_path / "b.json")])
    report = json.loads((tmp_path / "b.json").read_text())
    assert [f["rule"] for s in report["servers"] for f in s["findings"]
            if "Unknown quantization method: ascend" in f["message"]] == ["VRL005"]
