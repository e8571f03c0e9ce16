"""`python -m mini_agent …`: see `mini_agent.cli`."""

from .cli import program

program()
