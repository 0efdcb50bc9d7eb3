"""Command-line entry point.

Exit-code contract (stable, relied on by the GitHub Action and pre-commit):
0 the run completed and nothing reached ``--fail-on``; 1 findings at or above ``--fail-on``;
2 usage error or internal failure; 130 interrupted (Ctrl-C), as shells report a process stopped by SIGINT.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "check": "lint deployments and report findings (the default command)",
    "inventory": "list every vLLM server found, with where each setting was written",
    "explain": "print the GPU memory budget vLLM will compute for each server",
    "rules": "list the rules, or print one rule's documentation",
    "diff": "compare each server's memory budget and findings at a git revision with the working tree",
}


class UsageError(Exception):
    """A mistake in how vramlint was called; exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a suggestion for a mistyped option (`--outptu-format`: did you mean --output-format?)."""

    def error(self, message: str):  # noqa: ANN201 - argparse's signature
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            hints = []
            for word in message[len(prefix):].split():
                if not word.startswith("-"):
                    continue
                flag = word.split("=", 1)[0]
                import difflib  # only for an option that matches nothing

                close = difflib.get_close_matches(flag, self._known_options(), n=1, cutoff=0.6)
                if close:
                    hints.append(f"{flag}: did you mean {close[0]}?")
            if hints:
                message += "; " + "; ".join(hints)
        super().error(message)

    def _known_options(self) -> list[str]:
        # the top parser reports a subcommand's leftover words: its options are the ones to suggest
        options = list(self._option_string_actions)
        command = getattr(self, "command_parser", None)
        if command is not None:
            options += list(command._option_string_actions)
        return [o for o in options if o.startswith("--")]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; ``only``: with just that command's subparser (one run parses one command, and
    building the others imports what it does not need)."""
    from vramlint import __version__

    parser = _Parser(
        prog="vramlint",
        usage="vramlint [COMMAND] [PATH ...] [options]",
        description="Lint vLLM deployments (Kubernetes, Helm values, compose, vLLM config files) "
        "against the GPU memory budget vLLM computes at start-up.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"vramlint {__version__}")
    # prog: the subcommands' usage line reads `vramlint check [-h] ...`, not the top usage followed by it
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", prog="vramlint")
    parser.command_parsers = {}
    for name, help_text in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"vramlint.commands.{name}")
        p = sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:] + ".",
                           epilog=getattr(module, "EPILOG", None), formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        parser.command_parsers[name] = p
    return parser


EPILOG = """\
`vramlint PATH ...` is `vramlint check PATH ...`; with no arguments it checks the current folder.
`vramlint COMMAND --help` shows each command's options.

examples:
  vramlint deploy/                                   lint a folder (YAML files, walked recursively)
  helm template my-release ./chart | vramlint check -
  vramlint explain --gpu T4 -- vllm serve meta-llama/Llama-3.2-3B-Instruct --dtype half
  vramlint rules VRL005                              what a rule checks, with examples

exit status: 0 nothing reached --fail-on, 1 a finding did, 2 usage error or internal failure,
130 interrupted.
"""


def main(argv: list[str] | None = None) -> int:
    if argv is not None:
        return _main(list(argv))
    # The process ends after this run (the console script, `python -m vramlint`): objects alive now need no
    # collecting, and freezing them spares the interpreter's shutdown three full collections over every
    # object left (about 30 of the 480 million instructions of checking one small file). A caller passing
    # argv (tests, a library) keeps its collector as it was.
    argv = sys.argv[1:]
    regexes = path = code_path = None
    if argv not in (["--version"], ["-V"]):
        # patterns compiled by an earlier run of this interpreter are built from their cached code, and so are
        # the methods `dataclasses` writes for each class
        from vramlint import codecache, recache

        path = recache.default_path()
        regexes = recache.load(path)
        code_path = codecache.default_path()
        codecache.install(code_path)
    try:
        return _main(argv)
    finally:
        if path is not None:
            recache.save(path, regexes)
        if argv not in (["--version"], ["-V"]):
            codecache.uninstall(code_path)
        import gc

        gc.freeze()


def _main(argv: list[str]) -> int:
    # `vramlint deploy/` means `vramlint check deploy/`, as ruff and yamllint take paths directly.
    try:
        if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "-V", "--version"):
            _refuse_mistyped_command(argv[0])
            argv.insert(0, "check")
        if not argv:
            argv = ["check", "."]
        if argv in (["--version"], ["-V"]):  # pre-commit and CI ask this often: no parser, no command modules
            from vramlint import __version__

            print(f"vramlint {__version__}")
            return 0
        parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
        parser.command_parser = parser.command_parsers.get(argv[0])
        args = parser.parse_args(argv)
        # argparse drops `--`; `vramlint explain --` with nothing after it must not scan "." instead
        args.dashdash = "--" in argv
        module = importlib.import_module(f"vramlint.commands.{args.command}")
        return module.run(args)
    except UsageError as exc:
        from vramlint.textsafe import eprint

        eprint(f"vramlint: error: {exc}")
        return 2
    except KeyboardInterrupt:
        print("vramlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the exit-code contract says 2 for an internal failure
        import traceback

        traceback.print_exc()
        from vramlint.textsafe import eprint

        eprint(f"vramlint: internal error: {exc!r}; please report it")
        return 2


def _refuse_mistyped_command(word: str) -> None:
    """`vramlint chek` is a mistyped command, not a path to lint, unless a file or folder of that name exists."""
    import os

    if word.startswith("-") or os.path.lexists(word):
        return
    import difflib

    close = difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.6)
    if close:
        raise UsageError(f"unknown command {word!r}; did you mean {close[0]!r}?")
