"""The command lines' one argument parser: a bad flag is one line (`error: ...`, exit 2), never a traceback.

    parser = Parser(prog="python -m sim toy")        # argparse.ArgumentParser, whose error() raises ArgError
    try:
        args = parser.parse_args(argv)
    except ArgError as e:
        print(f"error: {e}", file=sys.stderr); return 2

What argparse (Python 3.11) lets through, each refused here before any work, with the flag named:
  * `--checkpoint=--`: argparse drops a `--` even from an option's own value and hands the option an empty list
    (no `type=` applied), which failed deep inside (`TypeError: expected str ... not list`);
  * an empty or blank value (`--out=`, `--save-sft ''`, `FILE` given as ''): a file named '' is the current folder,
    and an empty --out used to mean "no --out" without a word;
  * the same option twice with two values (`--seed 1 --seed 2`, `-G 4 --group-size 8`): argparse keeps the last in
    silence, so a line of flags pasted before one's own changed the run unseen. The same value twice, or an on/off
    flag twice, says one thing and passes.
A value that starts with `-` is argparse's to judge (`--seed -1` is a number; `--out -x` is "expected one
argument"); its message is one line too.
"""

from __future__ import annotations

import argparse
import functools

from sim.validate import neutral

EMPTY = "expected a value, got an empty one"


class ArgError(Exception):
    """A bad flag: one line, argparse's message or ours."""


class _StoreOnce(argparse.Action):
    """argparse's plain "store" action, refusing an empty value, a value argparse emptied (`--x=--`), and a second
    use of the same option."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.type is None or callable(self.type):  # a blank value is refused before the type or the choices
            self.type = _not_blank(self.type or str)  # see it: one message for every flag

    def __call__(self, parser, namespace, values, option_string=None):
        if self.nargs is None and isinstance(values, list):  # `--x=--`: argparse removed the value itself
            raise argparse.ArgumentError(self, "expected one argument")
        if isinstance(values, str) and not values.strip():
            raise argparse.ArgumentError(self, EMPTY)
        given = getattr(parser, "given", None)
        if given is not None and option_string is not None:
            if self.dest in given and given[self.dest] != values:
                raise argparse.ArgumentError(self, f"given twice ({_shown(given[self.dest])}, then "
                                                   f"{_shown(values)}): give it once")
            given[self.dest] = values
        setattr(namespace, self.dest, values)


def _not_blank(convert):
    @functools.wraps(convert)  # argparse names the type in "invalid float value: 'x'"
    def checked(text: str):
        if isinstance(text, str) and not text.strip():
            raise argparse.ArgumentTypeError(EMPTY)
        return convert(text)

    return checked


def _shown(values) -> str:
    text = str(values)
    return neutral(text if len(text) <= 40 else text[:39] + "…")


class Parser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose errors are ArgError (one line, no usage dump, no SystemExit) and whose plain
    options and positionals refuse what the module's docstring lists. Subcommands: add_subparsers(parser_class=
    Parser)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)  # the default action, and "store" by name
        self.register("action", "store", _StoreOnce)
        self.given: dict | None = None

    def parse_known_args(self, args=None, namespace=None):
        self.given = {}  # dest -> its value, for this parse only
        try:
            return super().parse_known_args(args, namespace)
        finally:
            self.given = None

    def error(self, message: str):
        raise ArgError(message)
