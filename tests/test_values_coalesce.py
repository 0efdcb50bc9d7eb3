"""coalesce (helm -f a -f b) keeps, for each value, where it was written, through prefix indexes: compared with the
plain scan of every origin that it replaced, on merges that replace, delete and extend keys at every depth."""

from __future__ import annotations

import random

from vramlint.helm.values import Values, coalesce
from vramlint.model import Location


def _reference(base: Values, data: dict, origins: dict) -> None:
    def drop(p: tuple) -> None:
        for k in [k for k in base.origins if k[:len(p)] == p]:
            del base.origins[k]

    def merge(dst: dict, src: dict, path: tuple) -> None:
        for k, v in src.items():
            p = path + (k,)
            if v is None:
                dst.pop(k, None)
                drop(p)
                continue
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                if p in origins:
                    base.origins.setdefault(p, origins[p])
                merge(dst[k], v, p)
                continue
            dst[k] = v
            drop(p)
            for ok, loc in origins.items():
                if ok[:len(p)] == p:
                    base.origins[ok] = loc

    merge(base.data, data, ())


def _tree(rng: random.Random, depth: int, file: str, path: tuple, origins: dict) -> dict:
    out: dict = {}
    for _ in range(rng.randint(1, 4)):
        k = rng.choice("abcd")
        p = path + (k,)
        origins[p] = Location(file, rng.randint(1, 999), 1)
        roll = rng.random()
        if depth and roll < 0.5:
            out[k] = _tree(rng, depth - 1, file, p, origins)
        elif roll < 0.65:
            out[k] = None
        elif roll < 0.8:
            out[k] = [1, 2]
            origins[p + (0,)] = Location(file, 1, 1)
        else:
            out[k] = rng.randint(0, 9)
    return out


def test_coalesce_keeps_the_origins_the_plain_scan_kept():
    rng = random.Random(11)
    for _ in range(300):
        fast, slow = Values(), Values()
        for n in range(rng.randint(1, 6)):
            origins: dict = {}
            data = _tree(rng, 3, f"f{n}.yaml", (), origins)
            coalesce(fast, data, origins, f"f{n}.yaml")
            _reference(slow, data, dict(origins))
            assert fast.data == slow.data
            assert list(fast.origins.items()) == list(slow.origins.items())


def test_an_index_kept_between_merges_is_not_used_once_the_origins_changed_elsewhere():
    base = Values()
    coalesce(base, {"a": {"b": 1}}, {("a",): Location("x", 1, 1), ("a", "b"): Location("x", 2, 1)})
    coalesce(base, {"a": {"b": 2}}, {("a", "b"): Location("y", 5, 1)})
    base.origins[("a", "c")] = Location("z", 9, 1)  # not through coalesce
    coalesce(base, {"a": 3}, {("a",): Location("w", 7, 1)})
    assert base.origins == {("a",): Location("w", 7, 1)}
