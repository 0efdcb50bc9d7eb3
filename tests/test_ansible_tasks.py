"""Ansible container tasks (`community.docker.docker_container`, `containers.podman.podman_container` and their
short names) read as the containers they start, their Jinja2 values taken from the role's defaults/vars and the
task's vars where those give them, and unknown (said once) where they do not."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def _role(tmp_path, tasks: str, defaults: str | None = None, role_vars: str | None = None):
    role = tmp_path / "roles" / "inference"
    (role / "tasks").mkdir(parents=True)
    (role / "tasks" / "main.yml").write_text(textwrap.dedent(tasks))
    if defaults is not None:
        (role / "defaults").mkdir()
        (role / "defaults" / "main.yml").write_text(textwrap.dedent(defaults))
    if role_vars is not None:
        (role / "vars").mkdir()
        (role / "vars" / "main.yml").write_text(textwrap.dedent(role_vars))
    return role


DOCKER_TASKS = """\
    ---
    - name: Open the port
      ansible.builtin.command: ufw allow 8000

    - name: Serving
      block:
        - name: Start the engine
          community.docker.docker_container:
            name: engine
            image: "{{ engine_image }}"
            command: >-
              --model {{ engine_model }}
              --max-model-len {{ engine_context | default(4096) }}
              --tensor-parallel-size 2
            env:
              HF_TOKEN: "{{ hf_token }}"
              VLLM_LOGGING_LEVEL: DEBUG
            device_requests:
              - driver: nvidia
                count: -1
                capabilities: [[gpu]]
            ipc_mode: host
    """


def test_a_docker_container_task_in_a_block_is_a_server_with_the_roles_defaults(tmp_path):
    role = _role(tmp_path, DOCKER_TASKS, defaults=f"engine_image: vllm/vllm-openai:v0.9.2\nengine_model: {MODEL}\n")
    inv = scan([str(tmp_path)])
    [server] = inv.servers
    assert server.source_format == "ansible"
    assert server.image == "vllm/vllm-openai:v0.9.2" and server.vllm_version == "0.9.2"
    assert server.model == MODEL
    assert server.args["max_model_len"] == 4096  # `| default(4096)`: the variable is set nowhere
    assert server.args["tensor_parallel_size"] == 2
    assert server.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert server.gpu is not None and server.gpu.count is None and server.gpu.evidence == "count: all"
    assert server.gpu.location.line == 19  # the device request's line
    # the words of the rendered folded command stay on the lines they were written on
    assert server.model_location.line == 12 and server.arg_locations["max_model_len"].line == 13
    assert server.arg_locations["tensor_parallel_size"].line == 14
    assert server.image_location.yaml_path == '[1].block[0]["community.docker.docker_container"].image'
    assert server.shm is True  # ipc_mode: host
    assert server.file.endswith("tasks/main.yml") and server.location.line == 7  # the task's first line
    [taken] = [n for n in server.notes if "Jinja2 values taken from" in n]
    assert str(role / "defaults" / "main.yml").endswith(taken.split("taken from ", 1)[1].split(":", 1)[0])
    assert "engine_image = 'vllm/vllm-openai:v0.9.2' (line 1)" in taken
    # hf_token is no value the budget reads: not worth a note
    assert not any("hf_token" in n for n in server.notes)


def test_role_vars_override_defaults_and_task_vars_override_both(tmp_path):
    tasks = DOCKER_TASKS.replace("        - name: Start the engine\n",
                                 "        - name: Start the engine\n          vars:\n            engine_context: 2048\n")
    _role(tmp_path, tasks, defaults=f"engine_image: vllm/vllm-openai:v0.8.5\nengine_model: {MODEL}\n"
                                    "engine_context: 1024\n",
          role_vars="engine_image: vllm/vllm-openai:v0.9.2\n")
    [server] = scan([str(tmp_path)]).servers
    assert server.vllm_version == "0.9.2"
    assert server.args["max_model_len"] == 2048


def test_a_variable_set_nowhere_is_unknown_and_said_once_per_file(tmp_path):
    tasks = """\
        - name: first engine
          docker_container:
            name: a
            image: vllm/vllm-openai:v0.9.2
            command: --model {{ model_a }} --max-model-len 4096 --gpu-memory-utilization {{ util }}
            device_requests: [{device_ids: ["0"], capabilities: [[gpu]]}]
        - name: second engine
          docker_container:
            name: b
            image: vllm/vllm-openai:v0.9.2
            command: --model facebook/opt-125m --gpu-memory-utilization {{ util }}
            device_requests: [{device_ids: ["1"], capabilities: [[gpu]]}]
        """
    _role(tmp_path, tasks)
    inv = scan([str(tmp_path)])
    first, second = sorted(inv.servers, key=lambda s: s.location.line)
    assert first.model is None and second.model == "facebook/opt-125m"
    assert "gpu_memory_utilization" not in first.args or first.args["gpu_memory_utilization"] is None
    said = [n for s in inv.servers for n in s.notes if "Jinja2 values unknown" in n]
    assert len(said) == 1 and "util (not set)" in said[0] and "model_a (not set)" in said[0]
    assert first.gpu.device_ids == ["0"] and second.gpu.device_ids == ["1"]
    assert first.gpu.shared_key != second.gpu.shared_key


def test_a_podman_container_task_with_a_command_list_and_a_cdi_device(tmp_path):
    tasks = f"""\
        - name: engine under podman
          containers.podman.podman_container:
            name: engine
            image: docker.io/vllm/vllm-openai:v0.9.2
            command: ["--model", "{MODEL}", "--max-model-len", "8192", "--tensor-parallel-size", "2"]
            device: ["nvidia.com/gpu=all"]
            shm_size: 32m
        """
    _role(tmp_path, tasks)
    [server] = scan([str(tmp_path)]).servers
    assert server.model == MODEL and server.args["max_model_len"] == 8192
    assert server.gpu is not None and "nvidia.com/gpu=all" in (server.gpu.evidence or "")
    assert server.shm is False  # 32 MiB of /dev/shm for two ranks


def test_a_task_that_removes_the_container_starts_no_server(tmp_path):
    tasks = """\
        - name: old engine gone
          community.docker.docker_container:
            name: engine
            image: vllm/vllm-openai:v0.9.2
            state: absent
        """
    _role(tmp_path, tasks)
    assert scan([str(tmp_path)]).servers == []


def test_a_playbook_with_plays_is_read(tmp_path):
    path = tmp_path / "site.yml"
    path.write_text(textwrap.dedent(f"""\
        - hosts: gpu
          vars:
            served: {MODEL}
          tasks:
            - name: engine
              community.docker.docker_container:
                name: engine
                image: vllm/vllm-openai:v0.9.2
                command: "--model {{{{ served }}}} --max-model-len 2048"
                device_requests: [{{count: 1, capabilities: [[gpu]]}}]
        """))
    [server] = scan([str(path)]).servers
    assert server.model == MODEL and server.gpu.count == 1


def test_the_note_on_a_roles_defaults_names_the_role_not_a_chart(tmp_path):
    # a role whose container is started some other way than a container task (a template, a shell command)
    role = _role(tmp_path, "- name: render the unit\n  ansible.builtin.template:\n    src: vllm.service.j2\n"
                           "    dest: /etc/systemd/system/vllm.service\n",
                 defaults="vllm_image: vllm/vllm-openai:v0.9.2\n")
    problems = [p for p in scan([str(tmp_path)]).problems if p.file.endswith("defaults/main.yml")]
    [note] = problems
    assert note.level == "note" and "chart" not in note.message
    assert f"Ansible role {role}" in note.message
    assert "tasks/" in note.message and "templates/" in note.message


def test_the_note_on_group_vars_says_they_are_not_read(tmp_path):
    folder = tmp_path / "inventory" / "group_vars"
    folder.mkdir(parents=True)
    (folder / "gpu.yml").write_text("vllm_image: vllm/vllm-openai:v0.9.2\n")
    [note] = scan([str(tmp_path)]).problems
    assert "group_vars" in note.message and "chart" not in note.message


DEPLOYMENT_TEMPLATE = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: engine
    spec:
      template:
        spec:
          containers:
            - name: engine
              image: {{ engine_image | quote }}
              args:
                - --model
                - {{ engine_model | quote }}
                - --max-model-len
                - "{{ engine_context }}"
                - --tool-call-parser
                - hermes
              resources:
                limits:
                  nvidia.com/gpu: "{{ engine_gpus | default(1) }}"
    """


def _template(tmp_path, defaults: str | None, group_vars: str | None = None):
    role = tmp_path / "roles" / "serve"
    (role / "templates").mkdir(parents=True)
    (role / "templates" / "deployment.yaml.j2").write_text(textwrap.dedent(DEPLOYMENT_TEMPLATE))
    if defaults is not None:
        (role / "defaults").mkdir()
        (role / "defaults" / "main.yml").write_text(defaults)
    if group_vars is not None:
        (tmp_path / "group_vars").mkdir()
        (tmp_path / "group_vars" / "all.yml").write_text(group_vars)
    return role


def test_a_roles_template_is_read_with_the_roles_defaults(tmp_path):
    _template(tmp_path, f"engine_image: vllm/vllm-openai:v0.9.2\nengine_model: {MODEL}\nengine_context: 6144\n")
    [server] = scan([str(tmp_path)]).servers
    assert server.vllm_version == "0.9.2" and server.model == MODEL
    assert server.args["max_model_len"] == 6144 and server.gpu.count == 1  # `| default(1)`
    assert server.location.line == 9  # the template's lines are the rendered file's
    [note] = [n for n in server.notes if "Ansible role's template" in n]
    assert "engine_context = '6144'" in note and "defaults/main.yml:3" in note


def test_the_plays_group_vars_all_overrides_the_roles_defaults_in_a_template(tmp_path):
    _template(tmp_path, f"engine_image: vllm/vllm-openai:v0.8.5\nengine_model: {MODEL}\nengine_context: 6144\n",
              group_vars="engine_image: vllm/vllm-openai:v0.9.2\n")
    [server] = scan([str(tmp_path)]).servers
    assert server.vllm_version == "0.9.2"


def test_a_template_whose_image_is_unknown_says_it_could_not_tell_it_runs_vllm(tmp_path):
    _template(tmp_path, None)
    inv = scan([str(tmp_path)])
    assert inv.servers == []
    [note] = [p for p in inv.problems if p.file.endswith("deployment.yaml.j2")]
    assert note.level == "note" and note.line == 10  # the image's line
    assert "could not be told" in note.message and "--max-model-len" in note.message


def test_an_unknown_image_without_vllm_options_is_no_mention(tmp_path):
    role = tmp_path / "roles" / "web" / "templates"
    role.mkdir(parents=True)
    # a vLLM client (its name says vllm) whose own options are not vLLM's: nothing to say
    (role / "app.yaml.j2").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm-client\nspec:\n"
                                      "  containers:\n    - name: app\n      image: \"{{ app_image }}\"\n"
                                      "      args: [--port, '8080']\n")
    assert [p for p in scan([str(tmp_path)]).problems if p.file.endswith("app.yaml.j2")] == []


def test_two_tasks_of_one_container_name_are_one_container(tmp_path):
    task = """\
        - name: engine {n}
          community.docker.docker_container:
            name: engine
            image: vllm/vllm-openai:v0.9.2
            command: --model facebook/opt-125m --max-model-len {n}
            device_requests: [{{device_ids: ["0"], capabilities: [[gpu]]}}]
        """
    _role(tmp_path, task.format(n=1024).rstrip(" ") + task.format(n=2048))
    [server] = scan([str(tmp_path)]).servers
    assert server.args["max_model_len"] == 2048 and server.location.line == 7
    assert any("line 1 starts the container engine too" in n for n in server.notes)


def test_many_tasks_render_the_file_once_per_variable_set_and_keep_the_last_of_each_container(tmp_path, monkeypatch):
    # 400 tasks over 40 container names with the role's defaults: the file's lines are rendered once for the one
    # set of variables (they were rendered again for every task: 20,000 tasks took 127 CPU-s), and a name started
    # again is the one container, as the last task leaves it, in the order of those last tasks
    from vramlint.extract import ansible

    tasks = "".join(
        f"- name: engine {i}\n  community.docker.docker_container:\n    name: engine-{i % 40}\n"
        f"    image: \"vllm/vllm-openai:{{{{ engine_tag }}}}\"\n    command: --model {MODEL} --max-num-seqs {i + 1}\n"
        for i in range(400))
    _role(tmp_path, tasks, defaults="engine_tag: v0.9.2\n")
    calls = []
    real = ansible._Renderer.text
    monkeypatch.setattr(ansible._Renderer, "text", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
    servers = scan([str(tmp_path)]).servers
    assert [s.container for s in servers] == [f"engine-{i}" for i in range(40)]
    assert [s.args["max_num_seqs"] for s in servers] == list(range(361, 401))
    lines = tasks.count("\n")
    assert len(calls) < lines + 400 * 10, len(calls)  # once over the file, a few values per task
