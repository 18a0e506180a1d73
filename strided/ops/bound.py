"""The bound operator namespace: one ``OpOverloadPacket`` per operator name.

Filled by ``strided.ops.registry`` when the YAML is loaded; ``strided.tensor`` and the public API
call operators through this module so that they never import the registry (no import cycle).
"""
