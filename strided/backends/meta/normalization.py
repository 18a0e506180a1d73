"""Meta functions: normalization (being written)."""
