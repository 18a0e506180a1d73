"""CPU kernels: indexing (being written)."""
