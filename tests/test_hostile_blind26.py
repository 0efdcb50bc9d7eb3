"""Round 26's hostile inputs (benchmarks/hostile_blind26.py), each as a test of the behaviour fixed."""

from __future__ import annotations

import json
import os
import time

from vramlint.cli import main


def _report(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    code = main(["check", *paths, "--offline", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


UNIT = ("sudo tee /etc/systemd/system/vllm{i}.service > /dev/null <<EOF\n[Service]\n"
        "ExecStart=/usr/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 40960000\nEOF\n")


def test_thousands_of_units_a_script_writes_cost_a_walk_each_not_the_scripts_length(tmp_path, capsys, monkeypatch):
    # each here-document body was read as a script of the whole file's length (its lines before written blank):
    # 2,000 units cost 16 CPU-s and 600 MB before, 5,000 ran out of CPU
    (tmp_path / "install.sh").write_text("#!/bin/bash\n" + "".join(UNIT.format(i=i) for i in range(2000)))
    started = time.process_time()
    code, report = _report(capsys, monkeypatch, tmp_path, "install.sh")
    assert time.process_time() - started < 4
    assert code == 1
    first = [f for f in report["findings"] if f["rule"] == "VRL005"][0]
    assert (first["file"], first["line"]) == ("install.sh", 4)


def test_a_body_run_by_bash_is_read_on_its_own_lines(tmp_path, capsys, monkeypatch):
    (tmp_path / "run.sh").write_text("#!/bin/bash\necho start\n\nbash <<EOF\nexport X=1\n"
                                     "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 40960000\nEOF\n")
    _, report = _report(capsys, monkeypatch, tmp_path, "run.sh")
    [server] = report["servers"]
    assert (server["file"], server["line"]) == ("run.sh", 6)
    [error] = [f for f in report["findings"] if f["rule"] == "VRL005"]
    assert (error["line"], error["column"]) == (6, 37)


def test_a_docker_exec_that_runs_a_container_cli_in_the_container_is_said_on_its_line(tmp_path, capsys,
                                                                                      monkeypatch):
    # 200 nested `docker exec c`, and `docker exec c sh -c "docker exec c ..."`: silent before
    start = "#!/bin/bash\ndocker run -d --name c --gpus all vllm/vllm-openai:v0.8.5 sleep inf\n"
    (tmp_path / "a.sh").write_text(start + "docker exec c " * 200 + "vllm serve Qwen/Qwen2.5-7B-Instruct\n")
    (tmp_path / "b.sh").write_text(start + "docker exec c sh -c 'docker exec c vllm serve Qwen/Qwen2.5-7B-Instruct'\n")
    for name in ("a.sh", "b.sh"):
        _, report = _report(capsys, monkeypatch, tmp_path, name)
        [said] = [f for f in report["findings"] if "inside the container" in f["message"]]
        assert (said["file"], said["line"], said["column"], said["level"]) == (name, 3, 15, "note")
        assert "is not read" in said["message"]


def test_a_script_with_a_nul_byte_is_said_on_the_line_of_the_nul(tmp_path, capsys, monkeypatch):
    # said only on stderr before ("skipped (binary file ...)"), in no report
    (tmp_path / "serve").write_bytes(b"MODEL=Qwen/Qwen2.5-7B\x00-Instruct\nvllm serve $MODEL\n")
    (tmp_path / "job.sbatch").write_bytes(b"#!/bin/bash\n#SBATCH --gres=gpu:1\nX=1\x00\nvllm serve a/b\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\x00\x00")
    _, report = _report(capsys, monkeypatch, tmp_path, "serve", ".")
    said = sorted((f["file"], f["line"], f["level"]) for f in report["findings"] if "NUL byte" in f["message"])
    assert said == [("job.sbatch", 3, "note"), ("serve", 1, "note")]


def test_a_gres_gpu_count_past_any_cluster_is_said_on_its_line_and_never_a_type(tmp_path, capsys, monkeypatch):
    # before: silent for gpu:a100:<23 digits>; gpu:<5,000 digits> read as a GRES *type* named by the digits
    (tmp_path / "serve.sbatch").write_text("#!/bin/bash\n#SBATCH -J vllm\n#SBATCH --gres=gpu:a100:" + "9" * 23
                                           + "\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\nvllm serve Qwen/Qwen2.5-7B-Instruct\n")
    (tmp_path / "submit.sh").write_text("#!/bin/bash\nsbatch --gres=gpu:" + "7" * 5000 + " job.sbatch\n")
    for name, where in (("serve.sbatch", ("serve.sbatch", 3, 9)), ("submit.sh", ("submit.sh", 2, 8))):
        _, report = _report(capsys, monkeypatch, tmp_path, name)
        [said] = [f for f in report["findings"] if "more GPUs on each node" in f["message"]]
        assert (said["file"], said["line"], said["column"], said["level"]) == (*where, "warning")
        assert len(said["message"]) < 400
        assert not any("GRES type '7" in f["message"] for f in report["findings"])
        [server] = report["servers"]
        assert server["gpu"]["count"] is None


STACK = """\
resource "helm_release" "stack" {
  name       = "vllm"
  repository = "https://vllm-project.github.io/production-stack"
  chart      = "vllm-stack"
  values     = [data.template_file.v.rendered]
}
"""


def test_a_template_file_rendered_past_the_limit_is_said_on_its_template(tmp_path, capsys, monkeypatch):
    # 10,000 `${x}` of a 100,000-character var (1 GB): before, only the release's "values not known" said it
    (tmp_path / "t.tpl").write_text('servingEngineSpec:\n  x: "' + "${x}" * 10000 + '"\n')
    (tmp_path / "main.tf").write_text('locals {\n  big = "' + "q" * 100000 + '"\n}\n'
                                      'data "template_file" "v" {\n  template = file("t.tpl")\n  vars = {\n'
                                      '    x = local.big\n  }\n}\n' + STACK)
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    [said] = [f for f in report["findings"] if "rendered text" in f["message"]]
    assert (said["file"], said["line"], said["column"], said["level"]) == ("main.tf", 5, 3, "note")
    assert "data.template_file.v" in said["message"] and "2,000,000 characters" in said["message"]


def test_sbatch_wrap_is_read_as_the_job_script_sbatch_writes(tmp_path, capsys, monkeypatch):
    # before: not read, "the script mentions vLLM but starts no vLLM server" on line 1 (main's launch25 e5c9142
    # reads --wrap too: this round's reader of it was dropped in the rebase for that one)
    (tmp_path / "submit.sh").write_text('#!/bin/bash\nsbatch --gres=gpu:2 --wrap="vllm serve Qwen/Qwen2.5-7B-Instruct '
                                        '--max-model-len 40960000"\nsbatch --gres=gpu:1 --wrap "$CMD"  # vllm\n')
    code, report = _report(capsys, monkeypatch, tmp_path, "submit.sh")
    assert code == 1
    [server] = report["servers"]
    assert (server["file"], server["line"], server["kind"]) == ("submit.sh", 2, "Slurm job")
    assert server["gpu"]["count"] == 2
    [error] = [f for f in report["findings"] if f["rule"] == "VRL005"]
    assert (error["file"], error["line"]) == ("submit.sh", 2)


def test_the_sbatch_commands_past_the_limit_are_said_where_following_stops(tmp_path, capsys, monkeypatch):
    (tmp_path / "submit.sh").write_text("#!/bin/bash\n" + "".join(f"sbatch job{i}.sbatch\n" for i in range(40)))
    for i in range(40):
        (tmp_path / f"job{i}.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\nvllm serve facebook/opt-125m\n")
    _, report = _report(capsys, monkeypatch, tmp_path, "submit.sh")
    assert len({s["file"] for s in report["servers"]}) == 16
    [said] = [f for f in report["findings"] if "limit of 16 `sbatch` commands" in f["message"]]
    assert (said["file"], said["line"], said["level"]) == ("submit.sh", 18, "note")


def test_a_helm_release_of_a_local_chart_outside_the_tree_is_said_on_its_chart_line(tmp_path, capsys, monkeypatch):
    # in a .tf naming no vLLM: a chart folder outside the tree, and one that is a link to /; silent before
    repo = tmp_path / "repo"
    (tmp_path / "elsewhere" / "chart").mkdir(parents=True)
    (tmp_path / "elsewhere" / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    repo.mkdir()
    os.symlink("/", repo / "root")
    (repo / "main.tf").write_text('resource "helm_release" "out" {\n  name  = "out"\n'
                                  '  chart = "${path.module}/../elsewhere/chart"\n}\n'
                                  'resource "helm_release" "root" {\n  name  = "root"\n  chart = "./root"\n}\n')
    _, report = _report(capsys, monkeypatch, repo, ".")
    said = sorted((f["file"], f["line"], f["column"], f["level"]) for f in report["findings"]
                  if "its chart" in f["message"] and "outside the scanned tree" in f["message"])
    assert said == [("main.tf", 3, 3, "warning"), ("main.tf", 7, 3, "warning")]


FLUX = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: vllm
spec:
  chart:
    spec:
      chart: ../../elsewhere/chart
      sourceRef:
        kind: GitRepository
        name: self
      valuesFiles:
        - ./values.yaml
        - /etc/../../secret.yaml
  values:
    vllm:
      maxLen: 4096
"""


def test_flux_git_paths_leading_out_are_said_where_source_controller_reads_them(tmp_path, capsys, monkeypatch):
    (tmp_path / "release.yaml").write_text(FLUX)
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = sorted((f["line"], f["level"]) for f in report["findings"] if "leads out of the GitRepository" in
                  f["message"])
    assert said == [(8, "note"), (14, "note")]  # not ./values.yaml; silent before
    [secret] = [f for f in report["findings"] if f["line"] == 14]
    assert "as secret.yaml" in secret["message"]


DEPLOY_CONFIG = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--config", "/proc/self/environ"]
"""


def test_a_config_file_not_read_is_said_on_the_flags_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "deploy.yaml").write_text(DEPLOY_CONFIG)
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    [said] = [f for f in report["findings"] if "--config /proc/self/environ" in f["message"]]
    assert (said["file"], said["line"], said["level"]) == ("deploy.yaml", 11, "note")  # line 9 before


def test_a_hugging_face_cache_path_with_dotdot_is_said_on_the_model_line(tmp_path, capsys, monkeypatch):
    # said only in the run's summary before, as a path that exists only where the server runs
    for name, model in (("a.yaml", "/root/.cache/huggingface/hub/models--a--b/snapshots/../../x"),
                        ("b.yaml", "/root/.cache/huggingface/hub/models--Qwen--..--..--etc/snapshots/0123abc")):
        (tmp_path / name).write_text(DEPLOY_CONFIG.replace('"--config", "/proc/self/environ"', f'"--model", "{model}"')
                                     .replace('"--model", "Qwen/Qwen2.5-7B-Instruct", ', ""))
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = {f["file"]: f for f in report["findings"] if f["rule"] == "VRL010"}
    assert sorted((f["file"], f["line"], f["level"]) for f in said.values()) == [
        ("a.yaml", 11, "warning"), ("b.yaml", 11, "warning")]
    assert "leads out of its snapshot with `..`, to /root/.cache/huggingface/hub/x" in said["a.yaml"]["message"]
    assert "names no Hub repository" in said["b.yaml"]["message"]


def test_a_repository_config_with_rules_dir_says_both_keys_on_their_lines(tmp_path, capsys, monkeypatch):
    # hostile21 pyproject_rules_dir_and_render_helm: only "unknown key 'rules-dir'; did you mean 'rules'?" before
    (tmp_path / "pyproject.toml").write_text('[tool.vramlint]\nrender-helm = true\nrules-dir = "evil"\n')
    (tmp_path / "deploy.yaml").write_text(DEPLOY_CONFIG.replace(', "--config", "/proc/self/environ"', ""))
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = {f["line"]: f for f in report["findings"] if f["file"] == "pyproject.toml"}
    assert sorted(said) == [2, 3]
    assert said[2]["level"] == "note" and "render-helm in a configuration file is not applied" in said[2]["message"]
    assert "pass --rules-dir on the command line" in said[3]["message"] and "did you mean" not in said[3]["message"]


def test_a_model_alias_to_a_kernel_file_is_said_as_outside_on_the_model_line(tmp_path, capsys, monkeypatch):
    # before: "a path that exists only where it runs", in the summary alone
    (tmp_path / ".vramlint.yaml").write_text("model-aliases:\n  served-a: /proc/self/environ\n")
    (tmp_path / "deploy.yaml").write_text(DEPLOY_CONFIG.replace('"--model", "Qwen/Qwen2.5-7B-Instruct", "--config", '
                                                                '"/proc/self/environ"', '"--model", "served-a"'))
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    [said] = [f for f in report["findings"] if f["rule"] == "VRL010"]
    assert (said["file"], said["line"], said["level"]) == ("deploy.yaml", 11, "warning")
    assert "/proc/self/environ is outside the scanned tree" in said["message"]


def test_a_long_command_word_is_read_in_linear_time():
    # fuzz seed 2626: a RayService `command:` of 200,000 letters took 60 CPU-s in the URL-scheme pattern
    from vramlint.cmdline import _names_vllm_as_command

    started = time.process_time()
    assert not _names_vllm_as_command("x" * 60000)
    assert _names_vllm_as_command("vllm" + "x" * 60000)
    assert time.process_time() - started < 1
    assert not _names_vllm_as_command("http://qwen-vllm-lb:8000/v1")  # a URL is still no command
    assert _names_vllm_as_command("python -m vllm.entrypoints.openai.api_server")
