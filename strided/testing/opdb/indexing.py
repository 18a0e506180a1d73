"""OpInfos: indexing."""

OPS: list = []
