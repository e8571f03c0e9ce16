"""Argument types shared by the CLI's subcommands (those in `cli.py` and those in modules)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A budget on the command line: a positive integer, or argparse's usage error (exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value
