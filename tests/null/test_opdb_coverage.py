"""The op database covers every overload in the YAML (and names nothing that isn't there)."""

from __future__ import annotations

import strided as st  # noqa: F401 - loads the registry
from strided.ops import registry
from strided.testing.opdb import op_db


def _all_overloads():
    aten = registry.load()
    names = set()
    for packet in aten:
        for op in packet._ordered:
            names.add(op.schema.qualified_name)
    return names


def test_every_yaml_overload_has_an_opinfo():
    covered = set()
    for info in op_db():
        covered.add(info.name)
        covered.update(info.covers)
    missing = sorted(_all_overloads() - covered)
    assert not missing, f"overloads without an OpInfo: {missing}"


def test_opinfos_name_real_overloads():
    known = _all_overloads()
    bogus = sorted({n for info in op_db() for n in (info.name, *info.covers)} - known)
    assert not bogus, f"OpInfos naming overloads that are not in the YAML: {bogus}"
