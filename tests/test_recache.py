"""Regular expressions built from the cached code of an earlier run are the patterns `re` compiles (vramlint.recache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PATTERNS = [
    ("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", 0),  # PyYAML's printable check
    (r"(?P<name>[a-z]+)-(?P<rev>\d+)(?:\.(\d+))?", 0),  # named and unnamed groups
    (r"^ \s* (?:true|false) $  # a comment", "X|I"),  # flags given
    ("(?im)^vllm (serve|run)", 0),  # flags in the pattern
    (b"\\x00[\\x80-\\xff]{2,}", 0),  # bytes
]

# compile PATTERNS (each through re.compile, as any module does), then save or load the cache at argv[2]
CHILD = """\
import json, re, sys
sys.path.insert(0, {root!r})
from vramlint import recache
patterns = [(p.encode("latin-1") if b else p, eval("re." + f.replace("|", "|re.")) if isinstance(f, str) else f)
            for p, f, b in json.loads(sys.argv[3])]
if sys.argv[1] == "save":
    for p, f in patterns:
        re.compile(p, f)
    recache.save(sys.argv[2], recache.load(sys.argv[2]))
    print(json.dumps(None))
else:
    from re import _compiler
    loaded = recache.load(sys.argv[2])
    report = []
    for p, f in patterns:
        key = (type(p), p, f.value if isinstance(f, re.RegexFlag) else f)
        cached = re._cache.get(key)
        got = re.compile(p, f)
        fresh = _compiler.compile(p, f)  # compiled now, bypassing the cache
        report.append({{"from_cache": cached is not None and got is cached, "equal": got == fresh,
                        "same": [got.flags == fresh.flags, got.groups == fresh.groups,
                                 got.groupindex == fresh.groupindex, got.pattern == fresh.pattern]}})
    print(json.dumps({{"loaded": None if loaded is None else len(loaded), "patterns": report}}))
"""


def child(mode, path, patterns=PATTERNS):
    spec = json.dumps([(p.decode("latin-1") if isinstance(p, bytes) else p, f, isinstance(p, bytes))
                       for p, f in patterns])
    proc = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT), mode, str(path), spec],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def test_patterns_built_from_the_cache_equal_the_compiled_ones(tmp_path):
    path = tmp_path / "__pycache__" / "regexes.marshal"
    child("save", path)
    assert path.is_file()
    got = child("load", path)
    assert got["loaded"] >= len(PATTERNS)
    for pattern, result in zip(PATTERNS, got["patterns"], strict=True):
        # `==` on compiled patterns compares their code, flags and text
        assert result == {"from_cache": True, "equal": True, "same": [True] * 4}, pattern


def test_a_file_from_another_interpreter_or_cut_short_is_ignored(tmp_path):
    import marshal

    path = tmp_path / "regexes.marshal"
    child("save", path)
    header, entries = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((("another python", *header[1:]), entries)))
    got = child("load", path)
    assert got["loaded"] is None and not any(r["from_cache"] for r in got["patterns"])
    assert all(r["equal"] for r in got["patterns"])
    child("save", path)
    path.write_bytes(path.read_bytes()[:-20])
    got = child("load", path)
    assert got["loaded"] is None and not any(r["from_cache"] for r in got["patterns"])


def test_a_run_adds_the_patterns_the_file_lacks_and_rewrites_nothing_else(tmp_path):
    import marshal

    path = tmp_path / "regexes.marshal"
    child("save", path, PATTERNS[:2])
    _header, first = marshal.loads(path.read_bytes())
    assert ("s", PATTERNS[1][0], 0) in first and ("s", PATTERNS[3][0], 0) not in first
    before = path.stat().st_mtime_ns
    child("save", path, PATTERNS[:2])  # the same patterns again: the file stays as it was
    assert path.stat().st_mtime_ns == before
    child("save", path, PATTERNS[3:4])
    _header, after = marshal.loads(path.read_bytes())
    assert set(after) == set(first) | {("s", PATTERNS[3][0], 0)}
    assert all(r["from_cache"] and r["equal"] for r in child("load", path)["patterns"][:2])


def test_no_file_where_python_writes_no_bytecode():
    code = f"import sys; sys.path.insert(0, {ROOT!r}); from vramlint import recache; print(recache.default_path())"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip() == "None"
    env.pop("PYTHONDONTWRITEBYTECODE")
    proc = subprocess.run([sys.executable, "-B", "-c", code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip() == "None"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert proc.stdout.strip().endswith(os.path.join("vramlint", "__pycache__",
                                                     f"regexes.{sys.implementation.cache_tag}.marshal"))
