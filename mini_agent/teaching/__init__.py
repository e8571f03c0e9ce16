"""The notebooks' apparatus, beyond the chapter: these import the chapter's modules, never
the other way round.

- `views`: sessions, units, trims, the scan and runs as HTML and plain text;
  `trace`: the chapter's reverse scan, step by step; `explorers` (+ `explorer_logic`): widgets;
- `book`: the chapter's own text — its TypeScript excerpts, 老z's drawings, its tables and
  the tests it names (the chapter's code transcribed into Python is `mini_agent.chapter`,
  the chapter-faithful answer every exercise check accepts);
- `source`: `show_source`, the chapter's code with its Python beside it;
  `acceptance`: 07's 阶段验收; `extras`: what 08 needs beyond `kit.py lab`;
- `exercises`: one-call checks of a reader's answers; `buggy`: wrong `record()`s to find;
- `errors`: `show_error`, with a one-line Chinese gloss (`glosses`) under each error;
- `samples`: the shared sample session and the chapter's picture; `demo06`: notebook 06's
  scenario, re-runnable; `demo`: the CLI's `demo` command; `watch`: a client that reads the
  session file at every request;
- `text`: every word a reader sees in a notebook; `cli_text`: every word the command line prints
  (both Chinese); `style`: colours, scale and `set_display` (one kernel's views only; the
  class's projector switch is the browser's zoom);
- `saving`: the hook `kit.py lab` saves notebooks through (widget pictures, not dead views).
"""
