"""Generate vramlint/data/vllm_modules.json: which Python modules of vLLM's own package each release ships, for the
parts of it that a command line can name (`--middleware vllm.entrypoints.openai.x.f` is imported by `build_app`
with importlib: a module the release does not have stops the server with ModuleNotFoundError).

Only each wheel's zip central directory is read (an HTTP range request for the end of the file, then one for the
directory: a few hundred KB per release instead of the 300 MB wheel), from the package index:

    python tools/gen_vllm_modules.py            # the releases vramlint/data/vllm_args.json lists

Kept: every module and package under `vllm/entrypoints/`, and the top-level modules and packages of `vllm/`
(`vllm.X`), so that a name is known to be missing only where the listing is whole.

A wheel already downloaded is read from its file instead (`pip download vllm==X --no-deps -d /tmp/vllmwheels`), and
a new release is added without reading the older ones again:

    python tools/gen_vllm_modules.py --append /tmp/vllmwheels/vllm-0.34.0-*.whl
    python tools/gen_vllm_modules.py --out /tmp/m2.json /tmp/vllmwheels/vllm-0.33.0-*.whl /tmp/vllmwheels/vllm-0.34.0-*.whl

`--append` adds each release named newer than the table's newest (a module the new release still has extends its
last range when that range ends at the previous release, else starts a new one), so the result is what a full
build writes; the second command is a fresh build of two releases to compare the appended table's last two
columns with.
"""

from __future__ import annotations

import json
import re
import struct
import sys
import urllib.request
import zlib
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "vramlint" / "data"
INDEX = "https://pypi.org/simple/vllm/"


def _get(url: str, first: int | None = None, last: int | None = None) -> bytes:
    req = urllib.request.Request(url)
    if first is not None:
        req.add_header("Range", f"bytes={first}-{last}" if last is not None else f"bytes={first}")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.read()


def wheel_url(version: str, page: str) -> str:
    """The x86_64 wheel of ``version`` on the index's simple page (PEP 503)."""
    for href in re.findall(r'href="([^"]+)"', page):
        file = href.split("#")[0].rsplit("/", 1)[-1]
        if file.startswith(f"vllm-{version}-") and file.endswith("x86_64.whl"):
            return href.split("#")[0]
    raise SystemExit(f"vllm {version}: no x86_64 wheel on the index")


class RemoteWheel:
    """A wheel on the index, read member by member with range requests."""

    def __init__(self, url: str):
        self.url = url
        tail = _get(url, -65536)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0:
            raise SystemExit(f"{url}: no end of central directory in the last 64 KB")
        size, offset = struct.unpack("<II", tail[at + 12:at + 20])
        if offset == 0xFFFFFFFF:
            loc = tail.rfind(b"PK\x06\x07")
            (z64,) = struct.unpack("<Q", tail[loc + 8:loc + 16])
            rec = _get(url, z64, z64 + 55)
            size, offset = struct.unpack("<QQ", rec[40:56])
        directory = _get(url, offset, offset + size - 1)
        self.entries: dict[str, tuple[int, int, int]] = {}
        i = 0
        while directory[i:i + 4] == b"PK\x01\x02":
            (method,) = struct.unpack("<H", directory[i + 10:i + 12])
            (csize,) = struct.unpack("<I", directory[i + 20:i + 24])
            n, m, k = struct.unpack("<HHH", directory[i + 28:i + 34])
            (header,) = struct.unpack("<I", directory[i + 42:i + 46])
            name = directory[i + 46:i + 46 + n].decode("utf-8", "replace")
            self.entries[name] = (method, csize, header)
            i += 46 + n + m + k

    def namelist(self) -> list[str]:
        return list(self.entries)

    def read(self, name: str) -> bytes:
        method, csize, header = self.entries[name]
        local = _get(self.url, header, header + 29)
        n, m = struct.unpack("<HH", local[26:30])
        start = header + 30 + n + m
        data = _get(self.url, start, start + csize - 1) if csize else b""
        if method == 0:
            return data
        if method == 8:
            return zlib.decompress(data, -15)
        raise SystemExit(f"{self.url}: {name} is compressed with zip method {method}")


def wheel_names(url: str) -> list[str]:
    return RemoteWheel(url).namelist()


def modules(names: list[str]) -> set[str]:
    out = set()
    for name in names:
        if name.startswith("vllm/") and name.count("/") == 1 and name.endswith(".so"):
            out.add("vllm." + name[5:].split(".")[0])  # a compiled module (vllm._C)
            continue
        if not name.startswith("vllm/") or not name.endswith(".py"):
            continue
        parts = name[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for depth in range(2, len(parts) + 1):  # the packages above a module exist too
            head = parts[:depth]
            if depth == 2 or head[1] == "entrypoints":
                out.add(".".join(head))
    return out


def _release(arg: str) -> str:
    """The release a command-line item names: a version, or a wheel file's (``vllm-0.34.0-cp38-...whl``)."""
    return Path(arg).name.split("-")[1] if arg.endswith(".whl") else arg


def _listing(arg: str, page: str | None) -> list[str]:
    if arg.endswith(".whl"):
        import zipfile
        with zipfile.ZipFile(arg) as wheel:
            return wheel.namelist()
    assert page is not None
    return wheel_names(wheel_url(arg, page))


def _ranges(idx: list[int]) -> list[list[int]]:
    spans, start = [], idx[0]
    for a, b in zip(idx, idx[1:] + [None], strict=True):
        if b != a + 1:
            spans.append([start, a])
            start = b
    return spans


def main(argv: list[str]) -> int:
    append = "--append" in argv
    argv = [a for a in argv if a != "--append"]
    out_path = DATA / "vllm_modules.json"
    if "--out" in argv:
        at = argv.index("--out")
        out_path = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    present: dict[str, list[int]] = {}
    versions: list[str] = []
    if append:
        table = json.loads(out_path.read_text())
        versions = list(table["versions"])
        for m, spans in table["modules"].items():
            present[m] = [i for lo, hi in spans for i in range(lo, hi + 1)]
        newest = tuple(int(x) for x in re.findall(r"\d+", versions[-1]))
        argv = [a for a in argv if tuple(int(x) for x in re.findall(r"\d+", _release(a))) > newest]
        if not argv:
            raise SystemExit(f"no release newer than the table's {versions[-1]}")
    items = argv or json.loads((DATA / "vllm_args.json").read_text())["versions"]
    page = None if all(a.endswith(".whl") for a in items) else _get(INDEX).decode("utf-8", "replace")
    for item in items:
        i = len(versions)
        versions.append(_release(item))
        mods = modules(_listing(item, page))
        print(f"{versions[-1]}: {len(mods)} modules", file=sys.stderr)
        for m in mods:
            present.setdefault(m, []).append(i)
    ranges = {m: _ranges(idx) for m, idx in sorted(present.items())}
    out = {"generated_by": "tools/gen_vllm_modules.py", "versions": versions,
           "complete": ["vllm.*", "vllm.entrypoints.**"], "modules": ranges}
    out_path.write_text(json.dumps(out, separators=(",", ":"), sort_keys=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
