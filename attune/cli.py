"""The ``attune`` command. Each subcommand's options live next to its implementation."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _cmd_schemas(args: argparse.Namespace) -> int:
    from ._schemas_cmd import write_schemas

    paths = write_schemas(args.out)
    for p in paths:
        print(p)
    return 0


class _DefaultsFormatter(argparse.HelpFormatter):
    """Help that shows each option's default (docs/configuration.md lists the same), except unset ones."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        unset = action.default in (None, False, [], argparse.SUPPRESS)
        if unset or not action.option_strings or "default" in text.lower():  # unset, positional or already said
            return text
        return f"{text} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attune",
        description="Streaming evaluator for empathetic and supportive dialogue.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"attune {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("schemas", help="write the JSON Schema of every record")
    p.add_argument("--out", required=True, help="directory to write *.schema.json into")
    p.set_defaults(func=_cmd_schemas)

    from . import _cmd_calibration, batch

    batch.register(sub)
    _cmd_calibration.register(sub)

    from streams import cli as stream_cli

    stream_cli.register(sub)
    for command in sub.choices.values():
        command.formatter_class = _DefaultsFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
