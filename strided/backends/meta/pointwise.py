"""Meta functions: pointwise (being written)."""
