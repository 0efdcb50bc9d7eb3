"""Names a reader could not resolve (variables, specifiers, expansions), kept in the order first met and said
short: shared by the systemd and supervisord readers."""

from __future__ import annotations


class Names(list):
    """Names in the order first met, each once; `add` is O(1) (a list searched before each append was quadratic: a
    unit naming 60,000 distinct unset variables ran for 25 CPU-s)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def add(self, name: str) -> None:
        if name not in self.seen:
            self.seen.add(name)
            self.append(name)


def said_names(names: list[str], prefix: str = "", suffix: str = "", limit: int = 12) -> str:
    """The names joined for a message, the first ``limit`` of a long list and how many more."""
    shown = ", ".join(prefix + n + suffix for n in names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")
