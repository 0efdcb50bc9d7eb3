"""Manifests with template text that are not part of a chart: extract what is certain, mark the rest unknown.

Go templates (`{{ .Name }}`), Terraform `templatefile` (`${var}`, `%{ if x ~}` directives) and
`<PLACEHOLDER>` words make a file invalid YAML or give it values that are not real. Each expression is
replaced by a marker of the same width (so every line and column after it stays where it was), a line
holding only directives becomes blank, and the file is parsed again. Markers use the brackets
`vramlint.yamlload.neutralize_templates` uses, so the extractors read such values as unknown (None).
"""

from __future__ import annotations

import re

from vramlint.model import Problem

OPEN = "\u2983"
CLOSE = "\u2984"

# `{{ `{{ .X }}` }}` (a raw string holding a second-stage template) is one action, not two.
_GO_ACTION = re.compile(r"\{\{-?\s*`[^`]*`\s*-?\}\}|\{\{.*?\}\}", re.S)
_TF_DIRECTIVE = re.compile(r"%\{.*?\}")
_TF_INTERP = re.compile(r"(?<!\$)\$\{[^{}\n]*\}")
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_\-]*>")


def _marker(width: int) -> str:
    return OPEN + "_" * max(0, width - 2) + CLOSE if width >= 2 else OPEN


def neutralize(text: str, placeholders: bool = True) -> tuple[str, list[str]]:
    """The text with template expressions replaced, line for line; and which syntaxes were seen."""
    seen: list[str] = []
    out_lines = []
    for line in text.split("\n"):
        original = line
        kinds = []
        if "{{" in line:
            kinds.append("Go template {{ }}")
        if "%{" in line:
            kinds.append("Terraform %{ } directives")
        if "${" in line:
            kinds.append("${var} interpolation")
        if placeholders and _PLACEHOLDER.search(line):
            kinds.append("<PLACEHOLDER> words")
        if not kinds:
            out_lines.append(line)
            continue
        for k in kinds:
            if k not in seen:
                seen.append(k)
        bare = _TF_DIRECTIVE.sub("", _GO_ACTION.sub("", original)).strip()
        if not bare:
            out_lines.append("")  # a line of control actions only: `{{- if }}`, `%{ endif ~}`
            continue
        line = _GO_ACTION.sub(lambda m: _marker(len(m.group(0))), line)
        line = _TF_DIRECTIVE.sub(lambda m: " " * len(m.group(0)), line)
        line = _TF_INTERP.sub(lambda m: _marker(len(m.group(0))), line)
        if placeholders:
            line = _PLACEHOLDER.sub(lambda m: _marker(len(m.group(0))), line)
        out_lines.append(line)
    # A multi-line `{{ ... }}` spans lines; blank what is left of it rather than guess.
    return "\n".join(out_lines), seen


def load_templated_text(text: str, file: str) -> tuple[list, list[Problem], str | None]:
    """Parse a templated manifest: (documents, problems, the note to say once for this file, or None).

    Problems are only what is still invalid once the template text is set aside (real YAML errors).
    """
    from vramlint.yamlload import load_text

    cleaned, seen = neutralize(text)
    if not seen:
        docs, problems = load_text(text, file)
        return docs, problems, None
    docs, problems = load_text(cleaned, file)
    for doc in docs:
        doc.lines = text.splitlines()  # suppressions and comments are read from the real text
    note = (f"{file}: template text ({', '.join(seen)}) is not part of a Helm chart here; values written as "
            "template expressions are unknown until rendered")
    return docs, problems, note
