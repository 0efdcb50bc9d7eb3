"""Ansible command / shell / raw tasks that start vLLM (`docker run`, `podman run`, `vllm serve`; free-form,
`cmd:` and `argv:`), their Jinja2 values taken from the role's variables, one server per loop item when the item
feeds the command, and `when:` said; role templates of systemd units (`templates/*.service.j2`) rendered as
Ansible's template module renders them and read as units, placed on the template's lines; systemd drop-ins
(`NAME.service.d/*.conf`) applied over their unit; the role-variables note dropped when the role's server was
read."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.scan import scan


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def _findings(capsys, root):
    main(["check", root, "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)["findings"]


DEFAULTS = """\
    engine_image: vllm/vllm-openai:v0.9.2
    engine_models:
      - name: Qwen/Qwen2.5-7B-Instruct
        port: 8001
      - name: mistralai/Mistral-7B-Instruct-v0.3
        port: 8002
    engine_context: 8192
    engine_enabled: false
    """

LOOP_TASKS = """\
    ---
    - name: Pull the image
      ansible.builtin.command: docker pull {{ engine_image }}

    - name: Start one engine per model
      ansible.builtin.shell: |
        docker rm -f engine-{{ item.port }} || true
        docker run -d --gpus all --ipc host \\
          --name engine-{{ item.port }} \\
          -p {{ item.port }}:8000 \\
          {{ engine_image }} \\
          --model {{ item.name }} \\
          --max-model-len {{ engine_context }}{% if item.port == 8002 %} --enforce-eager{% endif %}
      loop: "{{ engine_models }}"
      when: engine_enabled | bool
    """


def test_a_shell_task_looping_over_models_is_one_server_per_item_on_the_tasks_lines(tmp_path):
    root = _tree(tmp_path, {"roles/engine/defaults/main.yml": DEFAULTS, "roles/engine/tasks/main.yml": LOOP_TASKS})
    servers = sorted(scan([root]).servers, key=lambda s: s.name)
    assert [s.model for s in servers] == ["Qwen/Qwen2.5-7B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3"]
    first, second = servers
    assert first.source_format == "ansible" and first.kind == "Ansible ansible.builtin.shell task"
    assert first.image == "vllm/vllm-openai:v0.9.2" and first.vllm_version == "0.9.2"
    # the words are placed on the lines the task wrote them on
    assert first.location.line == 11 and first.model_location.line == 12
    assert first.args["max_model_len"] == 8192 and first.arg_locations["max_model_len"].line == 13
    # the `{% if %}` on the item is rendered per item
    assert "enforce_eager" not in first.args and second.args["enforce_eager"] is True
    assert first.gpu is not None and first.gpu.count is None  # --gpus all: the host's
    # the `when:` the role's values make false is said, the task still read
    assert all(any("engine_enabled | bool" in n and "false" in n for n in s.notes) for s in servers)
    assert any("item 1 of 2" in n for n in first.notes) and any("item 2 of 2" in n for n in second.notes)


def test_a_loop_whose_item_the_command_does_not_use_is_read_once(tmp_path):
    root = _tree(tmp_path, {"roles/engine/tasks/main.yml": """\
        - name: Serve
          ansible.builtin.shell: vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096
          with_items: [a, b, c]
        """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 4096


def test_command_argv_and_cmd_forms(tmp_path):
    root = _tree(tmp_path, {"site.yml": """\
        - hosts: gpu
          vars:
            served: mistralai/Mistral-7B-Instruct-v0.3
          tasks:
            - name: Bare-metal engine
              ansible.builtin.command:
                argv:
                  - /opt/venv/bin/vllm
                  - serve
                  - Qwen/Qwen2.5-7B-Instruct
                  - --tensor-parallel-size
                  - "{{ tp | default(2) }}"
              when: inventory_hostname in groups['gpu']
            - name: Podman engine
              ansible.builtin.command:
                cmd: >-
                  podman run -d --device nvidia.com/gpu=all
                  docker.io/vllm/vllm-openai:v0.10.0 --model {{ served }}
                chdir: /srv
        """})
    servers = sorted(scan([root]).servers, key=lambda s: s.name)
    assert [s.name for s in servers] == ["Bare-metal engine", "Podman engine"]
    bare, podman = servers
    assert bare.model == "Qwen/Qwen2.5-7B-Instruct" and bare.args["tensor_parallel_size"] == 2
    assert any("decided where the play runs" in n for n in bare.notes)
    assert podman.model == "mistralai/Mistral-7B-Instruct-v0.3" and podman.vllm_version == "0.10.0"


def test_a_command_task_that_starts_no_vllm_is_no_server(tmp_path):
    root = _tree(tmp_path, {"roles/engine/tasks/main.yml": """\
        - name: Pull
          ansible.builtin.command: docker pull vllm/vllm-openai:v0.9.2
        - name: Health
          ansible.builtin.shell: curl -sf http://localhost:8000/v1/models
        """})
    assert scan([root]).servers == []


UNIT_TEMPLATE = """\
    {{ ansible_managed | comment }}
    [Unit]
    Description=vLLM ({{ engine_model }})

    [Service]
    User={{ engine_user }}
    {% for name, value in engine_env.items() %}
    Environment={{ name }}={{ value }}
    {% endfor %}
    ExecStart={{ engine_venv }}/bin/vllm serve {{ engine_model }} \\
        --max-model-len {{ engine_context }} \\
    {% if engine_tool_parser is defined %}
        --tool-call-parser {{ engine_tool_parser }} --enable-auto-tool-choice \\
    {% endif %}
    {% if engine_remote_flag %}
        --some-flag \\
    {% endif %}
        --gpu-memory-utilization {{ engine_gpu_share }}
    Restart=on-failure

    [Install]
    WantedBy=multi-user.target
    """

UNIT_DEFAULTS = """\
    engine_user: llm
    engine_home: /var/lib/llm
    engine_venv: "{{ engine_home }}/venv"
    engine_model: Qwen/Qwen2.5-7B-Instruct
    engine_context: 16384
    engine_gpu_share: 0.85
    engine_env:
      CUDA_VISIBLE_DEVICES: "0,1"
      HF_HOME: "{{ engine_home }}/hf"
    """


def test_a_roles_systemd_unit_template_is_rendered_and_placed_on_its_lines(tmp_path):
    root = _tree(tmp_path, {"roles/engine/defaults/main.yml": UNIT_DEFAULTS,
                            "roles/engine/templates/engine.service.j2": UNIT_TEMPLATE,
                            "roles/engine/tasks/main.yml": """\
                                - ansible.builtin.template:
                                    src: engine.service.j2
                                    dest: /etc/systemd/system/engine.service
                                """})
    [server] = scan([root]).servers
    assert server.source_format == "systemd" and server.name == "engine"
    assert server.file.endswith("templates/engine.service.j2")
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["max_model_len"] == 16384 and server.arg_locations["max_model_len"].line == 11
    assert server.args["gpu_memory_utilization"] == 0.85 and server.arg_locations["gpu_memory_utilization"].line == 18
    assert "tool_call_parser" not in server.args  # `is defined`: the role does not set it
    # the loop's Environment= lines: CUDA_VISIBLE_DEVICES gives the count, placed on the loop's line
    assert server.gpu is not None and server.gpu.count == 2 and server.gpu.location.line == 8
    # an `{% if %}` on a variable nobody sets is neither branch, and said
    assert any("engine_remote_flag" in n and "line 15" in n for n in server.notes)
    assert any("engine_venv" in n and "defaults/main.yml" in n for n in server.notes)


def test_trim_blocks_joins_the_line_after_a_block_tag_and_vllm_refuses_the_word(tmp_path, capsys):
    # Ansible's template module renders with trim_blocks: the newline after `{% endfor %}` is removed, so
    # `Restart=always` is one more word of the ExecStart= line
    root = _tree(tmp_path, {"roles/engine/defaults/main.yml": "engine_args: [--port, '8000']\n",
                            "roles/engine/templates/engine.service.j2": """\
        [Service]
        ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct {% for a in engine_args %}{{ a }} {% endfor %}
        Restart=always
        """})
    findings = _findings(capsys, root)
    errors = [f for f in findings if f["level"] == "error"]
    assert [(f["rule"], f["line"]) for f in errors] == [("VRL005", 3)]
    assert "Restart=always" in errors[0]["message"]
    assert any("line 2 of the template ends with a block tag" in f["message"] for f in findings)
    # `+%}` keeps the line break: the unit is as written
    (tmp_path / "roles/engine/templates/engine.service.j2").write_text(
        "[Service]\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct "
        "{% for a in engine_args %}{{ a }} {% endfor +%}\nRestart=always\n")
    assert not [f for f in _findings(capsys, root) if f["level"] == "error"]


def test_a_template_vramlint_cannot_render_is_said(tmp_path):
    root = _tree(tmp_path, {"roles/engine/templates/engine.service.j2": """\
        [Service]
        {% macro flags() %}--enforce-eager{% endmacro %}
        ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct {{ flags() }}
        """})
    result = scan([root])
    assert result.servers == []
    [problem] = [p for p in result.problems if p.file.endswith("engine.service.j2")]
    assert problem.level == "note" and "macro" in problem.message


DROP_IN_UNIT = """\
    [Service]
    Environment=CUDA_VISIBLE_DEVICES=0
    ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096
    """


def test_drop_ins_reset_execstart_and_override_environment_in_file_name_order(tmp_path, capsys):
    root = _tree(tmp_path, {
        "systemd/vllm.service": DROP_IN_UNIT,
        # read after 10-model.conf (systemd sorts drop-ins by file name), its CUDA_VISIBLE_DEVICES wins
        "systemd/vllm.service.d/20-gpus.conf": "[Service]\nEnvironment=CUDA_VISIBLE_DEVICES=0,1\n",
        "systemd/vllm.service.d/10-model.conf": """\
            [Service]
            ExecStart=
            ExecStart=/opt/venv/bin/vllm serve mistralai/Mistral-7B-Instruct-v0.3 \\
                --tensor-parallel-size 2 --no-such-option
            """,
        "systemd/vllm.service.d/README": "not a drop-in\n"})
    [server] = scan([root]).servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.model_location.file.endswith("vllm.service.d/10-model.conf") and server.model_location.line == 3
    assert "max_model_len" not in server.args  # the unit's own ExecStart= was reset
    assert server.gpu.count == 2 and server.gpu.location.file.endswith("20-gpus.conf")
    assert any("10-model.conf, " in n and n.index("10-model") < n.index("20-gpus") for n in server.notes)
    # the option is refused (a warning: the version is assumed), said on the drop-in's line that wrote it
    refused = [f for f in _findings(capsys, root) if f["level"] in ("error", "warning")]
    assert [(f["rule"], f["file"].rsplit("/", 1)[-1], f["line"]) for f in refused] == [("VRL009", "10-model.conf", 4)]


def test_without_a_reset_a_drop_in_execstart_is_a_second_one_which_systemd_refuses(tmp_path):
    root = _tree(tmp_path, {
        "vllm.service": DROP_IN_UNIT,
        "vllm.service.d/override.conf": "[Service]\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-0.5B\n"})
    result = scan([root])
    assert result.servers == []
    [problem] = [p for p in result.problems if "ExecStart=" in p.message]
    assert problem.level == "warning" and problem.file.endswith("override.conf") and problem.line == 2


def test_the_role_variables_note_goes_when_the_roles_tasks_read_the_server(tmp_path, capsys):
    role = {"roles/engine/defaults/main.yml": "engine_image: vllm/vllm-openai:v0.9.2\n"}
    served = _tree(tmp_path / "a", {**role, "roles/engine/tasks/main.yml": """\
        - ansible.builtin.shell: docker run --gpus all {{ engine_image }} --model Qwen/Qwen2.5-7B-Instruct
        """})
    assert not [f for f in _findings(capsys, served) if f["file"].endswith("defaults/main.yml")]
    unserved = _tree(tmp_path / "b", {**role, "roles/engine/tasks/main.yml": """\
        - ansible.builtin.shell: docker pull {{ engine_image }}
        """})
    [note] = [f for f in _findings(capsys, unserved) if f["file"].endswith("defaults/main.yml")]
    assert note["rule"] == "VRL102" and note["level"] == "note"


def test_a_drop_in_whose_unit_is_not_in_the_tree_is_read_on_its_own_and_said(tmp_path):
    root = _tree(tmp_path, {"etc/systemd/system/vllm.service.d/override.conf": """\
        [Service]
        ExecStart=
        ExecStart=/usr/local/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192
        """})
    [server] = scan([root]).servers
    assert server.file.endswith("vllm.service.d/override.conf") and server.model_location.line == 3
    assert server.name == "vllm" and server.args["max_model_len"] == 8192
    assert any("not in the scanned tree" in n for n in server.notes)


def test_raw_blocks_are_written_as_they_are_and_a_docker_command_naming_no_vllm_is_not_said(tmp_path):
    root = _tree(tmp_path, {"roles/engine/tasks/main.yml": """\
        - name: List containers
          ansible.builtin.shell: docker ps --format '{% raw %}{{.Names}}{% endraw %}' | grep {{ engine_name }}
        - name: Serve
          ansible.builtin.shell: >-
            docker run --gpus all vllm/vllm-openai:v0.9.2 --model Qwen/Qwen2.5-7B-Instruct
            --served-model-name '{% raw %}{{ name }}{% endraw %}'
        """})
    result = scan([root])
    [server] = result.servers
    assert server.args["served_model_name"] == ["{{ name }}"]
    assert not [p for p in result.problems if "render" in p.message]


def test_a_roles_compose_template_whose_services_a_for_loop_writes(tmp_path):
    root = _tree(tmp_path, {
        "roles/engine/defaults/main.yml": """\
            engine_image: vllm/vllm-openai:v0.9.2
            engine_models:
              - {name: small, model: Qwen/Qwen2.5-0.5B-Instruct, len: 4096}
              - {name: large, model: Qwen/Qwen2.5-7B-Instruct, len: 16384, eager: true}
            """,
        "roles/engine/templates/compose.yaml.j2": """\
            services:
            {% for m in engine_models %}
              {{ m.name }}:
                image: {{ engine_image }}
                command:
                  - --model
                  - {{ m.model }}
                  - --max-model-len
                  - "{{ m.len }}"
            {% if m.eager | default(false) %}
                  - --enforce-eager
            {% endif %}
            {% endfor %}
            """})
    servers = sorted(scan([root]).servers, key=lambda s: s.args["max_model_len"])
    assert [(s.model, s.args["max_model_len"]) for s in servers] == [
        ("Qwen/Qwen2.5-0.5B-Instruct", 4096), ("Qwen/Qwen2.5-7B-Instruct", 16384)]
    assert "enforce_eager" not in servers[0].args and servers[1].args["enforce_eager"] is True
    # both services' words are placed on the template's lines, the loop's body
    assert [s.model_location.line for s in servers] == [7, 7]
    assert [s.arg_locations["max_model_len"].line for s in servers] == [8, 8]


def test_a_docker_container_task_looping_over_models_and_its_when(tmp_path):
    root = _tree(tmp_path, {"roles/engine/defaults/main.yml": DEFAULTS, "roles/engine/tasks/main.yml": """\
        - name: Engines
          community.docker.docker_container:
            name: "engine-{{ item.port }}"
            image: "{{ engine_image }}"
            command: --model {{ item.name }} --max-model-len {{ engine_context }}
            device_requests:
              - count: 1
                capabilities: [[gpu]]
          loop: "{{ engine_models }}"
          when: engine_enabled | bool
        """})
    servers = sorted(scan([root]).servers, key=lambda s: s.container)
    assert [(s.container, s.model) for s in servers] == [
        ("engine-8001", "Qwen/Qwen2.5-7B-Instruct"), ("engine-8002", "mistralai/Mistral-7B-Instruct-v0.3")]
    assert all(s.args["max_model_len"] == 8192 and s.gpu.count == 1 for s in servers)
    assert all(any("engine_enabled | bool" in n for n in s.notes) for s in servers)


def test_a_unit_naming_vllm_only_in_another_programs_arguments_is_no_launcher(tmp_path):
    root = _tree(tmp_path, {"node_exporter.service": """\
        [Service]
        ExecStart=/usr/local/bin/node_exporter --collector.systemd.unit-include=^(docker|vllm-.*)\\.service$
        """, "vllm-run.service": "[Unit]\nDescription=vLLM engine\n[Service]\nExecStart=/opt/llm/start.sh\n"})
    result = scan([root])
    assert [p.file.rsplit("/", 1)[-1] for p in result.problems] == ["vllm-run.service"]


def test_hostile_templates_are_bounded_and_said(tmp_path):
    import time

    from vramlint.cmdline import UNKNOWN_MARK
    from vramlint.extract import jinja

    start = time.process_time()
    nested = "{% if x %}" * 5000 + "a" + "{% endif %}" * 5000
    assert "nested deeper" in jinja.render(nested, {"x": True}).failed
    loops = "{% for a in l %}{% for b in l %}{% for c in l %}{% endfor %}{% endfor %}{% endfor %}"
    assert "more than" in jinja.render(loops, {"l": list(range(200))}).failed
    # each variable twice the one before, 40 deep: memoized, and past the output bound it is unknown
    chain = {f"v{k}": f"{{{{ v{k + 1} }}}}{{{{ v{k + 1} }}}}" for k in range(40)}
    chain["v40"] = "x"
    out = jinja.render("{{ v0 }}", chain)
    assert out.text == UNKNOWN_MARK
    assert jinja.evaluate("'a' * 100000000000", {}) is jinja.UNKNOWN
    assert jinja.evaluate("(" * 3000 + "1" + ")" * 3000, {}) is jinja.UNKNOWN
    assert time.process_time() - start < 5


def test_many_shell_tasks_are_read_in_linear_time(tmp_path):
    import time

    tasks = "".join(f"- name: t{i}\n  ansible.builtin.shell: |\n    docker run --gpus all --name e{i} "
                    f"vllm/vllm-openai:v0.9.2 \\\n      --model Qwen/Qwen2.5-7B-Instruct --max-model-len "
                    "{{ ctx | default(4096) }}\n" for i in range(2000))
    root = _tree(tmp_path, {"roles/engine/tasks/main.yml": tasks})
    start = time.process_time()
    servers = scan([root]).servers
    assert len(servers) == 2000 and servers[-1].arg_locations["max_model_len"].line == 4 * 1999 + 4
    assert time.process_time() - start < 20  # a script padded to its line in the file: 5,000 tasks took 158 CPU-s


def test_a_unit_template_running_a_script_the_roles_template_task_writes(tmp_path):
    root = _tree(tmp_path, {
        "defaults/main.yml": "engine_dir: /opt/engine\nengine_model: Qwen/Qwen2.5-7B-Instruct\nengine_tp: 2\n",
        "tasks/main.yml": """\
            - name: Launcher
              ansible.builtin.template:
                src: launch.sh.j2
                dest: "{{ engine_dir }}/launch-{{ engine_model | replace('/', '_') }}.sh"
            - name: Unit
              ansible.builtin.template:
                src: engine.service.j2
                dest: /etc/systemd/system/engine.service
            """,
        "templates/engine.service.j2": """\
            [Service]
            Environment=CUDA_VISIBLE_DEVICES=0,1
            ExecStart={{ engine_dir }}/launch-{{ engine_model | replace('/', '_') }}.sh
            """,
        "templates/launch.sh.j2": """\
            #!/bin/bash
            exec python3 -m vllm.entrypoints.openai.api_server \\
                --model {{ engine_model }} \\
            {% if engine_tp > 1 %}
                --tensor-parallel-size {{ engine_tp }} \\
            {% endif %}
                --max-model-len 8192
            """})
    [server] = scan([root]).servers
    assert server.file.endswith("templates/launch.sh.j2") and server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["tensor_parallel_size"] == 2 and server.arg_locations["tensor_parallel_size"].line == 5
    assert server.arg_locations["max_model_len"].line == 7
    assert server.gpu is not None and server.gpu.count == 2  # the unit's environment
    assert any("template:` task writes" in n for n in server.notes)


def test_jinja_unique_keeps_first_occurrences_in_order_hashable_or_not():
    from vramlint.extract import jinja

    values = {"l": [3, 1, 3, 2, 1], "d": [{"a": 1}, {"a": 1}, {"b": 2}], "big": list(range(50_000)) * 2}
    assert jinja.evaluate("l | unique", values) == [3, 1, 2]
    assert jinja.evaluate("d | unique", values) == [{"a": 1}, {"b": 2}]
    assert jinja.evaluate("big | unique | length", values) == 50_000


def test_a_number_past_the_int_string_limit_in_a_task_is_unknown_not_a_failure(tmp_path):
    # Python refuses to convert a 5,000-digit literal (its 4,300-digit int-string limit): the value is unknown
    # and said, the server still read; it was "vramlint failed while reading this document"
    tasks = ('- name: run vllm\n  ansible.builtin.shell: "vllm serve meta-llama/Llama-3.1-8B-Instruct '
             '--max-model-len {{ ' + "9" * 5000 + ' }}"\n')
    root = _tree(tmp_path, {"roles/engine/tasks/main.yml": tasks})
    inventory = scan([root])
    [server] = inventory.servers
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert server.args.get("max_model_len") is None
    assert not [p for p in inventory.problems if "failed" in p.message]


def test_jinja_work_is_bounded_across_a_loops_steps():
    from vramlint.cmdline import UNKNOWN_MARK
    from vramlint.extract import jinja

    # 1,600 steps, each joining a 60,000-item list (12.6 CPU-s before the bound): past MAX_WORK the rest is
    # unknown, the render itself finishes
    rendered = jinja.render("{% for a in m %}{% for b in m %}{{ (l|join(','))|length }}{% endfor %}{% endfor %}",
                            {"m": list(range(40)), "l": list(range(60_000))})
    assert rendered.failed is None
    assert rendered.text.startswith("348889") and rendered.text.endswith(UNKNOWN_MARK)
    assert rendered.text.count("348889") < 20


def test_a_unit_template_that_cannot_be_rendered_is_said_on_the_statement_line(tmp_path):
    # hostile22: an `{% include %}` (never run: it could name /proc/self/environ) was said at 1:1 of the template
    root = _tree(tmp_path, {"roles/engine/templates/engine.service.j2": """\
        [Service]
        Environment=A={{ lookup('file', '/proc/self/environ') }}
        Environment=B=1
        {% include '../../../outside/secret.env' %}
        ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct
        """})
    result = scan([root])
    assert result.servers == []
    [problem] = [p for p in result.problems if p.file.endswith("engine.service.j2")]
    assert (problem.line, problem.level) == (4, "note") and "include" in problem.message
