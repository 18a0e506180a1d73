"""CPU kernels: linalg (being written)."""
