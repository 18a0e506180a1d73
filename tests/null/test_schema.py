"""The schema parser: strict, frozen, round-tripping; YAML errors name file:line."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
import yaml

from strided.ops import registry
from strided.ops.schema import SchemaError, parse_schema


@pytest.mark.parametrize("text", [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "noop() -> ()",
])
def test_round_trip(text):
    assert str(parse_schema(text)) == text


def test_every_yaml_schema_round_trips():
    entries = yaml.safe_load(open(registry.YAML_PATH))
    for e in entries:
        assert str(parse_schema(e["func"])) == e["func"]


def test_parsed_schema_is_frozen_and_typed():
    s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert s.name == "add" and s.overload == "Tensor"
    alpha = s.arguments[2]
    assert alpha.kwarg_only and alpha.default_value == 1 and alpha.type.base == "Scalar"
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.name = "sub"


def test_defaults_parse_to_python_values():
    s = parse_schema("f(Tensor self, int[] dims=[0, 1], float eps=1e-05, str? mode=None, int r=Mean) -> Tensor")
    assert [a.default_value for a in s.arguments[1:]] == [(0, 1), 1e-05, None, 1]


@pytest.mark.parametrize("bad, why", [
    ("add.Tensor(Tensor self, Tensor other) Tensor", "malformed schema"),
    ("add.Tensor(Tensr self) -> Tensor", "unknown type 'Tensr'"),
    ("add.Tensor(Tensor  self) -> Tensor", "unknown type .Tensor ."),
    ("add.Tensor(Tensor self, *,  Scalar a=1) -> Tensor", "canonical form"),
    ("add.Tensor(Tensor self, Tensor self) -> Tensor", "appears twice"),
    ("add.Tensor(Tensor self, *, *, Scalar a=1) -> Tensor", "'\\*' appears twice"),
    ("add.Tensor(Tensor self, Scalar alpha=bogus) -> Tensor", "unknown default value"),
    ("9add(Tensor self) -> Tensor", "malformed operator name"),
])
def test_malformed_schemas_are_rejected(bad, why):
    with pytest.raises(SchemaError, match=why):
        parse_schema(bad)


def _load_yaml_text(tmp_path, text):
    p = tmp_path / "native_functions.yaml"
    p.write_text(textwrap.dedent(text))
    ns = registry.Namespace("aten")  # a private namespace: nothing is bound into strided
    registry.parse_yaml(str(p), ns)
    return ns


@pytest.mark.parametrize("text, why", [
    ("- func: relu(Tensor self) -> Tensor\n  dispatch:\n    CPU: relu\n  tags: pointwise\n",
     r"native_functions.yaml:1: unknown key\(s\) \['tags'\]"),
    ("- func: relu(Tensor self) -> Tensor\n  dispatch:\n    CPU: relu\n"
     "- func: relu(Tensr self) -> Tensor\n  dispatch:\n    CPU: relu\n",
     "native_functions.yaml:4: unknown type"),
    ("- func: relu(Tensor self) -> Tensor\n  dispatch:\n    GPU: relu\n", "native_functions.yaml:1: unknown dispatch key 'GPU'"),
    ("- func: relu(Tensor self) -> Tensor\n  variants: functon\n  dispatch:\n    CPU: relu\n",
     "native_functions.yaml:1: unknown variant"),
    ("- func: relu(Tensor self) -> Tensor\n", "native_functions.yaml:1: relu has no dispatch entry"),
    ("- func: relu(Tensor self) -> Tensor\n  dispatch:\n    CPU: relu\n  autogen: relu.inplace\n",
     "native_functions.yaml:1: autogen 'relu.inplace'"),
    ("- func: relu(Tensor self) -> Tensor\n  python_module: special\n  dispatch:\n    CPU: relu\n",
     "native_functions.yaml:1: python_module must be nn, got 'special'"),
])
def test_yaml_errors_name_file_and_line(tmp_path, text, why):
    with pytest.raises(SchemaError, match=why):
        _load_yaml_text(tmp_path, text)


def test_python_module_nn_ops_are_not_bound_as_functions(tmp_path):
    p = tmp_path / "native_functions.yaml"
    p.write_text("- func: relu(Tensor self) -> Tensor\n  python_module: nn\n  dispatch:\n    CPU: relu\n"
                 "- func: silu(Tensor self) -> Tensor\n  dispatch:\n    CPU: silu\n")
    ns = registry.Namespace("aten")
    methods, functions = registry.parse_yaml(str(p), ns)
    assert sorted(functions) == ["silu"] and ns._get("relu") is not None


def test_autogen_derives_canonical_schemas(tmp_path):
    ns = _load_yaml_text(tmp_path, """\
        - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
          dispatch:
            CPU: add
          autogen: add_.Tensor, add.out
        """)
    assert str(ns._get("add_").Tensor.schema) == (
        "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert str(ns._get("add").out.schema) == (
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
