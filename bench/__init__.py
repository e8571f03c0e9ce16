"""Benchmarks of mini_agent, side by side with what readers would use instead.

Run with `make bench` (= `python -m bench` from the repository root). Not part of
`make test`: timings depend on the machine, so the figures live in `bench/README.md`.
"""
