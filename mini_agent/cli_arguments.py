"""Argument types shared by the CLI's subcommands (those in `cli.py`, `demo` and `chat`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

Number = TypeVar("Number", int, float)


def positive(convert: Callable[[str], Number], kind: str) -> Callable[[str], Number]:
    """An argparse type: `convert(text)` when it is a positive number of `kind`, or the
    usage error (exit 2) saying what was wrong."""

    def parse(text: str) -> Number:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not value > 0:  # `not >` also refuses NaN
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return parse


positive_int = positive(int, "an integer")  # a budget: --max-chars
positive_float = positive(float, "a number")  # a time: --timeout
