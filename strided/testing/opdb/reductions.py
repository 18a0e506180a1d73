"""OpInfos: reductions."""

OPS: list = []
