"""Hopwise application wiring: settings, the command line, evaluation and benchmarks."""

__version__ = "0.1.0"
