"""`python -m mini_agent …`: see `mini_agent.cli`."""

import sys

from .cli import main

sys.exit(main())
