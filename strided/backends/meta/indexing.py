"""Meta functions: indexing (being written)."""
