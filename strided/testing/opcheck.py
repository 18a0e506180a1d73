"""``strided.library.opcheck``: torch.library.opcheck's checks that an operator was registered correctly.

Note [Operator checks]
``opcheck(op, args, kwargs)`` runs the operator on sample arguments and checks what ``gradcheck`` does not: that
its registrations tell the truth. As torch's (``torch/testing/_internal/optests``):

* ``test_schema``: no argument the schema does not mark written (``Tensor(a!)``) changed value or version, and no
  output shares memory with an input the schema does not alias to it;
* ``test_autograd_registration``: with an input that requires grad, an operator without an Autograd (or
  CompositeImplicitAutograd) kernel must not return outputs that require grad -- that means its backend kernel
  called differentiable ops, whose graph bypasses the operator (register the formula at the Autograd key:
  ``register_autograd``);
* ``test_faketensor``: the operator on meta copies of the tensors (its fake function: ``register_fake``) gives
  outputs of the shapes and dtypes the real kernel gives.

torch also runs ``test_aot_dispatch_*`` (the operator under torch.compile); strided has no compiler (Note [No
compiler]), so those names are refused rather than reported as passed. Each test that fails raises
``OpCheckError`` (or, with ``raise_exception=False``, is returned as its exception).
"""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["opcheck", "OpCheckError", "DEFAULT_TEST_UTILS"]

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")
_COMPILER_TESTS = ("test_aot_dispatch_static", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """A check of ``opcheck`` failed (torch's ``OpCheckError``)."""


def _leaves(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_leaves(v))
        elif isinstance(v, dict):
            out.extend(_leaves(v.values()))
        else:
            out.append(v)
    return out


def _tensor_leaves(values) -> list[Tensor]:
    return [v for v in _leaves(values) if isinstance(v, Tensor)]


def _map_tensors(values, fn):
    if isinstance(values, Tensor):
        return fn(values)
    if isinstance(values, (list, tuple)):
        return type(values)(_map_tensors(v, fn) for v in values)
    if isinstance(values, dict):
        return {k: _map_tensors(v, fn) for k, v in values.items()}
    return values


def _same_values(a: Tensor, b: Tensor) -> bool:
    from .. import ops

    if a.device.type == "meta" or a.shape != b.shape:
        return a.shape == b.shape
    equal = ops.aten.eq.Tensor(a, b)
    if a.dtype.is_floating_point or a.dtype.is_complex:
        equal = equal | (a.isnan() & b.isnan())
    return bool(equal.all())


def _arguments(op, args: tuple, kwargs: dict) -> list[tuple]:
    """(schema argument, value) of each argument given."""
    schema_args = op.schema.arguments
    pairs = list(zip(schema_args, args))
    by_name = {a.name: a for a in schema_args}
    pairs += [(by_name[k], v) for k, v in kwargs.items() if k in by_name]
    return pairs


def check_schema(op, args: tuple, kwargs: dict) -> None:
    """``test_schema`` (Note [Operator checks])."""
    from ..autograd.grad_mode import no_grad

    pairs = _arguments(op, args, kwargs)
    before = [(arg, t, t.detach().clone(), t._version) for arg, value in pairs for t in _tensor_leaves([value])]
    with no_grad():
        result = op(*args, **kwargs)
    for arg, t, copy, version in before:
        written = arg.annotation is not None and arg.annotation.is_write
        if not written and (t._version != version or not _same_values(t.detach(), copy)):
            raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was mutated")
    aliased = {arg.name for arg, _ in pairs if arg.annotation is not None}
    for out in _tensor_leaves([result]):
        for arg, t, _, _ in before:
            if out._storage is t._storage and arg.name not in aliased:
                raise RuntimeError(f"Argument {arg.name} is not defined to alias output but was aliasing")


def check_autograd_registration(op, args: tuple, kwargs: dict) -> None:
    """``test_autograd_registration`` (Note [Operator checks])."""
    from ..dispatch.keys import DispatchKey

    leaves = _leaves([args, kwargs])
    tensors = [t for t in leaves if isinstance(t, Tensor)]
    if not any(t.requires_grad for t in tensors):
        raise RuntimeError("autograd_registration_check: no inputs have requires_grad=True so we are unable to "
                           "actually perform this test. Please pass inputs that do require grad.")
    devices = {t.device.type for t in tensors}
    if not devices <= {"cpu", "cuda"}:
        raise NotImplementedError(f"autograd_registration_check: NYI devices other than CPU/CUDA, got {devices}")
    if op.has_kernel(DispatchKey.Autograd) or op.has_kernel(DispatchKey.CompositeImplicitAutograd):
        return
    inputs = {id(v) for v in leaves}
    outputs = _tensor_leaves([op(*args, **kwargs)])
    if any(o.requires_grad and id(o) not in inputs for o in outputs):
        raise AssertionError(
            f"{op.name}: at least one output of this operator has requires_grad=True but the operator does not "
            "have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that "
            "you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
            "silently incorrect results. If your operator consists of regular PyTorch operations, consider not "
            "using an operator at all or registering your operator as CompositeImplicitAutograd. If you have an "
            "autograd.Function registered to a backend (CPU/CUDA) key, the correct location for it is the "
            "Autograd key.")


def check_fake(op, args: tuple, kwargs: dict) -> None:
    """``test_faketensor`` (Note [Operator checks])."""
    from .. import empty_strided
    from ..autograd.grad_mode import no_grad

    def meta(t: Tensor) -> Tensor:
        return empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")

    with no_grad():
        fake = op(*_map_tensors(args, meta), **_map_tensors(kwargs, meta))
        real = op(*_map_tensors(args, lambda t: t.detach().clone()),
                  **_map_tensors(kwargs, lambda t: t.detach().clone()))
    fakes, reals = _leaves([fake]), _leaves([real])
    name = f"{op.name.replace('::', '.')}.{op.overload_name}"
    if len(fakes) != len(reals):
        raise RuntimeError(f"When comparing the output of {name} on meta and concrete Tensors, found {len(fakes)} "
                           f"outputs from the fake function and {len(reals)} from the kernel")
    for f, r in zip(fakes, reals):
        if isinstance(f, Tensor) != isinstance(r, Tensor):
            raise RuntimeError(f"When comparing the output of {name} on meta and concrete Tensors, found a "
                               f"{type(f).__name__} where the kernel returned a {type(r).__name__}")
        if not isinstance(r, Tensor):
            continue
        if f.shape != r.shape:
            raise RuntimeError(f"When comparing the output of {name} on meta and concrete Tensors, found mismatched "
                               f"tensor metadata: Shapes {r.shape} and {f.shape} are not equal!")
        if f.dtype != r.dtype:
            raise RuntimeError(f"When comparing the output of {name} on meta and concrete Tensors, found mismatched "
                               f"tensor metadata: Dtypes {r.dtype} and {f.dtype} are not equal!")


_TESTS = {"test_schema": check_schema, "test_autograd_registration": check_autograd_registration,
          "test_faketensor": check_fake}


def opcheck(op, args: tuple, kwargs: dict | None = None, *, test_utils=DEFAULT_TEST_UTILS,
            raise_exception: bool = True, rtol: float | None = None, atol: float | None = None) -> dict:
    """Check ``op``'s registrations on sample arguments (Note [Operator checks]); ``{test: "SUCCESS" | error}``."""
    from ..dispatch.custom_ops import CustomOpDef
    from ..dispatch.dispatcher import OpOverload
    from ..dispatch.packet import OpOverloadPacket

    if (rtol is None) != (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    kwargs = {} if kwargs is None else kwargs
    if isinstance(op, CustomOpDef):
        op = op._opoverload
    if isinstance(op, OpOverloadPacket):
        if len(op.overloads) != 1:
            raise ValueError(f"opcheck(op, ...): {op.name} has overloads {sorted(op.overloads)}; pass one of them, "
                             "e.g. strided.ops.aten.add.Tensor")
        op = next(iter(op.overloads.values()))
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of OpOverload, e.g. strided.ops.aten.sin.default, "
                         f"got {type(op)}")
    if not isinstance(args, tuple):
        raise TypeError(f"opcheck(op, args, ...): args must be a tuple, got {type(args).__name__}")
    if test_utils == "ALL":
        test_utils = tuple(_TESTS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(_TESTS):
        compiler = set(test_utils) & set(_COMPILER_TESTS) if isinstance(test_utils, (tuple, list)) else set()
        why = (f"; {sorted(compiler)} need a compiler, which strided does not have (Note [No compiler])"
               if compiler else "")
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{tuple(_TESTS)} but it was not{why}")
    results = {}
    for name in test_utils:
        try:
            _TESTS[name](op, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for stack trace)") from ex
            results[name] = ex
    return results
