"""Joining ops composed from others (stack)."""
