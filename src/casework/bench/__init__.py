"""Benchmarks: measured figures for the runtime and the bundled local model."""
