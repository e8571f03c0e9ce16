# Two commands do all the set-up: `make lab` opens the kit, `make test` runs every check.
# Each creates .venv (and installs the kit into it) when it is missing or out of date.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test bench chromium node

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[notebooks,test,live,bench]'
	touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks

test: $(STAMP) chromium node
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg

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

# The differential test runs the chapter's session and context functions in real node
# (tests/js/, no npm packages).
node:
	@if ! command -v node >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs; \
	  else \
	    echo "The node differential test needs node; as root, run:" >&2; \
	    echo "  apt-get update && apt-get install -y nodejs" >&2; \
	    exit 1; \
	  fi; \
	fi
