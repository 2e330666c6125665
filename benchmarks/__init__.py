"""Benchmarks: Parley side by side with its peers, in one run."""
