"""The source-build reader's shell tokenizer stays small on one huge word: a regex group repeated once per character
keeps a backtracking record per character (a 1 MB `@ref` took about 160 MB), one repeated per run of characters
does not. The pieces it cuts are the same either way."""

from __future__ import annotations

import re
import tracemalloc

from vramlint.extract import source_build

# the tokenizer as it was before runs of plain characters were taken at once: the reference for what a piece is
_PER_CHARACTER = re.compile(r"'[^']*'?|\"(?:\\.|[^\"\\])*\"?|&&|\|\||;;|\|&|[;&|()]|\s+|(?:\\.|[^\s;&|()'\"\\])+|\\")

SHELL = [
    'git clone https://github.com/fork/vllm.git && cd vllm && pip install -e .',
    "pip install 'vllm @ git+https://github.com/vllm-project/vllm@v0.9.2' ; echo \"done \\\"x\\\" $HOME\"",
    'cd /src\\ dir && python setup.py develop || true',
    'A="unterminated \\" quote',
    "x='open",
    'a\\',
    'uv pip install -e . |& tee log (sub) ;; esac',
]


def test_the_pieces_are_the_same_as_the_per_character_tokenizer():
    for text in SHELL:
        assert [m.group(0) for m in source_build._PIECE.finditer(text)] == \
            [m.group(0) for m in _PER_CHARACTER.finditer(text)], text


def test_one_huge_word_is_cut_in_bounded_memory():
    word = "git+https://github.com/vllm-project/vllm.git@" + "0." * 500_000 + "1"
    script = f'pip install "{word}"\npip install {word}\n'
    tracemalloc.start()
    try:
        commands = list(source_build._commands(script, lambda w: None))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [len(c) for c in commands if c][:2] == [3, 3]
    assert peak < 20_000_000, peak  # the text is 2 MB; the per-character tokenizer peaked near 160 MB


def test_a_here_document_runs_its_lines_as_separate_commands(tmp_path, capsys):
    # `RUN <<EOF` runs each line as a command: the clone, the cd and the install are three, not one long command
    import json

    from vramlint.cli import main

    (tmp_path / "Dockerfile").write_text(
        "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN <<EOF\n"
        "git clone https://github.com/lab/vllm.git /opt/engine\ncd /opt/engine\npip install -e .\nEOF\n"
        'ENTRYPOINT ["vllm", "serve", "facebook/opt-125m", "--lab-kernel", "x"]\n')
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    [server] = report["servers"]
    assert server["vllm_version"] is None
    assert [(f["rule"], f["level"]) for f in report["findings"] if f["rule"] == "VRL009"] == [("VRL009", "note")]


def test_a_pin_in_a_here_document_run_is_read_and_a_python_here_document_is_not(tmp_path, capsys):
    import json

    from vramlint.cli import main

    (tmp_path / "Dockerfile").write_text(
        "# syntax=docker/dockerfile:1\nFROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
        "RUN python3 <<PY\nprint('pip install vllm==0.6.1')\nPY\n"
        "RUN bash -e <<EOF\napt-get update\npip install vllm==0.9.2\nEOF\n"
        'ENTRYPOINT ["vllm", "serve", "facebook/opt-125m"]\n')
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    [server] = json.loads(capsys.readouterr().out)["servers"]
    assert server["vllm_version"] == "0.9.2"
