"""OpInfos: normalization."""

OPS: list = []
