"""An Ansible play's `vars_files` and the group_vars/all a playbook runs with, read as the variables of the
play's tasks, in Ansible's precedence (inventory group_vars/all < playbook group_vars/all < play vars < play
vars_files < block vars < task vars); a vars_files entry outside the tree, missing or a template is said on its
line and not read."""

from __future__ import annotations

import os
import textwrap

from tests.test_ansible_commands import _findings, _tree
from vramlint.scan import scan

GROUP_VARS = """\
    ---
    # every host
    vllm_version: "0.9.2"
    model_dir: Qwen/Qwen2.5-7B-Instruct
    tensor_parallel: 4
    """

PLAYBOOK = """\
    ---
    - name: Start vLLM on the head node
      hosts: head
      become: yes
    {vars_files}  vars:
        ray_head_container: ray-head
        api_port: 8000
      tasks:
        - name: Start vLLM server
          shell: |
            docker exec {{{{ ray_head_container }}}} bash -lc "nohup python3 -m vllm.entrypoints.openai.api_server \\
            --model {{{{ model_dir }}}} \\
            --tensor-parallel-size {{{{ tensor_parallel }}}} \\
            --port {{{{ api_port }}}} --max-model-len 2048 > /var/log/vllm.log 2>&1 &"
          args:
            executable: /bin/bash
    """


def _playbook(vars_files=""):
    return textwrap.dedent(PLAYBOOK).format(vars_files=vars_files)


def _server(root):
    result = scan([root])
    servers = [s for s in result.servers if s.source_format == "ansible"]
    assert len(servers) == 1, [s.name for s in result.servers]
    return servers[0], result


def test_a_plays_vars_files_give_the_docker_exec_tasks_model_and_tp(tmp_path):
    root = _tree(tmp_path, {
        "ansible/group_vars/all.yml": GROUP_VARS,
        "ansible/playbooks/run_model.yml": _playbook("  vars_files:\n    - ../group_vars/all.yml\n"),
    })
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["tensor_parallel_size"] == 4
    # where the values came from: the variables file and its lines
    said = " ".join(server.notes)
    assert "model_dir = 'Qwen/Qwen2.5-7B-Instruct'" in said and "group_vars/all.yml:4" in said
    assert not any("Jinja2 values unknown" in n for n in server.notes)


def test_group_vars_all_beside_the_playbook_is_read(tmp_path):
    root = _tree(tmp_path, {"group_vars/all.yml": GROUP_VARS, "run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 4


def test_group_vars_all_as_a_folder_beside_the_playbook(tmp_path):
    root = _tree(tmp_path, {"group_vars/all/10-model.yml": "model_dir: Qwen/Qwen2.5-7B-Instruct\n",
                            "group_vars/all/20-tp.yml": "tensor_parallel: 2\n", "run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 2


def test_group_vars_beside_the_inventory_above_the_playbooks_folder(tmp_path):
    root = _tree(tmp_path, {"ansible/inventory.ini": "[head]\n10.0.0.1\n", "ansible/group_vars/all.yml": GROUP_VARS,
                            "ansible/playbooks/run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 4
    assert any("inventory.ini's group_vars/all.yml" in n or "group_vars/all.yml" in n for n in server.notes)


def test_precedence_vars_files_over_play_vars_and_group_vars_task_vars_over_all(tmp_path):
    playbook = _playbook("  vars_files:\n    - tp.yml\n").replace(
        "    api_port: 8000\n", "    api_port: 8000\n    tensor_parallel: 2\n    model_dir: meta-llama/Llama-3.1-8B\n")
    root = _tree(tmp_path, {"group_vars/all.yml": GROUP_VARS, "tp.yml": "tensor_parallel: 8\n",
                            "run_model.yml": playbook})
    server, _ = _server(root)
    # play vars over group_vars/all (model), vars_files over play vars (TP)
    assert server.model == "meta-llama/Llama-3.1-8B" and server.args["tensor_parallel_size"] == 8
    task_vars = playbook.replace("      args:\n", "      vars:\n        tensor_parallel: 1\n      args:\n")
    (tmp_path / "run_model.yml").write_text(textwrap.dedent(task_vars))
    server, _ = _server(root)
    assert server.args["tensor_parallel_size"] == 1


def test_a_vars_file_outside_the_tree_missing_or_a_template_is_said_on_its_line_never_read(tmp_path):
    outside = tmp_path / "secret.yml"
    outside.write_text("model_dir: Qwen/Qwen2.5-7B-Instruct\ntensor_parallel: 4\n")
    root = _tree(tmp_path / "repo", {
        "run_model.yml": _playbook("  vars_files:\n    - ../secret.yml\n    - missing.yml\n"
                                   "    - \"{{ env }}.yml\"\n    - link.yml\n    - fifo.yml\n    - big.yml\n"),
    })
    os.symlink(outside, os.path.join(root, "link.yml"))
    os.mkfifo(os.path.join(root, "fifo.yml"))  # a FIFO is never opened for reading (it would block)
    with open(os.path.join(root, "big.yml"), "w") as f:
        f.write("model_dir: Qwen/Qwen2.5-7B-Instruct\n" + "# padding\n" * 120_000)
    server, result = _server(root)
    assert server.model is None  # nothing read from outside
    notes = {p.line: p.message for p in result.problems if p.file.endswith("run_model.yml")}
    assert "outside" in notes[6] and "../secret.yml" in notes[6]
    assert "no such file" in notes[7] and "missing.yml" in notes[7]
    assert "template" in notes[8]
    assert "outside" in notes[9] and "link.yml" in notes[9]
    assert "regular" in notes[10] or "FIFO" in notes[10]
    assert "big.yml not read" in notes[11]
    assert any("set them in the play's vars or vars_files" in n for n in server.notes)
    assert all("Qwen" not in m for m in notes.values())


def test_a_list_entry_reads_its_first_file_that_exists(tmp_path):
    root = _tree(tmp_path, {"vars/site.yml": GROUP_VARS, "run_model.yml": _playbook(
        "  vars_files:\n    - [vars/missing.yml, vars/site.yml]\n")})
    server, result = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert not [p for p in result.problems if "vars_files" in p.message]


def test_the_variables_files_a_playbook_reads_are_bounded_and_each_read_once(tmp_path):
    files = {f"v{k}.yml": f"tensor_parallel: {k % 4 + 1}\n" for k in range(40)}
    plays = "".join(f"- hosts: g{k}\n  vars_files: [v{k}.yml, v0.yml]\n  tasks: []\n" for k in range(40))
    # 200 more plays naming a file already read: no further read, no cap reached by them
    plays += "".join("- hosts: head\n  vars_files: [v0.yml]\n  tasks: []\n" for _ in range(200))
    files["many.yml"] = "---\n" + plays + textwrap.dedent(_playbook("  vars_files: [v1.yml]\n")).replace("---\n", "")
    root = _tree(tmp_path, files)
    server, result = _server(root)
    assert server.args["tensor_parallel_size"] == 2  # v1.yml: read, among the first 32 files
    capped = [p for p in result.problems if "more than 32 variables files" in p.message]
    assert [p.message.split()[1] for p in capped] == [f"v{k}.yml" for k in range(32, 40)]


def test_an_inventory_folders_group_vars_under_the_playbooks(tmp_path):
    root = _tree(tmp_path, {"inventory/group_vars/all.yml": GROUP_VARS, "group_vars/all.yml": "tensor_parallel: 2\n",
                            "run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 2


def test_a_vars_file_with_invalid_yaml_is_said_on_its_entry_not_dropped(tmp_path):
    """Ansible stops the play on a vars file it cannot parse ("Syntax Error while loading YAML"): its variables
    are unknown, and the note on the vars_files entry says where the YAML breaks (it was dropped silently)."""
    root = _tree(tmp_path, {
        "ansible/vars/model.yml": "model_dir: Qwen/Qwen2.5-7B-Instruct\ntensor_parallel: [4\n",
        "ansible/playbooks/run_model.yml": _playbook("  vars_files:\n    - ../vars/model.yml\n"),
    })
    server, result = _server(root)
    assert server.model is None
    notes = [p for p in result.problems if "vars_files ../vars/model.yml not read" in p.message]
    assert len(notes) == 1, [p.message for p in result.problems]
    assert "invalid YAML" in notes[0].message and "model.yml:2" in notes[0].message
    assert notes[0].file.endswith("run_model.yml") and notes[0].line == 6


ROLE_TASK = """\
    - name: run vllm
      community.docker.docker_container:
        name: vllm
        image: vllm/vllm-openai:v0.9.2
        command: "--model {{ model }} --tensor-parallel-size {{ tp }}"
    """


def test_a_role_defaults_file_with_invalid_yaml_is_said_where_its_variables_are_used(tmp_path, capsys):
    """A role's defaults/main.yml Ansible cannot parse gives no variables; the note naming the files the task was
    rendered with says it was not read and where its YAML breaks (it read as if the file were read)."""
    root = _tree(tmp_path, {
        "roles/vllm/defaults/main.yml": "model: Qwen/Qwen2.5-7B-Instruct\ntp: [2\n",
        "roles/vllm/tasks/main.yml": ROLE_TASK,
    })
    result = scan([root])
    assert [s.model for s in result.servers] == [None]
    messages = [f["message"] for f in _findings(capsys, root)]
    said = [m for m in messages if "defaults/main.yml (not read: invalid YAML" in m]
    assert len(said) == 1, messages
    assert "main.yml:2" in said[0] and "its variables are unknown" in said[0]


def test_the_plays_group_vars_and_host_vars_over_all(tmp_path):
    """`hosts: head`: group_vars/head (a file, or a folder of files) over group_vars/all, host_vars/head over both
    (Ansible's precedence: group_vars/all < group_vars/<group> < host_vars/<host>)."""
    root = _tree(tmp_path, {"group_vars/all.yml": GROUP_VARS,
                            "group_vars/head/10-model.yml": "model_dir: Qwen/Qwen2.5-14B-Instruct\n",
                            "host_vars/head.yml": "tensor_parallel: 2\n", "run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.model == "Qwen/Qwen2.5-14B-Instruct"  # the group's over all's
    assert server.args["tensor_parallel_size"] == 2  # the host's over both
    said = " ".join(server.notes)
    assert "group_vars/head/" in said and "host_vars/head.yml" in said


def test_another_groups_vars_are_not_taken(tmp_path):
    root = _tree(tmp_path, {"group_vars/all.yml": GROUP_VARS,
                            "group_vars/workers.yml": "tensor_parallel: 8\n", "run_model.yml": _playbook()})
    server, _ = _server(root)
    assert server.args["tensor_parallel_size"] == 4


REGEX_PLAYBOOK = PLAYBOOK.replace("--model {{{{ model_dir }}}}",
                                  "--model {{{{ model_dir }}}} --served-model-name {{{{ served }}}}")


def _regex_tree(tmp_path, served):
    text = textwrap.dedent(REGEX_PLAYBOOK).format(vars_files="").replace(
        "    api_port: 8000\n", f"    api_port: 8000\n    served: \"{served}\"\n")
    return _tree(tmp_path, {"group_vars/all.yml": GROUP_VARS, "run_model.yml": text})


def test_regex_replace_with_a_literal_pattern_is_applied(tmp_path):
    server, _ = _server(_regex_tree(tmp_path, "{{ model_dir | regex_replace('^.*/', '') | lower }}"))
    assert server.args["served_model_name"] == ["qwen2.5-7b-instruct"]  # (then `lower`)
    # (in YAML's double quotes `\\\\2` is `\\2`, which Jinja2's string literal reads as re.sub's `\2`)
    server, _ = _server(_regex_tree(tmp_path / "b", "{{ model_dir | regex_replace('^(.*)/(.*)$', '\\\\\\\\2') }}"))
    assert server.args["served_model_name"] == ["Qwen2.5-7B-Instruct"]


def test_an_invalid_or_catastrophic_pattern_leaves_the_value_unknown(tmp_path):
    for k, pattern in enumerate(("[unclosed", "(a+)+$", ".*.*.*x")):
        server, _ = _server(_regex_tree(tmp_path / str(k), "{{ model_dir | regex_replace('" + pattern + "', 'x') }}"))
        assert server.args.get("served_model_name") is None
        assert any("regex_replace" in n for n in server.notes), server.notes
