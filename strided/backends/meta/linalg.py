"""Meta functions: linalg (being written)."""
