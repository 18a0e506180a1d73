"""Operators: the schema YAML, its parser, the registry, and ``strided.ops.<namespace>``.

``strided.ops.aten.add.Tensor`` is an OpOverload; ``strided.ops.aten.add`` its packet.
"""


_SUBMODULES = frozenset({"bound", "schema", "registry", "composite"})


def __getattr__(name: str):
    if name.startswith("__") or name in _SUBMODULES:
        raise AttributeError(name)  # let the import system load the submodule
    from .registry import load, namespace

    load()
    ns = globals()[name] = namespace(name)  # later reads are plain module attributes
    return ns
