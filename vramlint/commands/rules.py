"""`vramlint rules`: list the rules, or print one rule's documentation."""

from __future__ import annotations

import argparse

EPILOG = """\
examples:
  vramlint rules                       one line per rule: id, name, level, what it finds
  vramlint rules VRL001                the rule's documentation, with a failing and a passing example
  vramlint rules will-not-start        the same, by name

exit status: 0, or 2 for a rule that does not exist.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", nargs="?", help="a rule id (VRL003) or name; print its documentation")
    parser.add_argument(
        "--rules-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="also load the rule modules in DIR (repeatable)",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the documentation of every rule as markdown (this is how docs/rules.md is made)",
    )


def run(args: argparse.Namespace) -> int:
    from vramlint.cli import UsageError
    from vramlint.meta import meta_rules
    from vramlint.rule import find_rule, load_rules, rule_markdown, rules_markdown

    # vramlint's own findings (VRL000, VRL100+) are listed and documented like the rules
    rules = sorted(load_rules(args.rules_dir) + meta_rules(), key=lambda r: r.id)
    if args.rule:
        rule = find_rule(rules, args.rule)
        if rule is None:
            import difflib

            key = args.rule.upper() if args.rule[:3].lower() == "vrl" else args.rule.lower()
            close = difflib.get_close_matches(key, [r.id for r in rules] + [r.name for r in rules], n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(close)}?" if close else f"the rules are {', '.join(r.id for r in rules)}"
            raise UsageError(f"no rule {args.rule!r}; {hint} (`vramlint rules` lists them with their names)")
        import re

        # an example's `<!-- output: CMD -->` marker (how docs/rules.md keeps it current) reads as the command
        print(re.sub(r"^<!-- output: (.*) -->$", r"$ \1", rule_markdown(rule, heading="#"), flags=re.M), end="")
        return 0
    if args.markdown:
        print(rules_markdown(rules), end="")
        return 0
    width = max((len(r.name) for r in rules), default=0)
    for rule in rules:
        print(f"{rule.id}  {rule.name:<{width}}  {rule.level:<7}  {rule.summary}")
    return 0
