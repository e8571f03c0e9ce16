"""The kit's maintenance scripts (run with `python kit.py ...`; importable by the tests)."""
