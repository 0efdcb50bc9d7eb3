"""The methods `dataclasses` writes, compiled by an earlier run and read back (vramlint.codecache): the second run
compiles none of them, and the classes behave as when each was compiled anew."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# makes dataclasses of each kind the decorator writes differently, with the cache at argv[1] or without it
# ("-"), and prints what they do and how many sources this run compiled that the file did not hold
CHILD = """\
import dataclasses, json, sys
sys.path.insert(0, {root!r})
from vramlint import codecache
path = None if sys.argv[1] == "-" else sys.argv[1]
if path is not None:
    codecache.install(path)

@dataclasses.dataclass
class Plain:
    a: int
    b: str = "x"
    c: list = dataclasses.field(default_factory=list)

@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    b: tuple = ()

@dataclasses.dataclass(kw_only=True)
class KwOnly:
    a: int = 1
    b: int = 2

@dataclasses.dataclass
class Post:
    a: int
    doubled: int = dataclasses.field(init=False, default=0)
    def __post_init__(self):
        self.doubled = 2 * self.a

@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Slotted:
    a: int
    b: str = "s"

from vramlint.model import Location  # vramlint's own: its frozen, slotted __init__ is made by model.py

out = {{}}
p = Plain(1)
p.c.append(3)
out["plain"] = [repr(p), p == Plain(1, "x", [3]), Plain(2).c is not Plain(2).c]
f = Frozen(1, (2,))
try:
    f.a = 2
    out["frozen"] = "assigned"
except dataclasses.FrozenInstanceError:
    out["frozen"] = [repr(f), hash(f) == hash(Frozen(1, (2,)))]
try:
    KwOnly(1)
    out["kw_only"] = "positional accepted"
except TypeError:
    out["kw_only"] = repr(KwOnly(b=5))
out["post"] = repr(Post(4))
out["slotted"] = [repr(Slotted(1)), Slotted(1) < Slotted(2), not hasattr(Slotted(1), "__dict__")]
loc = Location("f.yaml", 3, 4)
out["location"] = [repr(loc), loc == Location("f.yaml", 3, 4)]
out["new"] = len([s for s in codecache._compiled if s not in codecache._loaded])
out["read"] = len(codecache._loaded)
if path is not None:
    codecache.uninstall(path)
    out["restored"] = "exec" not in vars(dataclasses)
print(json.dumps(out))
"""


def _run(path: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT), path], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return json.loads(proc.stdout)


def test_a_second_run_compiles_nothing_and_its_classes_behave_the_same(tmp_path):
    path = str(tmp_path / "dataclass-code.marshal")
    plain = _run("-")  # no cache: every method compiled by exec, as the standard decorator does
    first = _run(path)
    assert os.path.exists(path) and first["new"] > 0 and first["read"] == 0 and first["restored"]
    second = _run(path)
    assert second["new"] == 0 and second["read"] == first["new"]
    for key in ("plain", "frozen", "kw_only", "post", "slotted", "location"):
        assert plain[key] == first[key] == second[key], key
    assert plain["frozen"] != "assigned" and plain["kw_only"] != "positional accepted"
    assert plain["post"] == "Post(a=4, doubled=8)"


def test_a_file_of_another_interpreter_or_cut_short_is_ignored_and_rewritten(tmp_path):
    import marshal

    path = tmp_path / "dataclass-code.marshal"
    path.write_bytes(marshal.dumps(((0, "another python"), {"def f(): pass": compile("1", "<string>", "exec")})))
    assert _run(str(path))["read"] == 0
    assert _run(str(path))["read"] > 0  # rewritten by the run before
    path.write_bytes(path.read_bytes()[:100])
    assert _run(str(path))["read"] == 0
