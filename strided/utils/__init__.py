"""Utilities: progress bars, the op profiler, environment info."""
