"""OpInfos: factories."""

OPS: list = []
