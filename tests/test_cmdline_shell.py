"""Shell splitting with positions, and variable expansion, as a container's shell would do it."""

from hypothesis import given
from hypothesis import strategies as st

from vramlint.cmdline import Token, split_shell, split_token, yaml_token
from vramlint.model import Location
from vramlint.yamlload import load_text


def words(tokens):
    return [t.text for t in tokens if not t.op]


def test_quotes_escapes_and_operators():
    toks = split_shell("""pip install 'a b' "c d" e\\ f && vllm serve m; echo done""", Location("f", 1, 1))
    assert words(toks) == ["pip", "install", "a b", "c d", "e f", "vllm", "serve", "m", "echo", "done"]
    assert [t.text for t in toks if t.op] == ["&&", ";"]


def test_positions_on_one_line_account_for_quotes():
    toks = split_shell("vllm serve --max-model-len 4096", Location("f", 7, 11), quoted=True)
    flag = toks[2]
    assert (flag.location.line, flag.location.column, flag.location.end_column) == (7, 23, 38)


def test_redirections_are_not_arguments():
    toks = split_shell("vllm serve m --port 8000 2>&1 > /tmp/log", Location("f", 1, 1))
    assert words(toks) == ["vllm", "serve", "m", "--port", "8000"]


def test_expansion_forms():
    env = {"MODEL": "org/m", "EMPTY": "", "UNKNOWN": None}
    text = 'vllm serve $MODEL --a ${LEN:-4096} --b ${EMPTY:-x} --c "${MODEL}-v2" --d $UNKNOWN --e $(date) --f \'$MODEL\''
    got = words(split_shell(text, None, env=env))
    assert got == ["vllm", "serve", "org/m", "--a", "4096", "--b", "x", "--c", "org/m-v2", "--d", None,
                   "--e", None, "--f", "$MODEL"]


def test_unset_variable_is_unknown_not_empty():
    assert words(split_shell("serve $NOPE", None, env={})) == ["serve", None]


def test_unquoted_expansion_is_word_split():
    got = words(split_shell("vllm serve m $EXTRA", None, env={"EXTRA": "--max-model-len 2048  -tp 2"}))
    assert got == ["vllm", "serve", "m", "--max-model-len", "2048", "-tp", "2"]


def test_without_env_variables_stay_as_written():
    assert words(split_shell("serve ${M:-x} $N", None)) == ["serve", "${M:-x}", "$N"]


LITERAL = """\
spec:
  args:
    - |
      pip install x && \\
        vllm serve org/model \\
          --max-model-len 8192 \\
          --enforce-eager
"""

FOLDED = """\
cmd: >
  vllm serve org/model
  --max-model-len 8192
  --enforce-eager
"""


def test_literal_block_scalar_tokens_point_at_their_own_lines():
    docs, _ = load_text(LITERAL, "k.yaml")
    args = docs[0].data["spec"]["args"]
    tok = yaml_token("k.yaml", args, 0, "spec.args[0]", docs[0].lines)
    assert tok.block == "|" and tok.indent == 7
    toks = split_token(tok)
    where = {t.text: (t.location.line, t.location.column) for t in toks}
    assert where["pip"] == (4, 7)
    assert where["vllm"] == (5, 9)
    assert where["--max-model-len"] == (6, 11)
    assert where["8192"] == (6, 27)
    assert where["--enforce-eager"] == (7, 11)


def test_folded_block_scalar_tokens_found_on_their_lines():
    docs, _ = load_text(FOLDED, "c.yaml")
    tok = yaml_token("c.yaml", docs[0].data, "cmd", "cmd", docs[0].lines)
    assert tok.block == ">"
    where = {t.text: (t.location.line, t.location.column) for t in split_token(tok) if not t.op}
    assert where["vllm"] == (2, 3)
    assert where["--max-model-len"] == (3, 3)
    assert where["--enforce-eager"] == (4, 3)


def test_folded_backslash_continuations_are_read_and_flagged():
    problems = []
    toks = split_shell("vllm serve m \\ --enforce-eager", Location("f", 1, 1), block=True, folded=True,
                       problems=problems)
    assert words(toks) == ["vllm", "serve", "m", "--enforce-eager"]
    assert problems and "folded" in problems[0]


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./:=", min_size=1, max_size=12)


@given(st.lists(_word, min_size=1, max_size=8))
def test_quoting_any_word_keeps_it_one_word(ws):
    script = " ".join("'" + w + "'" for w in ws)
    assert words(split_shell(script, None)) == ws


@given(st.lists(_word, min_size=1, max_size=8))
def test_double_quoting_and_plain_agree(ws):
    plain = words(split_shell(" ".join(ws), None))
    quoted = words(split_shell(" ".join('"' + w + '"' for w in ws), None))
    assert plain == quoted == ws


def test_token_is_frozen_and_compares_by_text_and_location():
    a = Token("x", Location("f", 1, 1))
    assert a == Token("x", Location("f", 1, 1))


# Each: the words after `printf`, read by vramlint with Q="c d" and N=4 set, P unset; the same script is run by
# bash below, when bash is there, so that the expected words are bash's own.
BASH_WORDS = [
    ('${P:-"a b"}', ["a b"]),
    ("${P:-'a b'}", ["a b"]),
    ('${P:-x "a b" y}', ["x", "a b", "y"]),
    ('x${P:-"a b"}y', ["xa by"]),
    ("x${P:-a b}y", ["xa", "by"]),
    ('${P:-"$Q" $Q}', ["c d", "c", "d"]),
    ('${P:-""}', [""]),
    ("${P:-}", []),
    ("${P:-a;b}", ["a;b"]),
    ('${P:+"a b"} ${Q:+"a b"}', ["a b"]),
    ('"${P:-\'a b\'}"', ["'a b'"]),
    ('"${P:-x"a b"y}"', ["xa by"]),
    ('"${P:-\\"a\\"}"', ['"a"']),
    ("$((2*4)) $(( N * 2 + 1 )) $((-7/2)) $((-7%2)) $(( (1+2)*3 )) $((${N}*$N))", ["8", "9", "-3", "-1", "9", "16"]),
    ('"x$((1+(2*3)))y"', ["x7y"]),
]


def _bash_words(script):
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        return None
    out = subprocess.run([bash, "-c", f'Q="c d"; N=4; unset P; printf "%s\\0" {script}'], capture_output=True,
                         text=True, check=True, env={"PATH": "/usr/bin:/bin"}).stdout
    return out.split("\0")[:-1] if out else []


def test_parameter_defaults_and_arithmetic_give_the_words_bash_gives():
    for script, expected in BASH_WORDS:
        from_bash = _bash_words(script)
        if from_bash is not None and expected:  # printf with no argument still prints once: "" stands for it
            assert from_bash == expected, (script, from_bash)
        assert words(split_shell(f"printf {script}", None, env={"Q": "c d", "N": "4"}))[1:] == expected, script


def test_arithmetic_the_reader_cannot_evaluate_exactly_is_unknown():
    # octal and hexadecimal constants, `**`, unknown or non-numeric variables, 64-bit overflow, division by zero,
    # a syntax error, a command substitution that only looks like arithmetic
    env = {"R": None, "Q": "c d", "M": "-3"}
    for expression in ("$((010))", "$((0x10))", "$((2**3))", "$((R+1))", "$((Q))", "$((1-$M))",
                       "$((9223372036854775807+1))", "$((7/0))", "$((4+))", "$((1)", "$(echo 1)"):
        assert words(split_shell(f"serve {expression}", None, env=env)) == ["serve", None], expression


def test_a_vllm_command_past_the_shell_nesting_bound_is_a_server_said_unread(tmp_path):
    # hostile22/23 leftover: `sh -c` in `sh -c` six deep around `vllm serve` gave no server, only the image note
    import json

    from vramlint.scan import scan

    script = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096"
    words_of = ["sh", "-c", script]
    for _ in range(5):
        words_of = ["sh", "-c", " ".join("'" + w.replace("'", "'\\''") + "'" for w in words_of)]
    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: v\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: v\n          image: vllm/vllm-openai:v0.8.5\n"
        f"          command: {json.dumps(words_of)}\n")
    [server] = scan([str(tmp_path)]).servers
    assert any("more than 4 nested shells" in n for n in server.unchecked)
