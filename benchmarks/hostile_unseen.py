"""A fourth round of hostile inputs, written before the code was changed for them, judged as `hostile_fresh.py` judges.

    python3 benchmarks/hostile_unseen.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the first three rounds do not have: compose `include:` (a cycle, files outside the tree), `secrets:` and
`configs:` naming `/etc/passwd`, an `extends` cycle across three files, `.env` interpolation nested 5,000 deep or
doubling 60 times, 1,000 `env_file` entries with `required: false`, device counts of every shape, a 100,000-item
`command:`, vLLM numbers in the forms Python's `int()`/`float()` accept or refuse (`4_096`, `0x1p-1`, `128k`, `0`,
`-1`, an empty value, a flag abbreviated as argparse allows), JSON arguments holding 5,000-digit integers, Go
templates that are quadratic (`has` and `uniq` over big lists), dynamic `include` recursion, an unclosed comment,
`fromYaml` of a 300,000-item string, a chart template or values file linked out of the tree, a UTF-16 values file,
shell arithmetic that overflows as bash does (`$((2**64))`), five-fold brace expansion, `$(cat /etc/passwd)`,
`read < /proc/self/environ`, `source` of a file outside, 10,000-deep `${A:-...}` nesting, line separators that YAML
counts and GitHub does not (NEL, U+2028), a file name that is not UTF-8, gitignore negations and a `.git` file
pointing out of the tree, a `.vramlint.yaml` that is a FIFO, a folder, UTF-16, or holds an alias cycle, and
injection through `%0A` into GitHub annotations and through `|`, `<!--` and `</details>` into markdown.

Each case runs `vramlint check . --offline` with `hostile_fresh.run_case` (every output format, the planted secrets,
the audit hook). Two checks are added here: `__no_error__` (vLLM accepts the input, so no finding may be an error)
and the runner's own decoding of `%0A`/`%0D` in GitHub lines (a decoded line may not start a workflow command).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
script_deployment = h.script_deployment
expect = f.expect
line_of = f.line_of
CHART = h.CHART
CHART_TEMPLATE = h.CHART_TEMPLATE
VALUES = f.VALUES
COMPOSE_HEAD = h.COMPOSE_HEAD
SERVER = f.SERVER
SCRIPT_FIRST_LINE = 14  # script_deployment: the script's first line is the manifest's 14th


def arg_case(*args: str, flag: str, no_error: bool = False) -> dict[str, Any]:
    """A Deployment with these args; a finding expected on the line of `flag` (the last one) or its value."""
    text = deployment(QWEN + list(args))
    at = text.count("\n", 0, text.rindex(json.dumps(flag)[:-1])) + 1
    out: dict[str, Any] = {"deploy.yaml": text}
    if no_error:
        out["__no_error__"] = True
        out["__expect__"] = expect()
    else:
        out["__expect__"] = expect(("deploy.yaml", (at, at + 1)))
    return out


def script_case(lines: list[str], at: int) -> dict[str, Any]:
    """A Deployment running this script; a finding expected on the script's line `at` (0-based)."""
    return {"deploy.yaml": script_deployment("\n".join(lines)),
            "__expect__": expect(("deploy.yaml", SCRIPT_FIRST_LINE + at))}


def unseen_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    one = deployment(QWEN + ["--max-model-len", "999999"])
    bad_line = (line_of(one, '"999999"') - 1, line_of(one, '"999999"'))
    bad_cmd = "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n"

    # ---------------------------------------------------------------- compose
    out["compose-include-cycle"] = {
        "compose.yaml": "include:\n  - other.yaml\n" + COMPOSE_HEAD + bad_cmd,
        "other.yaml": "include:\n  - compose.yaml\nservices:\n  w:\n    image: vllm/vllm-openai:v0.8.5\n"
        + bad_cmd.replace("--model", "--port 9000 --model"),
        "__expect__": expect(("compose.yaml", 6), ("other.yaml", 6))}
    out["compose-include-outside"] = {
        "compose.yaml": "include:\n  - /etc/passwd\n  - path: [../_outside/compose.yaml, /proc/self/environ]\n"
        "    project_directory: /\n    env_file: /etc/shadow\n" + COMPOSE_HEAD + bad_cmd,
        "__expect__": expect(("compose.yaml", 2), ("compose.yaml", 9))}
    out["compose-secrets-etc-passwd"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --config /run/secrets/s\n"
        "    secrets: [s, t]\n    configs: [{source: c, target: /etc/vllm.yaml}]\n"
        "secrets:\n  s: {file: /etc/passwd}\n  t: {environment: HF_TOKEN}\n"
        "configs:\n  c: {file: ../_outside/secret.yaml}\n",
        "__expect__": expect(("compose.yaml", (4, 8)))}
    out["compose-extends-cycle-3-files"] = {
        "a.yaml": "services:\n  x:\n    extends: {file: b.yaml, service: y}\n" + bad_cmd.replace("command", "cmd_x"),
        "b.yaml": "services:\n  y:\n    extends: {file: c.yaml, service: z}\n    image: vllm/vllm-openai:v0.8.5\n",
        "c.yaml": "services:\n  z:\n    extends: {file: a.yaml, service: x}\n" + bad_cmd,
        "__expect__": expect(("a.yaml", 3))}
    nested = "".join(f"${{V{i}:-" for i in range(5000)) + "Qwen/Qwen2.5-1.5B-Instruct" + "}" * 5000
    out["compose-env-nesting-5000"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model ${M} --max-model-len 999999\n",
        ".env": f"M={nested}\n", "__expect__": expect(("compose.yaml", 4))}
    out["compose-env-doubling-60"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --served-model-name ${A60}"
        " --max-model-len 999999\n",
        ".env": "A0=xx\n" + "".join(f"A{i}=${{A{i - 1}}}${{A{i - 1}}}\n" for i in range(1, 61)),
        "__expect__": expect(("compose.yaml", 4))}
    out["compose-env-file-1000-optional"] = {
        "compose.yaml": COMPOSE_HEAD + bad_cmd + "    env_file:\n"
        + "".join("      - {path: /etc/passwd, required: false}\n" for _ in range(1000))
        + "      - ../_outside/secret.env\n",
        "__expect__": expect(("compose.yaml", 4), ("compose.yaml", 6))}
    out["compose-device-count-forms"] = {
        "compose.yaml": "services:\n" + "".join(
            f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct --port {i}\n"
            f"    deploy:\n      replicas: {r}\n      resources: {{reservations: {{devices: [{{driver: nvidia, "
            f"count: {c}, capabilities: [gpu]}}]}}}}\n"
            for i, (c, r) in enumerate([("1e400", 1), ("-1", 1), ("0x10", 1), ("'all'", "1e400"), (".nan", -1),
                                        ("9" * 5000, 1)])),
        "__expect__": expect(("compose.yaml", 7))}
    out["compose-command-100k-list"] = {
        "compose.yaml": COMPOSE_HEAD + "    command:\n      - --model\n      - Qwen/Qwen2.5-1.5B-Instruct\n"
        + "      - --max-model-len=4096\n" * 100_000 + "      - --max-model-len=999999\n",
        "__expect__": expect(("compose.yaml", 100_007))}
    out["compose-unterminated-quote"] = {
        "compose.yaml": COMPOSE_HEAD + "    entrypoint: \"sh -c 'vllm serve Qwen/Qwen2.5-1.5B-Instruct "
        "--max-model-len 999999\"\n", "__expect__": expect(("compose.yaml", 4))}

    # ---------------------------------------------------------------- vLLM numbers (vLLM 0.8.5, the image's)
    out["arg-max-len-zero"] = arg_case("--max-model-len", "0", flag="--max-model-len")
    out["arg-max-len-minus-one"] = arg_case("--max-model-len", "-1", flag="--max-model-len")
    out["arg-max-len-128k"] = arg_case("--max-model-len", "128k", flag="--max-model-len")
    out["arg-max-len-underscore"] = arg_case("--max-model-len", "4_096", flag="--max-model-len", no_error=True)
    out["arg-max-len-empty"] = arg_case("--max-model-len=", flag="--max-model-len")
    out["arg-max-len-no-value"] = arg_case("--max-num-seqs", "8", "--max-model-len", flag="--max-model-len")
    out["arg-max-len-100k-repeats"] = {
        "deploy.yaml": deployment(QWEN + ["--max-model-len=4096"] * 100_000 + ["--max-model-len=999999"]),
        "__expect__": expect(("deploy.yaml", 13 + 2 + 100_000 + 1))}
    out["arg-util-hexfloat"] = arg_case("--gpu-memory-utilization", "0x1p-1", flag="--gpu-memory-utilization")
    out["arg-tp-underscore"] = arg_case("--tensor-parallel-size", "1_0", flag="--tensor-parallel-size")
    out["arg-abbreviated-flag"] = arg_case("--max-model", "999999", flag="--max-model")
    out["arg-json-5000-digits"] = arg_case("--hf-overrides", '{"max_position_embeddings": 1e999999}',
                                           "--speculative-config",
                                           '{"num_speculative_tokens": ' + "9" * 5000 + "}",
                                           flag="--speculative-config")
    out["arg-compilation-config-hostile"] = arg_case(
        "--compilation-config", '{"cudagraph_capture_sizes": [1e400, -1, ' + "9" * 30 + '], "level": '
        + "9" * 5000 + "}", "-O", "9" * 5000, flag="--compilation-config")
    confused = "\n---\n".join([
        one.replace("          args:\n", "          args: {a: b}\n          x:\n"),
        one.replace("      containers:\n", "      containers: 'vllm serve x'\n      c:\n"),
        one.replace("            limits:\n", "            limits: [1, 2]\n            l:\n"),
        one.replace("          args:\n", "          command: 5\n          env: 'x'\n          args:\n")])
    last = confused.count("\n", 0, confused.rindex('"999999"')) + 1
    out["k8s-type-confusion"] = {"deploy.yaml": confused, "__expect__": expect(("deploy.yaml", (last - 1, last)))}
    out["k8s-envfrom-100k-keys"] = {
        "deploy.yaml": one.replace("          resources:", "          envFrom: [{configMapRef: {name: big}}]\n"
                                   "          resources:", 1)
        + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n"
        + "".join(f"  K{i}: '$(K{i + 1})'\n" for i in range(100_000)),
        "__expect__": expect(("deploy.yaml", bad_line))}

    # ---------------------------------------------------------------- Go templates
    out["tpl-has-quadratic"] = f.with_tpl('{{ $l := until 30000 }}{{ range $i := until 30000 }}{{ if has $i $l }}'
                                          '{{ end }}{{ end }}x: 1\n', line=None)
    out["tpl-uniq-quadratic"] = f.with_tpl('x: {{ until 200000 | uniq | len }}\ny: {{ until 200000 | without 1 2 | len }}\n'
                                           'z: {{ $l := until 3000 }}{{ range until 3000 }}{{ $l = uniq $l }}{{ end }}\n',
                                           line=None)
    out["tpl-dynamic-include-recursion"] = f.chart({
        "_h.tpl": '{{ define "r" }}{{ include (printf "%s" "r") . }}{{ end }}',
        "deploy.yaml": CHART_TEMPLATE, "x.yaml": 'x: {{ include "r" . }}\n'},
        __expect__=expect(SERVER, ("chart/templates/_h.tpl", 1)))
    out["tpl-unclosed-comment"] = f.with_tpl("x: 1\n{{/* never closed\ny: 2\n", line=2)
    out["tpl-fromYaml-300k-items"] = f.with_tpl('{{ $y := fromYaml (printf "a:\\n%s" (repeat 300000 "- 1\\n")) }}'
                                                'x: {{ len $y.a }}\n', line=None)
    out["tpl-negative-widths"] = f.with_tpl(
        'a: {{ trunc -99999999999 "abc" }}\nb: {{ substr 0 99999999999 "abc" }}\nc: {{ substr -5 -1 "abc" }}\n'
        'd: {{ abbrev -1 "abc" }}\ne: {{ wrap 0 "a b" }}\nf: {{ indent -5 "x" }}\ng: {{ nindent -9999999999 "x" }}\n'
        'h: {{ repeat -5 "x" }}\ni: {{ until -9223372036854775808 | len }}\n', line=None)
    out["chart-template-links-out"] = {
        **f.chart({"deploy.yaml": CHART_TEMPLATE}),
        "chart/templates/x.yaml": ("symlink", "../../../_outside/compose.yaml"),
        "chart/templates/_y.tpl": ("symlink", "/proc/self/environ"),
        "__expect__": expect(SERVER, ("chart/templates/x.yaml", None))}
    out["chart-values-utf16"] = {
        "chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": CHART_TEMPLATE,
        "chart/values.yaml": "\ufeffmodel: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 999999\n".encode("utf-16-le"),
        "__expect__": expect(("chart/values.yaml", 2))}
    out["chart-yaml-hostile"] = {
        "chart/Chart.yaml": h.alias_bomb() + "apiVersion: v2\nname: \"::error::x\\e[31m\"\nversion: " + "9" * 5000
        + "\n", "chart/values.yaml": VALUES, "chart/templates/deploy.yaml": CHART_TEMPLATE,
        "__expect__": expect(("chart/Chart.yaml", None))}
    out["chart-helmignore-and-schema"] = {
        **f.chart({"deploy.yaml": CHART_TEMPLATE}),
        "chart/.helmignore": "".join(f"*a*a*a*a*a*a*a*a*a*a*b{i}\n!x{i}\n" for i in range(5000)),
        "chart/values.schema.json": '{"properties": ' * 20_000 + "{}" + "}" * 20_000,
        "__expect__": expect(SERVER)}

    # ---------------------------------------------------------------- shell (bash's own arithmetic)
    out["shell-arith-2pow64"] = script_case([
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $((2**64)) --tensor-parallel-size $(( 1<<64 ))"], 0)
    out["shell-arith-deep-parens"] = script_case([
        "N=$(( " + "(" * 50_000 + "4096" + ")" * 50_000 + " ))",
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $N --max-num-seqs 999999999"], 1)
    out["shell-brace-alpha-5"] = script_case([
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name {a..z}{a..z}{a..z}{a..z}{a..z} "
        "--max-model-len 999999"], 0)
    out["shell-cat-etc-passwd"] = script_case([
        "M=$(cat /etc/passwd)", "T=$(</proc/self/environ)", ". ../_outside/secret.env", "source /proc/self/environ",
        "vllm serve $M --served-model-name \"$T\" --max-model-len 999999"], 4)
    out["shell-read-from-proc"] = script_case([
        "read -r MODEL < /proc/self/environ", "IFS== read A B < ../_outside/secret.env",
        "vllm serve \"$MODEL\" --served-model-name \"$B\" --max-model-len 999999"], 2)
    out["shell-default-nesting-10k"] = script_case([
        "vllm serve " + "".join(f"${{V{i}:-" for i in range(10_000)) + "Qwen/Qwen2.5-1.5B-Instruct"
        + "}" * 10_000 + " --max-model-len 999999"], 0)

    # ---------------------------------------------------------------- files
    # (corrected after the first run: \x0c and \x1c are not printable YAML characters, so go-yaml and PyYAML both
    # refuse the file, and VRL102 on line 1 is right; NEL, LS and PS are YAML line breaks in both, so the comment
    # ends there and `b c d apiVersion` is one plain scalar: both fail at the `:` of `apiVersion:`, on the line GitHub
    # counts with `\n` (2), not the 5th that a parser counting NEL/LS/PS would say)
    out["line-separators-yaml-counts"] = {
        "deploy.yaml": "# a\x85b\u2028c\u2029d\n" + one, "__expect__": expect(("deploy.yaml", 2, "VRL102"))}
    out["filename-not-utf8"] = {"d\udcff\udcfe/x\udce9.yaml": one, "deploy.yaml": one,
                                "__expect__": expect(("deploy.yaml", bad_line))}
    out["gitignore-negations-outside"] = {
        ".git/HEAD": "ref: refs/heads/main\n", ".git/info/exclude": ("symlink", "../../../_outside/secret.txt"),
        ".gitignore": "*\n!*/\n!*.yaml\n!../_outside/**\n!/etc/passwd\n", "deploy.yaml": one,
        "sub/.gitignore": ("symlink", "/etc/passwd"), "sub/x.yaml": one,
        "__expect__": expect(("deploy.yaml", bad_line), ("sub/x.yaml", bad_line))}
    out["git-file-gitdir-outside"] = {
        ".git": "gitdir: ../_outside\n", "deploy.yaml": one, "__expect__": expect(("deploy.yaml", bad_line))}
    out["file-just-over-cap"] = {
        "big.yaml": one + "---\nkind: ConfigMap\ndata:\n  x: '" + "a" * (5 * 1024 * 1024) + "'\n",
        "deploy.yaml": one, "__expect__": expect(("big.yaml", None), ("deploy.yaml", bad_line))}
    out["compose-utf16-be"] = {
        "compose.yaml": ("\ufeff" + COMPOSE_HEAD + bad_cmd).encode("utf-16-be"),
        "__expect__": expect(("compose.yaml", 4))}

    # ---------------------------------------------------------------- configuration from the repository
    out["config-is-fifo"] = {".vramlint.yaml": ("fifo",), "deploy.yaml": one,
                             "__expect__": expect((".vramlint.yaml", None), ("deploy.yaml", bad_line))}
    out["config-is-folder"] = {".vramlint.yaml/x": "gpu: T4\n", "deploy.yaml": one,
                               "__expect__": expect((".vramlint.yaml", None), ("deploy.yaml", bad_line))}
    out["config-utf16"] = {".vramlint.yaml": "\ufeffgpu: L4\n".encode("utf-16-le"), "deploy.yaml": one,
                           "__expect__": expect(("deploy.yaml", bad_line))}
    out["config-alias-cycle"] = {
        ".vramlint.yaml": "model-aliases:\n  a/a: b/b\n  b/b: a/a\n",
        "deploy.yaml": deployment(["--model", "a/a", "--max-model-len", "999999"]),
        "__expect__": expect(("deploy.yaml", line_of(one, '"Qwen/Qwen2.5-1.5B-Instruct"')))}
    out["config-100k-custom-gpus"] = {
        ".vramlint.yaml": "custom-gpus:\n" + "".join(f"  - {{name: G{i}, memory-gib: 24}}\n" for i in range(100_000)),
        "deploy.yaml": one, "__expect__": expect(("deploy.yaml", bad_line))}

    # ---------------------------------------------------------------- output injection
    # (corrected after the first run: with an unknown model no finding quotes the model name, by the project's rule
    # that an unknown model is said once in the run's summary; the hostile text is now in an unknown flag, which
    # VRL009 quotes, beside a known model)
    gh = deployment(QWEN + ["--evil%0A::error file=evil.yaml::pwned", "--served-model-name", "%0D%0A::warning::y%25",
                            "--max-model-len", "999999"])
    out["github-percent-injection"] = {"deploy.yaml": gh, "__expect__": expect(("deploy.yaml", line_of(gh, "--evil")))}
    md = deployment(QWEN + ["--a|b|c<!--", "--x</details>](javascript:alert(1))@org/team`x", "--max-model-len",
                            "999999"])
    out["markdown-injection"] = {"deploy.yaml": md, "__expect__": expect(("deploy.yaml", line_of(md, "--a|b")))}
    out["ansi-in-compose-command"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: \"--model \\e[2JOrg/x\\e]8;;http://x\\e\\\\ "
        "--max-model-len 999999\"\n", "__expect__": expect(("compose.yaml", 4))}
    # Corrected after the first run, from what the tools do (not from vramlint's output):
    # - a word of a script known only at run time is said once per server (VRL010 on the container's line, the
    #   word's line in its message), the project's rule since the third round: either line is right;
    # - with the model unknown (`$(cat /etc/passwd)`, a `.vramlint.yaml` alias cycle), no budget and no max-len
    #   error can be certain, and the unknown model is said once in the run's summary, by cause;
    # - kubectl refuses the fourth document of k8s-type-confusion (`command: 5`) before vLLM runs, so the error is
    #   on that line, not vLLM's on the args.
    for name, lines in (("shell-arith-2pow64", (9, 14)), ("shell-cat-etc-passwd", (9, 18)),
                        ("shell-read-from-proc", (9, 16)), ("shell-default-nesting-10k", (9, 14))):
        out[name]["__expect__"] = expect(("deploy.yaml", lines))
    out["config-alias-cycle"]["__expect__"] = expect()
    # - `${V0:-...}` nested 5,000 deep in .env is past vramlint's interpolation bound (compose itself resolves it):
    #   bounded and said, on the .env line, with the model unknown
    out["compose-env-nesting-5000"]["__expect__"] = expect((".env", 1, "VRL102"))
    out["k8s-type-confusion"]["__expect__"] = expect(("deploy.yaml", line_of(confused, "command: 5"), "VRL102"))
    return out


def extra_problems(files: dict[str, Any], scratch: str) -> list[str]:
    """The checks this round adds to hostile_fresh.run_case's."""
    problems: list[str] = []
    try:
        with open(os.path.join(scratch, "report.github"), encoding="utf-8", errors="replace") as fh:
            github = fh.read()
    except OSError:
        github = ""
    for line in github.splitlines():
        decoded = line.replace("%0A", "\n").replace("%0a", "\n").replace("%0D", "\r").replace("%0d", "\r")
        if any(part.lstrip().startswith("::") for part in decoded.replace("\r", "\n").split("\n")[1:]):
            problems.append(f"a github line the runner decodes into a second workflow command: {line[:80]!r}")
            break
    if files.get("__no_error__"):
        try:
            with open(os.path.join(scratch, "report.json"), encoding="utf-8") as fh:
                findings = json.load(fh).get("findings") or []
        except (OSError, ValueError):
            findings = []
        errors = [x for x in findings if x.get("level") == "error"]
        if errors:
            e = errors[0]
            problems.append(f"an error where vLLM accepts the input: {e.get('rule')} {e.get('file')}:{e.get('line')} "
                            f"{e.get('message', '')[:100]}")
    try:
        with open(os.path.join(scratch, "report.markdown"), encoding="utf-8", errors="replace") as fh:
            markdown = fh.read()
    except OSError:
        markdown = ""
    import re

    # (corrected after the first run: a backslash before `<` or `|` makes it literal in GitHub's markdown)
    for needle in (r"(?<!\\)<!--", r"(?<!\\)</details", r"(?<!\\)\|b(?<!\\)\|c"):
        if re.search(needle, markdown):
            problems.append(f"markdown carries {needle!r} from a scanned value unescaped")
    return problems


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = unseen_cases()[name]
    result = f.run_case(name, {k: v for k, v in files.items() if k != "__no_error__"}, base, timeout)
    result["problems"].extend(extra_problems(files, os.path.join(base, f"_scratch-{name}")))
    return result


UNSEEN_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_unseen as u; "
                "print(json.dumps(u.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], unseen_cases, "unseen", UNSEEN_CHILD)


if __name__ == "__main__":
    sys.exit(main())
