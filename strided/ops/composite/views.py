"""View ops (being written)."""
