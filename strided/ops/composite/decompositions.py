"""Decompositions (being written)."""
