"""Reader crashes the fuzz found once a reader's caught exception counted as a crash (twenty-fourth round): each was
said as "vramlint failed while ... (a bug in vramlint)", a VRL102 error, and the file went unchecked."""

from __future__ import annotations

from vramlint.extract.systemd import parse_unit
from vramlint.yamlload import load_text


def test_yaml_text_made_with_a_file_names_surrogate_escapes_is_read():
    # a chart's render or a kustomize build can hold a non-UTF-8 file name's surrogate escapes; libyaml cannot
    # encode them (UnicodeEncodeError) and Go writes U+FFFD for such a rune
    docs, problems = load_text("kind: ConfigMap\nmetadata:\n  name: a\ndata:\n  f: \"x\udcff\ud800y\"\n", "rendered.yaml")
    assert not problems
    assert docs[0].data["data"]["f"] == "x\ufffd\ufffdy"


def test_a_blank_line_ending_a_continued_systemd_setting_is_read():
    # `Environment=A=1 \` continued, then a line of blanks: systemd joins the blank line; the places of an empty
    # piece made zip(strict=True) raise
    unit, errors = parse_unit("[Service]\nEnvironment=A=1 \\\n  B=2 \\\n   \nExecStart=/usr/bin/vllm serve m\n")
    assert not [e for e in errors if "Traceback" in str(e)]
    assert unit is not None


def test_deep_flow_nesting_on_the_slower_reader_is_bounded_and_said():
    # fuzz seed 2828: a 3 KB Pod whose lone CR sends it to ruamel, with 3,000 nested `[`: ruamel's scanner checks
    # every open flow level at each token, 7.6 CPU-s before its recursion limit. Bounded at 500 levels and said
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n    \rimage: "
            + "[" * 3000 + "\n    args: [\"\"]\n")
    docs, problems = load_text(text, "pod.yaml")
    assert docs == []
    [problem] = problems
    assert problem.level == "warning" and "nested more than 500 deep" in problem.message


def test_a_path_with_a_lone_surrogate_from_a_yaml_escape_is_refused_not_a_crash(tmp_path, capsys, monkeypatch):
    # fuzz seed 2828: a kustomization's `patches: ["p\ud800.yaml"]` (a YAML escape) reached os.path.realpath,
    # which cannot encode the surrogate (UnicodeEncodeError): the kustomization was dropped as vramlint's bug
    import json

    from vramlint.cli import main
    from vramlint.fsread import outside_reason

    assert "lone surrogate" in outside_reason("deploy/p\ud800.yaml")
    (tmp_path / "kustomization.yaml").write_text('resources: [deploy.yaml]\npatches: ["p\\ud800.yaml"]\n')
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.2\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct]\n")
    monkeypatch.chdir(tmp_path)
    main(["check", ".", "--offline", "--output-format", "json", "--fail-on", "never"])
    report = json.loads(capsys.readouterr().out)
    assert not [f for f in report["findings"] if "a bug in vramlint" in f["message"]]
