"""OpInfos: pointwise."""

OPS: list = []
