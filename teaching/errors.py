"""Show an expected error without raising it, so that Run All goes on (JupyterLite's Run All
stops at any raising cell) while the stored output still carries the chapter's phrase.

`show_error(lambda: load_session(path), SessionFormatError)` displays the chapter's phrase
first and alone, `SessionFormatError: invalid session JSON at line 2`, and under it, indented
as the CLI's notes are, the kit's English detail marked `本包补充：` and the `释义：` line
(`glosses.phrase_first`, as the CLI shows it). If nothing is raised, or another
type of error is, the cell fails loudly: a regression cannot pass as a shown error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mini_agent.visible import visible_text

from .glosses import gloss_line, phrase_first
from .style import WRAP, visible_html


class NoErrorRaised(AssertionError):
    """The cell expected an error and the code ran through."""


@dataclass(frozen=True)
class ShownError:
    """An exception caught on purpose: its type name and message, as a traceback's last line."""

    error: BaseException

    @property
    def name(self) -> str:
        return type(self.error).__name__

    @property
    def message(self) -> str:
        """The error's message, hidden characters escaped (it may quote a file or a model)."""
        return visible_text(str(self.error))

    @property
    def gloss(self) -> str | None:
        """The line under the message: its Chinese meaning, or `None` when there is none."""
        return gloss_line(self.error)

    @property
    def lines(self) -> list[str]:
        """The shown lines: `Type: ` and the chapter's phrase (or the message), then the kit's
        detail and the 释义, indented; hidden characters escaped (they may quote a file)."""
        head, *rest = (visible_text(line) for line in phrase_first(self.error))
        return [f"{self.name}: {head}" if head else self.name, *(f"  {line}" for line in rest)]

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_html_(self) -> str:
        return (
            f"<pre style='color:#b00020;font-weight:bold;{WRAP};text-align:left'>"
            f"{visible_html(repr(self))}</pre>"
        )


def show_error(
    action: Callable[[], object],
    expected: type[BaseException] | tuple[type[BaseException], ...] = Exception,
) -> ShownError:
    """Run `action`; return the `expected` error it raises, for display. Any other error
    propagates unchanged; no error at all raises `NoErrorRaised`."""
    try:
        value = action()
    except expected as err:
        return ShownError(err)
    raise NoErrorRaised(f"这里应当报错，却返回了 {value!r}")
