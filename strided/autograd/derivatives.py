"""Load ``strided/ops/derivatives.yaml``: derivative formulas as data beside the schema.

Note [derivatives.yaml]
torch's format, strictly checked (as torchgen's ``load_derivatives``)::

    - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
      self: grad * other
      other: grad * self

``name`` must be a schema of ``native_functions.yaml`` exactly as written there. Every other key
names a Tensor argument (``Tensor``, ``Tensor?`` or ``Tensor[]``) and holds a Python expression
for that input's gradient over ``grad`` (the gradient of the output; ``grads[i]`` for the i-th of
several outputs, undefined ones filled with zeros), the schema's argument names, ``result`` (the
output; ``result0``, ``result1``... or the return names when there are several) and the helpers
of ``strided.autograd.functions`` (and every operator, by name). ``output_differentiability``
lists, per output, whether it gets a gradient. A ``Tensor[]`` input's formula returns a list.
As in torch, one formula may serve several inputs (``input, weight, bias: f(...)``): it returns a
tuple with one gradient (or None) per named input and may read ``grad_input_mask``, a tuple of
bools saying which of them need a gradient; intermediate values are then computed once.
Gradients are reduced to each input's shape and cast to its dtype by the engine, so formulas
never handle broadcasting. A formula wrapped in ``handle_r_to_c(...)`` (one input, the whole
formula) may return a complex gradient for a real input: the engine keeps its real part (Note
[handle_r_to_c]). Every error names ``derivatives.yaml:<line>``.

Only what the formulas read is saved: an argument used only through ``.shape``, ``.dtype``,
``.device``, ``.ndim``, ``.dim()``, ``.size()``, ``.stride()``, ``.numel()`` or ``sizes(...)`` is saved as its
metadata (``Geometry``), so the forward's tensors are not kept alive for that.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import os

import yaml

from ..ops.schema import SchemaError

__all__ = ["DerivativeInfo", "load_derivatives", "DERIVATIVES_PATH", "formula_namespace"]

DERIVATIVES_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops", "derivatives.yaml")
_META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "dim", "size", "numel", "_sizes", "stride", "_strides"})


@dataclasses.dataclass
class DerivativeInfo:
    """The formulas of one overload, compiled into one backward function."""

    op: object  # the OpOverload
    where: str
    inputs: tuple  # (arg_name, position, kind) per formula; kind: "tensor" | "list"
    saved: tuple  # (name, position or None for outputs, how): how in "value" | "tensor" | "geometry"
    output_differentiability: tuple
    num_outputs: int
    fn: object  # backward(grads, needs, *saved values) -> tuple of grads (lists for Tensor[] inputs)
    uses_result: bool
    saves_self: bool
    r_to_c: tuple = ()  # per input: its formula was wrapped in handle_r_to_c (Note [handle_r_to_c])
    # per saved entry (tensor bits, metadata bits): bit k set when input k's formula reads the entry as a
    # tensor / only through its metadata (Note [Saved when needed])
    saved_users: tuple = ()

    @property
    def name(self) -> str:
        return self.op.schema.qualified_name


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Records each mapping's line, as registry's loader, on libyaml's parser when present
    (about 20x faster: this file is parsed at every ``import strided``)."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def formula_namespace() -> dict:
    """Names a formula may call: every operator, then the helpers (which take precedence)."""
    from ..ops import bound
    from . import (
        functions,
        functions_activations,
        functions_complex,
        functions_conv,
        functions_fft,
        functions_nn,
        functions_norm,
        functions_recurrent,
        functions_ties,
        functions_views,
    )

    ns = {k: v for k, v in vars(bound).items() if not k.startswith("_")}
    for module in (functions, functions_activations, functions_complex, functions_conv, functions_fft, functions_nn,
                   functions_norm, functions_recurrent, functions_ties, functions_views):
        ns.update({k: getattr(module, k) for k in module.__all__})
    from . import functions_eig  # linalg_eig_backward (Note [eig gradient])
    ns.update({k: getattr(functions_eig, k) for k in functions_eig.__all__})
    ns["__builtins__"] = builtins
    return ns


def _return_names(schema) -> tuple:
    rets = schema.returns
    if len(rets) == 1:
        return ("result",)
    return tuple(r.name or f"result{i}" for i, r in enumerate(rets))


def _uses(tree: ast.AST, names: set) -> dict:
    """name -> True when used only as ``name.<metadata attribute>``, False when used otherwise."""
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    out: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            parent = parents.get(node)
            meta_only = (isinstance(parent, ast.Attribute) and parent.attr in _META_ATTRS) or (
                isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                and parent.func.id in ("sizes", "geometry"))
            out[node.id] = out.get(node.id, True) and meta_only
    return out


# Note [handle_r_to_c]
# torch's formulas for ops that mix real and complex operands (add, sub, mul, div, _to_copy) wrap
# an input's gradient in ``handle_r_to_c(self.scalar_type(), g)``: the real part of ``g`` when the
# input is real and ``g`` complex. Here the wrapper is stripped when the formula is compiled and
# recorded per input, and the engine takes the real part where the gradient's dtype differs from
# the input's (its slow path, already taken for a dtype cast): a real op's backward runs no extra
# code and saves no dtype. An unwrapped formula that returns a complex gradient for a real input
# gets torch's validate_outputs error, as in torch.
def _strip_r_to_c(tree: ast.Expression, where: str, key: str):
    """``handle_r_to_c(expr)`` -> (``expr``'s tree and source, True); anything else -> (tree, None, False)."""
    body = tree.body
    if not (isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.func.id == "handle_r_to_c"):
        return tree, None, False
    if len(body.args) != 1 or body.keywords or "," in key:
        raise SchemaError(f"{where}: handle_r_to_c(...) takes the whole formula of one input ('{key}')")
    inner = ast.Expression(body=body.args[0])
    return inner, ast.unparse(inner), True


def _compile(op, entry: dict, where: str, namespace: dict) -> DerivativeInfo:
    schema = op.schema
    args = {a.name: (i, a) for i, a in enumerate(schema.arguments)}
    ret_names = _return_names(schema)
    diff = entry.pop("output_differentiability", None)
    if diff is None:
        diff = tuple(r.type.base == "Tensor" for r in schema.returns)
    elif not isinstance(diff, list) or len(diff) != len(schema.returns):
        raise SchemaError(f"{where}: output_differentiability must list one bool per return of "
                          f"{schema.qualified_name}")
    inputs, exprs, r_to_c = [], [], []  # exprs: (source, tree, number of inputs it computes)
    grad_names = {"grad", "grads"}
    for key, expr in entry.items():
        names = [k.strip() for k in key.split(",")]
        for name in names:
            if name not in args:
                raise SchemaError(f"{where}: '{name}' is not an argument of {schema.qualified_name}")
            if args[name][1].type.base != "Tensor":
                raise SchemaError(f"{where}: '{name}' of {schema.qualified_name} is not a Tensor argument")
            if any(name == k for k, _, _ in inputs):
                raise SchemaError(f"{where}: second formula for '{name}'")
        try:
            tree = ast.parse(str(expr), mode="eval")
        except SyntaxError as e:
            raise SchemaError(f"{where}: formula for '{key}' is not a Python expression: {e.msg}") from None
        tree, stripped, wrapped = _strip_r_to_c(tree, where, key)
        expr = stripped if wrapped else expr
        bound = {n.id for c in ast.walk(tree) if isinstance(c, ast.comprehension)
                 for n in ast.walk(c.target) if isinstance(n, ast.Name)}
        if len(names) > 1:
            bound.add("grad_input_mask")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                known = node.id in args or node.id in ret_names or node.id in grad_names or node.id in bound
                if not known and node.id not in namespace and not hasattr(builtins, node.id):
                    raise SchemaError(f"{where}: formula for '{key}' uses unknown name '{node.id}'")
        for name in names:
            arg = args[name][1]
            inputs.append((name, args[name][0], "list" if arg.type.is_list else "tensor"))
            r_to_c.append(wrapped)
        exprs.append((str(expr), tree, len(names)))
    # what to save: arguments and outputs the formulas read
    saveable = set(args) | set(ret_names)
    usage: dict = {}
    for _, tree, _ in exprs:
        for name, meta_only in _uses(tree, saveable).items():
            usage[name] = usage.get(name, True) and meta_only
    saved = []
    for name in sorted(usage, key=lambda n: (n not in args, n)):
        if name in args:
            i, arg = args[name]
            how = ("geometry" if usage[name] else "tensor") if arg.type.base == "Tensor" else "value"
            saved.append((name, i, how))
        else:
            saved.append((name, None, "geometry" if usage[name] else "tensor"))
    # Note [Saved when needed]: which inputs' formulas read each saved entry (a formula of several inputs
    # runs when any of them needs a gradient, so it reads its names for each)
    users: dict = {}
    k = 0
    for _, tree, count in exprs:
        bits = ((1 << count) - 1) << k
        for name, meta_only in _uses(tree, saveable).items():
            tensor_bits, meta_bits = users.get(name, (0, 0))
            users[name] = (tensor_bits, meta_bits | bits) if meta_only else (tensor_bits | bits, meta_bits)
        k += count
    saved_users = tuple(users[name] for name, _, _ in saved)
    params = ", ".join(["grads", "needs"] + [s[0] for s in saved])
    lines, parts, k = [f"def backward({params}):", "    grad = grads[0]"], [], 0
    for j, (src, _, count) in enumerate(exprs):
        if count == 1:
            parts.append(f"(({src}) if needs[{k}] else None)")
        else:  # torch's multi-input formula: one call returns a tuple, told which inputs need grad
            mask = ", ".join(f"needs[{k + m}]" for m in range(count))
            lines.append(f"    grad_input_mask = ({mask})")
            lines.append(f"    _r{j} = ({src}) if True in grad_input_mask else {(None,) * count!r}")
            parts.extend(f"_r{j}[{m}]" for m in range(count))
        k += count
    body = ", ".join(parts)
    lines.append(f"    return ({body}{',' if parts else ''})")
    source = "\n".join(lines) + "\n"
    local: dict = {}
    exec(compile(source, where, "exec"), namespace, local)  # noqa: S102 - formulas from our own YAML
    uses_result = any(s[1] is None for s in saved)
    saves_self = any(s[0] == "self" and s[2] == "tensor" for s in saved)
    return DerivativeInfo(op, where, tuple(inputs), tuple(saved), tuple(bool(d) for d in diff),
                          len(schema.returns), local["backward"], uses_result, saves_self, tuple(r_to_c),
                          saved_users)


def load_derivatives(path: str = DERIVATIVES_PATH) -> dict:
    """Parse and check the YAML; return {OpOverload: DerivativeInfo}."""
    from ..ops.registry import load

    aten = load()
    by_schema = {str(op.schema): op for packet in aten for op in packet._ordered}
    fname = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        entries = yaml.load(f, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    namespace = formula_namespace()
    infos: dict = {}
    for entry in entries or ():
        entry = dict(entry)
        where = f"{fname}:{entry.pop('__line__', '?')}"
        name = entry.pop("name", None)
        if name is None:
            raise SchemaError(f"{where}: entry has no 'name'")
        op = by_schema.get(name)
        if op is None:
            raise SchemaError(f"{where}: '{name}' is not a schema in native_functions.yaml")
        if op in infos:
            raise SchemaError(f"{where}: second entry for {op.schema.qualified_name}")
        infos[op] = _compile(op, entry, where, namespace)
    return infos
