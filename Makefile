# Aliases for those who type `make`: every target runs kit.py (python kit.py --help), which is
# what the README's two commands are, on Windows, macOS and Linux alike.
PYTHON ?= python3

.PHONY: lab test quick system site bench soak pyodide

lab:
	$(PYTHON) kit.py lab
test:
	$(PYTHON) kit.py test
quick:
	$(PYTHON) kit.py test --quick
system:
	$(PYTHON) kit.py system
site:
	$(PYTHON) kit.py site
bench:
	$(PYTHON) kit.py bench
soak:
	$(PYTHON) kit.py soak
pyodide:  # fetches Pyodide into .cache/ when missing, then runs the checks inside it
	$(PYTHON) kit.py test --only pyodide
