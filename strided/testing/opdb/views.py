"""OpInfos: views."""

OPS: list = []
