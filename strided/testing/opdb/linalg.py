"""OpInfos: linalg."""

OPS: list = []
