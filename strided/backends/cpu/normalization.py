"""CPU kernels: normalization (being written)."""
