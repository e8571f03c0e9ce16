"""The notebooks' apparatus, beyond the chapter: these import the chapter's modules, never
the other way round.

- `views`: sessions, units, trims, the scan and runs as HTML and plain text;
  `trace`: the chapter's reverse scan, step by step; `explorers` (+ `explorer_logic`): widgets;
- `exercises`: one-call checks of a reader's answers; `buggy`: wrong `record()`s to find;
- `samples`: the shared sample session and the chapter's picture; `demo06`: notebook 06's
  scenario, re-runnable; `demo`: the CLI's `demo` command; `watch`: a client that reads the
  session file at every request;
- `text`: every word a reader sees (Chinese; English for the CLI); `style`: colours, scale
  and the projector switch `set_display`.
"""
