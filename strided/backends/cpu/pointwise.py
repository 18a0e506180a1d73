"""CPU kernels: pointwise (being written)."""
