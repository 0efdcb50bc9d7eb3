"""The text formats are printed a finding at a time; what is printed is the text `render` gives whole (the
--output-file path), byte for byte."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

from vramlint.cli import main

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


@pytest.mark.parametrize("extra", [[], ["--output-format", "concise"], ["--statistics"], ["--quiet"],
                                   ["--show-suppressed", "--color", "always"]])
def test_printed_text_is_the_rendered_text(tmp_path, extra):
    fmt = "concise" if "concise" in extra else "text"
    flags = [x for x in extra if x not in ("--output-format", "concise")]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["check", "--offline", EXAMPLES, "--output-format", fmt, *flags])
    out = tmp_path / "report.txt"
    with contextlib.redirect_stdout(io.StringIO()):
        code_file = main(["check", "--offline", EXAMPLES, "--output-format", fmt, "--output-file", str(out), *flags])
    assert code == code_file
    assert printed.getvalue() == out.read_text(encoding="utf-8")
    if "--quiet" not in extra:
        assert printed.getvalue().count("\n") > 5  # findings were printed
