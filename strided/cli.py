"""The ``strided`` command line: an argparse tree with one subcommand group per concern.

A group is a module with ``add_parser(subparsers)`` that registers its subcommands, each
setting ``func=handler(args) -> int``.  To add a group, append it to :data:`GROUPS`.
Run as ``strided ...`` (console script) or ``python -m strided.cli ...``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

__all__ = ["main", "build_parser", "GROUPS"]

GROUPS: list[str] = [
    "strided.memory.cli",
]
"""Modules providing ``add_parser(subparsers)``, in help order."""


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every group registered."""
    parser = argparse.ArgumentParser(
        prog="strided",
        description="strided: PyTorch's device-backend system in Python. Tools for its subsystems.",
    )
    sub = parser.add_subparsers(dest="group", metavar="GROUP")
    for name in GROUPS:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``strided`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        # a group without a command: show that group's help (or the top level's)
        getattr(args, "group_parser", parser).print_help()
        return 2
    try:
        return int(func(args) or 0)
    except BrokenPipeError:  # e.g. `strided memory replay T | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 141


if __name__ == "__main__":
    sys.exit(main())
