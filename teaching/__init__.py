"""The notebooks' apparatus: a package of its own beside `mini_agent` (installed with the
`notebooks` extra). It imports `mini_agent`; `mini_agent` never imports it, nor IPython.

- `views`: sessions, units, trims, the scan and runs as HTML and plain text;
  `trace`: the chapter's reverse scan, step by step; `explorers` (+ `explorer_logic`): widgets;
- `book`: the chapter's own text — its TypeScript excerpts, 老z's drawings, its tables and
  the tests it names (the chapter's code in Python is `mini_agent`'s `session`, `context`
  and `agent`); `chapter_variants`: the two places the chapter's own way is graded right too;
- `source`: `show_source`, the chapter's code with its Python beside it;
  `acceptance`: 07's 阶段验收; `extras`: what 08 needs beyond `kit.py lab`;
- `exercises`: one-call checks of a reader's answers; `buggy`: wrong `record()`s to find;
- `errors`: `show_error`, with a one-line Chinese gloss under each error (`glosses`: the
  command line's `mini_agent.glosses`, and those of errors only notebooks show);
- `samples`: the sample session files in `sample_sessions/` (found, not listed: drop a
  `.jsonl` there and the notebooks, the command line and the browser edition list it); `demo06`: notebook 06's
  scenario, re-runnable; `demo`: `python -m teaching.demo`; `watch`: a client that reads the
  session file at every request;
- `text`: every word a reader sees in a notebook (beyond `mini_agent.listing`'s, which the
  command line prints too); `style`: colours, scale, `set_display` (one kernel's views only; the
  class's projector switch is the browser's zoom) and `visible_html`;
- `route`: 95's class route, its stops read from 95's own headings (its table, the
  classroom test's walk);
- `saving`: the hook `kit.py lab` saves notebooks through (widget pictures, not dead views);
- `tracebacks`: the 释义 under an error raised in a reader's own cell, registered below.
"""

from .tracebacks import install_in_ipython

# Inside IPython (every notebook imports `teaching`), an error in any cell that the kit can explain
# gets its 释义 under the traceback; outside IPython nothing happens.
install_in_ipython()
