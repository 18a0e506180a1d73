"""CPU kernels: reductions (being written)."""
