"""Hostile input on round 19's readers (benchmarks/hostile_twentieth.py), each fix with its own input: the kustomize
build's bounds (bases built once per path, patches and replacements fanned out over many objects, selectors that
are backtracking patterns, a cycle no root reaches), systemd units (characters' places kept per line, distinct unset
variables and specifiers, unread EnvironmentFile= said once, the checkout walk), supervisord expansions past any
command line, Ansible variables that name each other, and compose starters' macros."""

from __future__ import annotations

import os
from pathlib import Path

from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, "4096"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _scan(root: Path):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return scan(["."])
    finally:
        os.chdir(cwd)


# ---------------------------------------------------------------------------------------------------- kustomize


def test_a_diamond_of_bases_stops_at_the_build_bound_and_says_so_on_the_root(tmp_path):
    from vramlint.kustomize import MAX_BUILDS

    files = {"root/kustomization.yaml": "resources: [../l1a, ../l1b, ../l1c]\n"}
    for level in range(1, 9):  # 3**8 = 6,561 paths to the leaf, past MAX_BUILDS
        nxt = [f"../l{level + 1}{x}" for x in "abc"] if level < 8 else ["../leaf"]
        for x in "abc":
            files[f"l{level}{x}/kustomization.yaml"] = f"resources: [{', '.join(nxt)}]\n"
    files["leaf/kustomization.yaml"] = "resources: [deploy.yaml]\n"
    files["leaf/deploy.yaml"] = DEPLOYMENT.format(name="leaf")
    assert 3 ** 8 > MAX_BUILDS
    inv = _scan(_write(tmp_path, files))
    [note] = [p for p in inv.problems if f"more than {MAX_BUILDS:,} kustomizations" in p.message]
    assert note.file == "root/kustomization.yaml"
    # the build is not evaluated: its files are read one by one, the leaf's Deployment once
    assert [s.file for s in inv.servers] == ["leaf/deploy.yaml"]


def test_a_cycle_that_no_root_reaches_is_built_from_its_first_and_said(tmp_path):
    inv = _scan(_write(tmp_path, {"a/kustomization.yaml": "resources: [../b, deploy.yaml]\n",
                                  "a/deploy.yaml": DEPLOYMENT.format(name="a"),
                                  "b/kustomization.yaml": "resources: [../a]\n"}))
    cycle = [p for p in inv.problems if "includes itself (a cycle)" in p.message]
    assert [(p.file, p.level) for p in cycle] == [("a/kustomization.yaml", "warning")]
    assert [s.file for s in inv.servers] == ["a/deploy.yaml"]


def test_patches_fanned_out_past_the_node_bound_stop_the_build_on_the_patch_line(tmp_path):
    from vramlint.kustomize import MAX_BUILD_NODES, _size

    many = "---\n".join(DEPLOYMENT.format(name=f"d{i}") for i in range(60))
    patch = ("  - target: {kind: Deployment}\n    patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
             "      metadata: {name: any}\n      spec: {template: {metadata: {labels: {p: x}}}}\n")
    kust = "resources: [many.yaml]\npatches:\n" + patch * 1000
    inv = _scan(_write(tmp_path, {"k/kustomization.yaml": kust, "k/many.yaml": many}))
    per = _size({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "any"},
                 "spec": {"template": {"metadata": {"labels": {"p": "x"}}}}})
    assert 60 * 1000 * per > MAX_BUILD_NODES  # what kustomize would merge
    [note] = [p for p in inv.problems if "once it is applied to each object" in p.message]
    # the patch whose applications pass the bound, counted on top of the objects the build copied
    total, first_past = len(many) // 8, 0
    while total <= MAX_BUILD_NODES:
        first_past += 1
        total += 60 * per
    assert (note.file, note.line) == ("k/kustomization.yaml", 3 + 6 * (first_past - 1))
    assert len(inv.servers) == 60 and {s.file for s in inv.servers} == {"k/many.yaml"}  # read one by one


def test_a_replacement_copying_a_large_value_into_many_fields_is_bounded(tmp_path):
    many = "---\n".join(DEPLOYMENT.format(name=f"d{i}") for i in range(50))
    kust = ("resources: [many.yaml]\nconfigMapGenerator:\n  - name: big\n    literals:\n      - BIG=" + "x" * 200_000
            + "\nreplacements:\n  - source: {kind: ConfigMap, name: big, fieldPath: data.BIG}\n    targets:\n"
            "      - select: {kind: Deployment}\n        options: {create: true}\n        fieldPaths:\n"
            + "".join(f"          - metadata.annotations.a{j}\n" for j in range(10)))
    inv = _scan(_write(tmp_path, {"k/kustomization.yaml": kust, "k/many.yaml": many}))
    [note] = [p for p in inv.problems if p.message.startswith("a replacement: ")]
    assert (note.file, note.line) == ("k/kustomization.yaml", 7)
    assert len(inv.servers) == 50


def test_selectors_are_re2_patterns_anchored_and_linear():
    from vramlint.kustomize import _full_match

    assert _full_match("(a+)+b", "a" * 60) is False  # backtracking in Python's re: minutes; RE2: at once
    assert _full_match("vllm-.*", "vllm-x") and not _full_match("vllm", "vllm-x")
    assert _full_match("a.b", "axb") and _full_match("Deployment", "Deployment")
    assert not _full_match("(?<=x)a", "a")  # RE2 has no look-behind: kustomize's build fails on it, no match here


def test_inline_patches_of_one_kustomization_keep_their_places(tmp_path):
    # the block indentation of each inline patch is looked up in the kustomization's lines, read once
    kust = ("resources: [deploy.yaml]\npatches:\n" + "".join(
        f"  - target: {{kind: Deployment, name: d}}\n    patch: |-\n      - op: add\n        path: /metadata/labels/l{i}"
        f"\n        value: v{i}\n" for i in range(3)) + "  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
        "      metadata: {name: d}\n      spec:\n        template:\n          spec:\n            containers:\n"
        "              - name: vllm\n                args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, "
        "'999999']\n")
    inv = _scan(_write(tmp_path, {"k/kustomization.yaml": kust, "k/deploy.yaml": DEPLOYMENT.format(name="d")}))
    [server] = inv.servers
    loc = server.arg_locations["max_model_len"]
    assert (loc.file, loc.line) == ("k/kustomization.yaml", kust.splitlines().index(
        "                args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '999999']") + 1)


# ---------------------------------------------------------------------------------------------------- systemd


def test_places_of_a_continued_setting_are_each_characters_line_and_column():
    from vramlint.extract.systemd import parse_unit

    text = "[Service]\nExecStart=/usr/bin/vllm serve m \\\n    --port 8000 \\\n\t--max-num-seqs 8\n"
    unit, _errors = parse_unit(text)
    [setting] = unit.sections["Service"]
    expected = []
    for number, raw in enumerate(text.splitlines(), 1):
        if number < 2:
            continue
        first = len(raw) - len(raw.lstrip())
        body = raw[first:].rstrip()
        start = body.index("=") + 1 if number == 2 else 0
        expected += [(number, first + 1 + k) for k in range(start, len(body))]
    assert len(setting.places) == len(expected) == len(setting.value)
    assert [setting.places[i] for i in range(len(expected))] == expected
    assert setting.places[-1] == expected[-1]
    cut = setting.places.cut(5, 40)
    assert [cut[i] for i in range(len(cut))] == expected[5:40]


def test_many_distinct_unset_variables_and_specifiers_are_said_once_and_short(tmp_path):
    names = " ".join(f"${{V{k}}}" for k in range(60_000))
    specs = "".join(f"%{chr(0x4E00 + k)}" for k in range(5_000))
    path = tmp_path / "vllm.service"
    path.write_text(f"[Service]\nEnvironment=\"S={specs}\"\nExecStart=/usr/bin/vllm serve "
                    f"Qwen/Qwen2.5-1.5B-Instruct {names}\n")
    inv = scan([str(path)])
    [server] = inv.servers
    said = " ".join(server.notes + server.unchecked)
    assert "$V0, $V1" in said and "and 59,988 more" in said and "$V59999" not in said
    assert "and 4,988 more" in said


def test_unread_environment_files_are_one_note(tmp_path):
    unread = "".join(f"EnvironmentFile=-/etc/vllm/{k}.env\n" for k in range(3_000))
    path = tmp_path / "vllm.service"
    path.write_text(f"[Service]\n{unread}ExecStart=/usr/bin/vllm serve Qwen/Qwen2.5-1.5B-Instruct --port $PORT\n")
    inv = scan([str(path)])
    [server] = inv.servers
    # one finding, on the line of the first (hostile22: it was a note on the server, at the ExecStart= line)
    [note] = [p for p in inv.problems if p.message.startswith("EnvironmentFile=")]
    assert note.line == 2 and note.level == "note"
    assert "is not read" in note.message and "2,999 more EnvironmentFile= are not read either" in note.message
    # and the variable they may set names three of them, not 3,000
    [cause] = [n for n in server.notes + server.unchecked if "$PORT" in n]
    assert "and 2,997 more may set" in cause
    assert len(" ".join(server.notes + server.unchecked)) < 5_000


def test_the_checkout_walk_looks_a_bounded_number_of_folders_up(tmp_path):
    from vramlint.extract.systemd import MAX_CHECKOUT_LEVELS

    unit = "[Unit]\nDescription=vLLM\n[Service]\nWorkingDirectory=/srv/app\nExecStart=/srv/app/serve.sh\n"
    script = "#!/bin/sh\nexec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096\n"
    near = "/".join(["d"] * (MAX_CHECKOUT_LEVELS - 2))
    far = "/".join(["e"] * (MAX_CHECKOUT_LEVELS + 2))
    inv = _scan(_write(tmp_path, {"serve.sh": script, f"{near}/near.service": unit, f"{far}/far.service": unit}))
    # the near unit's script is found and followed; the far one's is not looked for past the bound, which is said
    assert [os.path.basename(s.file) for s in inv.servers] == ["near.service"]
    assert [p.level for p in inv.problems if p.file.endswith("far.service")] == ["note"]


# ---------------------------------------------------------------------------------------------------- supervisord


def test_a_command_expanding_past_execves_limit_is_a_warning_on_its_line(tmp_path):
    from vramlint.extract.supervisord import MAX_EXPANDED

    value = "w" * 100_000
    conf = ("[supervisord]\nnodaemon=true\nenvironment=A=\"" + value + "\"\n\n[program:vllm]\n"
            "command=vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name " + "%(ENV_A)s" * 30 + "\n")
    assert 30 * len(value) > MAX_EXPANDED
    path = tmp_path / "supervisord.conf"
    path.write_text(conf)
    inv = scan([str(path)])
    assert inv.servers == []
    [warning] = [p for p in inv.problems if "Argument list too long" in p.message]
    assert (warning.line, warning.level) == (6, "warning")
    # under the limit the same command is read, the value in its word
    path.write_text(conf.replace("%(ENV_A)s" * 30, "%(ENV_A)s" * 2))
    [server] = scan([str(path)]).servers
    assert server.args["served_model_name"] == [value * 2]


def test_many_distinct_unknown_expansions_are_said_once_and_short(tmp_path):
    conf = ("[program:vllm]\ncommand=vllm serve Qwen/Qwen2.5-1.5B-Instruct --port 8000 "
            + " ".join(f"%(ENV_X{k})s" for k in range(40_000)) + "\n")
    path = tmp_path / "supervisord.conf"
    path.write_text(conf)
    [server] = scan([str(path)]).servers
    said = " ".join(server.notes + server.unchecked)
    assert "%(ENV_X0)s, %(ENV_X1)s" in said and "and 39,988 more" in said and "%(ENV_X39999)s" not in said


# ---------------------------------------------------------------------------------------------------- Ansible


def _role(tmp_path: Path, defaults: str, command: str) -> object:
    task = ("- name: run vllm\n  community.docker.docker_container:\n    name: vllm\n"
            f"    image: vllm/vllm-openai:v0.8.5\n    command: \"{command}\"\n")
    return _scan(_write(tmp_path, {"roles/vllm/defaults/main.yml": defaults, "roles/vllm/tasks/main.yml": task}))


def test_role_values_naming_each_other_are_rendered_once_each_and_bounded(tmp_path):
    from vramlint.extract.ansible import MAX_RENDERED

    # each level names the one below twice: rendered right, once a level
    chain = "v0: ab\n" + "".join(f"v{k}: \"{{{{ v{k - 1} }}}}-{{{{ v{k - 1} }}}}\"\n" for k in range(1, 4))
    inv = _role(tmp_path / "a", chain, "--model Qwen/Qwen2.5-1.5B-Instruct --served-model-name {{ v3 }}")
    [server] = inv.servers
    v1 = "ab-ab"
    v2 = f"{v1}-{v1}"
    assert server.args["served_model_name"] == [f"{v2}-{v2}"]
    # thirty references a level: past MAX_RENDERED the value is unknown, said, and nothing runs away
    # (eight levels, under the depth bound: 3 * 30**8 characters, 1.9e12, if rendered)
    fan = "v0: xyz\n" + "".join(f"v{k}: \"" + f"{{{{ v{k - 1} }}}}" * 30 + "\"\n" for k in range(1, 9))
    assert 3 * 30 ** 4 > MAX_RENDERED
    inv = _role(tmp_path / "b", fan, "--model Qwen/Qwen2.5-1.5B-Instruct --served-model-name {{ v8 }}")
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    said = " ".join(server.notes + server.unchecked + [p.message for p in inv.problems])
    assert f"renders to more than {MAX_RENDERED:,} characters" in said


# ---------------------------------------------------------------------------------------------------- Dockerfile


def test_an_unclosed_here_document_is_said_on_the_line_that_opens_it(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text("FROM vllm/vllm-openai:v0.8.5\n\nRUN <<EOF\n" + "pip install vllm==0.9.2\n" * 1000
                    + 'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct"]\n')
    inv = scan([str(path)])
    [note] = [p for p in inv.problems if "never closed" in p.message]
    assert (note.line, note.level) == (3, "note") and inv.servers == []


# ---------------------------------------------------------------------------------------------------- compose starters


def test_llama_swap_macros_stop_expanding_past_the_command_bound():
    from vramlint.extract.compose_starts import MAX_EXPANDED, _expand_macros

    macros = {"big": "m" * 9000, "port": "8080"}
    assert _expand_macros("up a --port ${port} ${nope}", macros) == "up a --port 8080 ${nope}"
    grown = _expand_macros("up a " + "${big}" * 1500, macros)
    assert MAX_EXPANDED < len(grown) <= MAX_EXPANDED + 10_000  # past the bound, without the 13.5 MB it would make


def test_starters_name_compose_files_by_path_default_name_or_name_alone(tmp_path):
    from vramlint.extract.compose_starts import one_at_a_time

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "compose.yaml").write_text("services: {}\n")
    make = tmp_path / "Makefile"
    make.write_text("x:\n\tdocker compose -f a/compose.yaml up -d one\n"
                    "y:\n\tcd b && docker compose up two\n"
                    "z:\n\tdocker compose -f elsewhere/compose.yaml up three\n")
    b_make = tmp_path / "b" / "run.sh"
    b_make.write_text("docker compose up two\n")
    a, b = (os.path.realpath(tmp_path / f / "compose.yaml") for f in ("a", "b"))
    found = one_at_a_time({a: {"one", "three"}, b: {"two", "three"}}, [str(make), str(b_make)])
    assert found[a] == {"one": f"{make}:2", "three": f"{make}:6"}  # by path, and by name from another folder
    assert found[b] == {"two": f"{b_make}:1", "three": f"{make}:6"}  # the default name in the starter's folder


def test_a_kustomization_naming_a_path_with_a_nul_character_is_said_not_a_crash(tmp_path):
    # (the fuzz benchmark's kustomize family: `components: ["\u0000"]` raised ValueError out of the scan, exit 2)
    inv = _scan(_write(tmp_path, {"k/kustomization.yaml": 'resources: ["\\u0000", deploy.yaml]\n'
                                                          'components: ["a\\u0000b"]\n',
                                  "k/deploy.yaml": DEPLOYMENT.format(name="d")}))
    assert [s.file for s in inv.servers] == ["k/deploy.yaml"]
    said = [p for p in inv.problems if p.file == "k/kustomization.yaml" and "NUL" in p.message]
    assert [p.line for p in said] == [1, 2]


def test_a_deep_flow_collection_after_an_empty_key_is_said_where_it_goes_too_deep():
    # (the fuzz benchmark's Ansible family: a role default `: [[[...` 3,000 deep went past the flow-depth check,
    # which looked for a key before `: `, and ruamel's scanner, quadratic in the flow depth, ran for 90 s)
    from vramlint.yamlload import MAX_FLOW_DEPTH, load_text

    _, problems = load_text("a: x\n: " + "[" * 3000 + "\n", "main.yml")
    assert [(p.line, p.column) for p in problems] == [(2, 3 + MAX_FLOW_DEPTH)]
    docs, problems = load_text("a: b\n: [1, 2]\n", "main.yml")
    assert problems == [] and docs[0].data == {"a": "b", None: [1, 2]}


def test_a_quote_never_closed_does_not_hide_a_deep_flow_collection_after_it():
    # (the fuzz benchmark's kustomize family: `- 'aaa...` never closed, then `envs: [[[...` 3,000 deep: the check
    # skipped every line after the quote as quoted text, and ruamel's scanner took 5 CPU-s on the brackets)
    from vramlint.yamlload import load_text

    _, problems = load_text("a:\n  - 'x" + "a" * 1000 + "\n  - y\n  b: " + "[" * 3000 + "\n", "k.yaml")
    assert [p.line for p in problems] == [4] and "nested more than" in problems[0].message
    docs, problems = load_text("a: 'multi\n  line'\nb: [1]\n", "k.yaml")  # a closed multi-line quote: as before
    assert problems == [] and docs[0].data == {"a": "multi line", "b": [1]}
