# Two commands do all the set-up: `make lab` opens the kit, `make test` runs every check.
# Each creates .venv (and installs the kit into it) when it is missing or out of date.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[notebooks,test,bench]'
	touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg

bench: $(STAMP)
	$(BIN)/python -m bench
