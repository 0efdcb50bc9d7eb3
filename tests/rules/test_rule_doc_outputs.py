"""Each value rule's documentation shows what vramlint prints for a failing example, in the text format, and
the edit its fix makes: a `<!-- output: CMD -->` line before a ```text block in a rule's docstring is CMD's
standard output, run from the repository root as the README's blocks are (tests/test_readme.py).
`python tests/rules/test_rule_doc_outputs.py --update` rewrites the blocks after a change to the output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.test_readme import OUTPUT_MARKER, command_output  # noqa: E402

VALUE_RULES = ("vrl001", "vrl002", "vrl005", "vrl006", "vrl007", "vrl008", "vrl009")


def _modules() -> list[Path]:
    return sorted(p for p in (ROOT / "rules").glob("vrl0*.py") if p.name[:6] in VALUE_RULES)


def _regenerate(text: str) -> str:
    def block(m) -> str:  # noqa: ANN001 - a re.Match
        out = command_output(m["cmd"])
        assert "\\" not in out and '"""' not in out, f"{m['cmd']}: the output cannot sit in a docstring as is"
        return f"<!-- output: {m['cmd']} -->\n```text\n{out}```"

    return OUTPUT_MARKER.sub(block, text)


@pytest.mark.parametrize("module", _modules(), ids=lambda p: p.name[:6].upper())
def test_the_rule_docs_show_the_text_output_and_the_fix(module):
    text = module.read_text(encoding="utf-8")
    shown = OUTPUT_MARKER.findall(text)
    commands = [cmd for cmd, _body in shown]
    assert any("--diff" not in c for c in commands), f"{module.name}: no example of what vramlint prints"
    assert any("--diff" in c for c in commands), f"{module.name}: no example of the edit its fix makes"
    for cmd, body in shown:
        assert body == command_output(cmd), (
            f"{module.name}: the output of `{cmd}` changed: run `python tests/rules/test_rule_doc_outputs.py --update`")
        if "--diff" not in cmd:
            assert "= help: " in body, f"{module.name}: `{cmd}` shows no fix"


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    for path in _modules():
        old = path.read_text(encoding="utf-8")
        new = _regenerate(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"{path.relative_to(ROOT)} regenerated")
