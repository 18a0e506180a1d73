"""Meta functions: reductions (being written)."""
