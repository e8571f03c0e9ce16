# Two commands do all the set-up: `make lab` opens the kit, `make test` runs every check.
# Each creates .venv (and installs the kit into it) when it is missing or out of date.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test bench chromium node pyodide soak site

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[notebooks,test,live,bench]'
	touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks

test: $(STAMP) chromium node pyodide site
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg

# The browser edition: a static JupyterLite site in _site/, built from this checkout (its own
# build environment .site-venv/ needs python3.12 or python3.13; caches in .site-cache/).
# Unchanged inputs reuse the last build. Serve it: python3 -m http.server -d _site -b 127.0.0.1
site: node
	$(PYTHON) site/build.py

bench: $(STAMP)
	$(BIN)/python -m bench

# The browser test drives Debian's Chromium through Playwright (never `playwright install`);
# a CJK font lets its screenshots show the notebooks' Chinese text.
CHROMIUM := /usr/bin/chromium
CJK_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
chromium:
	@if [ ! -x $(CHROMIUM) ] || [ ! -e $(CJK_FONT) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-wqy-microhei; \
	  else \
	    echo "The browser test needs Chromium at $(CHROMIUM) and a CJK font; as root, run:" >&2; \
	    echo "  apt-get update && apt-get install -y chromium fonts-wqy-microhei" >&2; \
	    exit 1; \
	  fi; \
	fi

# The core checks also run inside real Pyodide under node (tests/test_pyodide.py): the npm
# package at the version jupyterlite-pyodide-kernel pins, in a git-ignored cache.
PYODIDE_VERSION := 314.0.6
PYODIDE_CACHE := .cache/pyodide
PYODIDE_STAMP := $(PYODIDE_CACHE)/node_modules/pyodide/.installed-$(PYODIDE_VERSION)
pyodide: node $(PYODIDE_STAMP)
$(PYODIDE_STAMP):
	npm install --prefix $(PYODIDE_CACHE) --no-save --no-audit --no-fund --loglevel=error pyodide@$(PYODIDE_VERSION)
	touch $@

# The long fault soak (issue 11's targets; minutes, not part of `make test`).
soak: $(STAMP)
	$(BIN)/python -m tests.soak

# The differential test runs the chapter's session and context functions in real node
# (tests/js/, no npm packages); npm fetches Pyodide and the site's JavaScript.
node:
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm; \
	  else \
	    echo "The node differential test and the browser builds need node and npm; as root, run:" >&2; \
	    echo "  apt-get update && apt-get install -y nodejs npm" >&2; \
	    exit 1; \
	  fi; \
	fi
