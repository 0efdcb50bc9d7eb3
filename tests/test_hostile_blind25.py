"""The twenty-fifth round of hostile inputs (leftovers of benchmarks/hostile_blind24.py and hostile_blind21.py), as
tests: each failed on main before the fix it holds. Every case is written to tmp_path and run by the real CLI."""

from __future__ import annotations

from tests.test_hostile_bounds import run_cli, write

_DEPLOYMENT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n"
               "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
               "          args: [\"--model\", \"Qwen/Qwen2.5-1.5B-Instruct\", \"--max-model-len\", \"{length}\"]\n")


def test_a_files_own_u2983_is_a_plain_character_never_vramlints_unknown_mark(tmp_path):
    # hostile24 secret-planted-marker: U+2983 is the mark vramlint writes where its own rendering left a value
    # unknown; written in a plain manifest it turned off the Secret and required-field checks of the whole file
    # and made a flag's value "known only at run time"
    secret = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\ndata:\n  token: "!!not base64 \u2983 at all!!"\n'
    write(tmp_path, {"s.yaml": secret + "---\n" + _DEPLOYMENT.format(name="x", length="4096"),
                     "n.yaml": _DEPLOYMENT.format(name="x\u2983y", length="4096"),
                     "m.yaml": _DEPLOYMENT.format(name="x", length="\u2983\u2984")})
    code, report, err = run_cli(tmp_path, timeout=60)
    errors = {(f["file"], f["line"]): f["message"] for f in report["findings"] if f["level"] == "error"}
    assert code == 1
    assert "data.token is not base64" in errors[("s.yaml", 6)]
    assert 'Invalid value: "x\\u2983y"' in errors[("n.yaml", 4)] and "U+2983" in errors[("n.yaml", 4)]
    assert "invalid int value: '\\u2983\\u2984'" in errors[("m.yaml", 11)]
    assert "\ue983" not in str(report) + err  # the stand-in vramlint reads them as is never shown


def test_vramlints_own_mark_still_says_a_template_value_is_unknown(tmp_path):
    # the other side of the distinction: a template expression vramlint neutralised (a template outside a chart,
    # which nothing here renders) stays unknown until rendered, said once
    write(tmp_path, {"d.yaml": _DEPLOYMENT.format(name="x", length="{{ .Values.len }}")})
    code, report, _err = run_cli(tmp_path, timeout=60)
    assert code == 0 and not [f for f in report["findings"] if f["level"] == "error"]
    assert any("--max-model-len is known only at run time" in f["message"] for f in report["findings"])


def test_a_brace_expansion_in_a_vllm_script_is_unknown_and_said_not_expanded(tmp_path):
    # hostile21 script_brace_expansion_bomb: bash makes 2**32 words of `x{a,b}` written 32 times; the word was
    # read as written, a single served name, and nothing said
    braces = "{a,b}" * 32
    write(tmp_path, {"start.sh": f"#!/bin/bash\nexec vllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name x{braces}\n",
                     "compose.yaml": "services:\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n"
                                     "    entrypoint: [\"/bin/bash\", \"/app/start.sh\"]\n"
                                     "    volumes: [\"./start.sh:/app/start.sh\"]\n"})
    code, report, _err = run_cli(tmp_path, timeout=60)
    said = [f for f in report["findings"] if "holds a brace expansion" in f["message"]]
    assert len(said) == 1 and said[0]["level"] == "note" and code == 0


def test_only_unquoted_brace_expansions_make_a_word_unknown():
    from vramlint.cmdline import split_shell

    problems: list[str] = []
    words = [t.text for t in split_shell("vllm serve m --a x{a,b} \"{c,d}\" '{e,f}' ${g,,} \\{h,i} {j} {1..3} "
                                         "{\"k\":1,\"l\":2}", None, problems=problems)]
    assert words == ["vllm", "serve", "m", "--a", None, "{c,d}", "{e,f}", "${g,,}", "{h,i}", "{j}", None, None]
    assert len(problems) == 3
