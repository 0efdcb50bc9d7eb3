"""The lines a report quotes and a fix is made on are held as the text and where each line starts, not as a string
per line (hostile round 19, issue 10): four 3 MB files of a million short lines each, with a finding and a fix at
the end, took 400 MB in the text report (the eight files it keeps quoting, the fix's split of each); and a file
that can no longer be read to quote it is said, not the end of the run (seed 1818 of the fuzz benchmark: a
MemoryError while quoting, exit 2).
"""

import os
import subprocess
import sys
import textwrap

from vramlint.commands.check import FileReader
from vramlint.fixes import EndedLines, split_lines
from vramlint.textfile import packed_source_lines, source_lines
from vramlint.yamlload import PackedLines

BAD = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: d%d}
    spec:
      template:
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.8.5
              args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, "999999", --max-seq-len-to-capture, "8"]
              resources: {limits: {nvidia.com/gpu: 1}}
    """)


def _kept_lines(text):
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def test_packed_lines_are_the_lines_a_list_gives():
    for text in ["", "a", "a\n", "a\nb", "a\n\n", "\n", "\n\n\n", "ab\ncd\n", "x\r\ny\n", "p\u2028q\n"]:
        assert list(packed_source_lines(text, "f.yaml")) == source_lines(text, "f.yaml")
        ended = EndedLines(text)
        expected = _kept_lines(text)
        assert list(ended) == expected and len(ended) == len(expected) and ended == expected
        assert [ended.start(i) for i in range(len(expected))] == [sum(map(len, expected[:i]))
                                                                  for i in range(len(expected))]
        assert ended[-1:] == expected[-1:]


def test_a_million_line_file_is_held_in_a_few_bytes_a_line():
    text = "#a\n" * 1_000_000 + "last: 1\n"
    packed = packed_source_lines(text, "f.yaml")
    assert isinstance(packed, PackedLines) and len(packed) == 1_000_001 and packed[-1] == "last: 1"
    # the text and one 4-byte start a line, not a 50-byte string a line
    assert packed._starts.itemsize * len(packed._starts) <= 4 * 1_000_002
    ended = split_lines(text)
    assert isinstance(ended, EndedLines) and ended[999_999] == "#a\n" and ended[1_000_000] == "last: 1\n"


def test_the_text_report_of_four_million_line_files_stays_small(tmp_path):
    for i in range(4):
        (tmp_path / f"f{i}.yaml").write_text("#a\n" * 1_000_000 + BAD % i)
    # the peak of this process's own memory (VmHWM): ru_maxrss keeps the parent's peak across fork and exec, and
    # the test runner's is hundreds of MB by the end of the suite
    code = ("import re, sys; from vramlint.cli import main; rc = main(sys.argv[1:]); "
            "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024, "
            "file=sys.stderr); sys.exit(rc)")
    res = subprocess.run([sys.executable, "-c", code, "check", str(tmp_path), "--offline"], capture_output=True,
                         text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert res.returncode == 1, res.stderr[-2000:]
    peak_mb = int(res.stderr.strip().splitlines()[-1])
    assert peak_mb < 300, peak_mb  # 400 MB before
    # every file's finding quoted on its own line (the million-and-tenth)
    assert res.stdout.count('1000010 |') == 4


def test_a_file_that_cannot_be_read_again_to_quote_is_said(tmp_path, monkeypatch):
    """Out of memory while quoting (the findings are made by then): the finding is printed with its place and a
    note that its line is not shown; the run's report is not lost."""
    from vramlint import fsread

    target = tmp_path / "d.yaml"
    target.write_text(BAD % 0)

    def exhausted(*args, **kwargs):
        raise MemoryError()

    reader = FileReader("-", None)
    monkeypatch.setattr(fsread, "read_text", exhausted)
    assert reader(str(target)) is None
    assert "out of memory" in reader.unquoted[str(target)]
