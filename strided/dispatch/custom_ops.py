"""``strided.library.custom_op``: a new operator from a typed Python function, as ``torch.library.custom_op``.

    @strided.library.custom_op("mylib::numpy_sin", mutates_args=(), device_types="cpu")
    def numpy_sin(x: strided.Tensor) -> strided.Tensor:
        return strided.from_numpy(np.sin(x.numpy()))

    @numpy_sin.register_fake
    def _(x):
        return strided.empty_like(x)

    numpy_sin.register_autograd(lambda ctx, g: g * ctx.x.cos(), setup_context=lambda ctx, inputs, output:
                                setattr(ctx, "x", inputs[0]))

Note [Custom ops]
The decorator defines ``mylib::numpy_sin`` in the operator registry from the function's annotations (Note
[Schemas from annotations]), so ``strided.ops.mylib.numpy_sin`` is the same operator, and fills its kernel table
as torch's ``CustomOpDef`` does: the function at each backend key of ``device_types`` (all devices, as
CompositeExplicitAutograd, when None), a Meta kernel that runs the ``register_fake`` function or says none was
registered, and an Autograd kernel that always runs the backend kernel below autograd with grad mode off, inside
one generated ``autograd.Function`` (``GeneratedBackwardFor_<ns>_<name>_default``): with a registered formula its
``setup_context(ctx, inputs, output)`` sees the positional inputs with their defaults filled
(``keyword_only_inputs=`` too when the schema has keyword-only arguments) and its ``backward(ctx, *grads)``
returns one gradient per positional input (a list for a ``Tensor[]`` input; None for non-tensors); without one,
backward through the op raises torch's "no autograd formula was registered". Tensor lists in and out are
flattened for the Function and rebuilt around the user's functions. Kernels are called with torch's normal
argument form (Note [Python kernel arguments]); an output that is an input or shares an input's storage is
refused, as torch refuses it, since autograd and the version counters would treat the two as separate tensors.
``register_fake`` / ``register_kernel`` / ``register_autograd`` also take an operator made with
``Library.define`` (by name or OpOverload); strided's own (aten) operators are refused.
"""

from __future__ import annotations

from collections.abc import Callable

from ..tensor import Tensor
from .dispatcher import AUTOCAST_BIT, AUTOGRAD_BIT, OpOverload
from .infer_schema import infer_schema
from .keys import BACKEND_KEYS, DispatchKey
from .library import _RESERVED, define, get_op, python_kernel, schema_default
from .state import grad_mode
from .versions import INFERENCE_INPLACE, before_write

__all__ = ["CustomOpDef", "custom_op", "register_fake", "register_kernel", "register_autograd"]

_OPDEFS: dict[OpOverload, CustomOpDef] = {}


def _set_kernel(op: OpOverload, key: DispatchKey, fn) -> None:
    op._kernels[key] = fn
    op._cache.clear()


def _tensors(values) -> list:
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(t for t in v if isinstance(t, Tensor))
    return out


def _check_aliasing(op: OpOverload, args: tuple, kwargs: dict, result) -> None:
    """Note [Custom ops]: no output may be an input or view an input's memory."""
    outputs = _tensors(result if isinstance(result, (list, tuple)) else (result,))
    if not outputs:
        return
    inputs = _tensors((*args, *kwargs.values()))
    storages = {id(t._storage) for t in inputs}
    for o in outputs:
        if id(o._storage) in storages:
            raise RuntimeError(
                f"{op.name.split('::')[-1]}: The output of this custom operator (1) must not also be an input to "
                "this custom operator and (2) may not alias any inputs to this custom operator or other returns. "
                "The most common way to trigger this error is if we have y = custom_op(x) and y and x are the same "
                "Tensor. Please instead return a clone of the offending output tensor(s) (e.g. return x.clone()) "
                "or refactor the custom operator to not return y.")


def _backend_kernel(op: OpOverload, fn):
    """``fn`` behind torch's normal argument form, the aliasing check, and a version bump of each tensor of each
    ``Tensor(a!)`` argument (torch's ADInplaceOrView kernel counts the op's own write: Note [Version counter])."""
    normal = python_kernel(op, fn)
    written = tuple((i, a.name, a.type.is_list) for i, a in enumerate(op.schema.arguments)
                    if a.annotation is not None and a.annotation.is_write)

    def kernel(*args, **kwargs):
        targets = []
        for i, name, is_list in written:
            value = args[i] if i < len(args) else kwargs.get(name)
            targets.extend(t for t in (value if is_list and value is not None else (value,)) if isinstance(t, Tensor))
        for t in targets:
            if t._storage.inference and not grad_mode.inference:
                raise RuntimeError(INFERENCE_INPLACE)  # Note [Inference tensors]
            if before_write.hook is not None:
                before_write.hook(t)
        result = normal(*args, **kwargs)
        _check_aliasing(op, args, kwargs, result)
        for t in targets:
            t._storage._version += 1
        return result

    kernel.__name__ = getattr(fn, "__name__", "custom_kernel")
    return kernel


def _device_keys(device_types) -> list[DispatchKey]:
    if device_types is None:
        return [DispatchKey.CompositeExplicitAutograd]
    names = (device_types,) if isinstance(device_types, str) else tuple(device_types)
    keys = []
    for name in names:
        key = BACKEND_KEYS.get(name) if isinstance(name, str) else None
        if key is None:
            raise ValueError(f"register_kernel: unknown device type {name!r}; strided's device types are "
                             f"{', '.join(sorted(BACKEND_KEYS))}")
        keys.append(key)
    return keys


class _Metadata:
    """What the generated Function needs besides its flat tensor arguments (torch's ``Metadata``)."""

    __slots__ = ("keyset", "kwonly", "spec", "returns_list", "single")

    def __init__(self, keyset: int, kwonly: dict, spec: tuple):
        self.keyset, self.kwonly, self.spec = keyset, kwonly, spec
        self.returns_list = self.single = False


def _flatten(args: list) -> tuple[list, tuple]:
    flat, spec = [], []
    for a in args:
        if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a):
            flat.extend(a)
            spec.append(len(a))
        else:
            flat.append(a)
            spec.append(None)
    return flat, tuple(spec)


def _unflatten(flat, spec) -> list:
    out, i = [], 0
    for n in spec:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return out


class _AutogradKernel:
    """The Autograd kernel of a custom op (Note [Custom ops]); specialized per keyset (Note [Autograd redispatch])."""

    def __init__(self, opdef: CustomOpDef):
        from ..autograd.function import Function

        self.opdef = opdef
        op = opdef._opoverload
        schema = op.schema
        self.positional = [a for a in schema.arguments if not a.kwarg_only]
        self.keyword_only = [a for a in schema.arguments if a.kwarg_only]
        self.is_out = schema.is_out
        name = f"GeneratedBackwardFor_{op.namespace}_{schema.name}_{op.overload_name}"
        self.function = type(name, (Function,), {"forward": staticmethod(self._forward),
                                                  "backward": staticmethod(self._backward)})

    def for_keyset(self, keyset: int):
        below = keyset & ~(AUTOGRAD_BIT | AUTOCAST_BIT)
        return lambda *args, **kwargs: self(below, args, kwargs)

    def __call__(self, below: int, args: tuple, kwargs: dict):
        op = self.opdef._opoverload
        positional = list(args)
        for a in self.positional[len(args):]:
            positional.append(kwargs.pop(a.name) if a.name in kwargs else _default(a))
        kwonly = {a.name: kwargs.pop(a.name) if a.name in kwargs else _default(a) for a in self.keyword_only}
        if kwargs:
            raise TypeError(f"{op.name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
        needs_grad = grad_mode.enabled and any(t._requires_grad for t in _tensors(positional))
        if self.is_out and needs_grad:
            raise RuntimeError(f"{op.schema.name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        if not needs_grad:
            prev = grad_mode.enabled
            grad_mode.enabled = False
            try:
                return op.redispatch(below, *positional, **kwonly)
            finally:
                grad_mode.enabled = prev
        flat, spec = _flatten(positional)
        meta = _Metadata(below, kwonly, spec)
        result = self.function.apply(*flat, meta)
        if meta.returns_list:
            return list(result)
        return result

    def _forward(self, ctx, *flat):
        meta = flat[-1]
        args = _unflatten(flat[:-1], meta.spec)
        result = self.opdef._opoverload.redispatch(meta.keyset, *args, **meta.kwonly)
        setup = self.opdef._setup_context_fn
        if setup is not None:
            if self.keyword_only:
                setup(ctx=ctx, inputs=tuple(args), keyword_only_inputs=meta.kwonly, output=result)
            else:
                setup(ctx=ctx, inputs=tuple(args), output=result)
        ctx._custom_op_metadata = meta
        if isinstance(result, list):
            meta.returns_list = True
            return tuple(result)
        return result

    def _backward(self, ctx, *grads):
        op = self.opdef._opoverload
        backward = self.opdef._backward_fn
        if backward is None:
            raise RuntimeError(f"Trying to backward through {op.name.replace('::', '.')}.{op.overload_name} but no "
                               "autograd formula was registered. Please use register_autograd to add one.")
        meta = ctx._custom_op_metadata
        needs = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(_unflatten(needs[:-1], meta.spec))
        try:
            result = backward(ctx, list(grads)) if meta.returns_list else backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.positional)
        if len(result) != n:
            raise RuntimeError(
                f"The backward formula for {op.name.replace('::', '.')}.{op.overload_name} returned an incorrect "
                f"number of gradients (expected {n}, got {len(result)}). Expected one gradient for each forward "
                "input, or for each positional input to the operator. Use None for inputs that do not require a "
                "gradient.")
        flat = []
        for g, size in zip(result, meta.spec):
            if size is None:
                flat.append(g)
            elif g is None:
                flat.extend([None] * size)
            elif isinstance(g, (list, tuple)) and len(g) == size:
                flat.extend(g)
            else:
                raise RuntimeError(f"The backward formula for {op.name}: the gradient of a list of {size} tensors "
                                   f"must be a list of {size} gradients (or None), got {type(g).__name__}")
        return (*flat, None)


def _default(arg):
    if not arg.has_default:
        raise TypeError(f"missing a required argument: '{arg.name}'")
    return schema_default(arg)


class CustomOpDef:
    """The operator ``custom_op`` made: call it like its function; add kernels, a fake (Meta) function and a
    backward formula with its ``register_*`` methods (Note [Custom ops])."""

    def __init__(self, op: OpOverload, init_fn: Callable | None):
        self._opoverload = op
        self._namespace = op.namespace
        self._name = op.schema.name
        self._qualname = op.name
        self._init_fn = init_fn
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._autograd_installed = False
        if init_fn is not None:
            self.__name__ = getattr(init_fn, "__name__", self._name)
            self.__doc__ = getattr(init_fn, "__doc__", None)
            self._install_fake()
            self._install_autograd()
        _OPDEFS[op] = self

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _install_fake(self) -> None:
        op = self._opoverload
        trivial = not op.schema.returns  # an op that only mutates returns nothing: its fake needs no function

        def fake(*args, **kwargs):
            if self._abstract_fn is None:
                if trivial:
                    return None
                name = getattr(self._init_fn, "__name__", self._name)
                raise RuntimeError(f"There was no fake impl registered for {self}. This is necessary for meta "
                                   f"tensors (and shape-only tracing) to work. Please use `{name}.register_fake` "
                                   "to add an fake impl.")
            return self._abstract_fn(*args, **kwargs)

        _set_kernel(op, DispatchKey.Meta, python_kernel(op, fake))

    def _install_autograd(self) -> None:
        if not self._autograd_installed:
            _set_kernel(self._opoverload, DispatchKey.Autograd, _AutogradKernel(self))
            self._autograd_installed = True

    def register_kernel(self, device_types, fn: Callable | None = None, /) -> Callable:
        """Make ``fn`` the kernel for ``device_types`` ("cpu", "cuda", "meta", a sequence, or None for all);
        usable as a decorator."""
        keys = _device_keys(device_types)

        def register(f):
            if not callable(f):
                raise TypeError(f"register_kernel: expected a function, got {type(f).__name__}")
            for key in keys:
                _set_kernel(self._opoverload, key, _backend_kernel(self._opoverload, f))
            return f

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable, /) -> Callable:
        """The function that gives the outputs' shapes, dtypes and devices from meta inputs (the Meta kernel)."""
        if not callable(fn):
            raise TypeError(f"register_fake: expected a function, got {type(fn).__name__}")
        if self._init_fn is None and self._abstract_fn is None:
            self._install_fake()
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
        """The backward formula ``backward(ctx, *grads)``, with ``setup_context(ctx, inputs, output)`` saving what
        it needs (Note [Custom ops])."""
        schema = self._opoverload.schema
        if any(a.annotation is not None and a.annotation.is_write for a in schema.arguments) or any(
                r.annotation is not None for r in schema.returns):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{schema}. Please create a functional operator and register an autograd formula "
                               "for that.")
        if not callable(backward):
            raise TypeError(f"register_autograd: expected backward to be a function, got {type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError("register_autograd: expected setup_context to be a function or None, got "
                            f"{type(setup_context).__name__}")
        self._backward_fn = backward
        self._setup_context_fn = setup_context
        self._install_autograd()


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args, device_types=None,
              schema: str | None = None, tags=None):
    """Define operator ``"namespace::name"`` from ``fn`` (Note [Custom ops]); a decorator when ``fn`` is None."""
    if not isinstance(name, str) or name.count("::") != 1 or not all(name.split("::")) or "." in name:
        raise ValueError(f"custom_op: expected a name of the form 'namespace::op_name' (no overload), got {name!r}")
    namespace = name.split("::")[0]
    if namespace in _RESERVED:
        raise ValueError(f"custom_op: the '{namespace}' namespace is reserved for strided's own operators")

    def make(f):
        if not callable(f):
            raise TypeError(f"custom_op: expected a function, got {type(f).__name__}")
        _device_keys(device_types)  # refused before the operator exists: a failed definition leaves nothing behind
        if schema is not None and not (isinstance(schema, str) and schema.lstrip().startswith("(")):
            raise ValueError(f"custom_op: schema must be the signature without a name, '(Tensor x) -> Tensor', "
                             f"got {schema!r}")
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        op = define(f"{name}{text}")
        if any(a.kwarg_only and a.type.base == "Tensor" for a in op.schema.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name}{text}")
        opdef = CustomOpDef(op, f)
        opdef.register_kernel(device_types, f)
        return opdef

    return make if fn is None else make(fn)


def _opdef(op, caller: str) -> CustomOpDef:
    """The CustomOpDef of ``op`` (a CustomOpDef, an OpOverload or a qualified name); ``Library.define``'s
    operators get one on first use."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, str):
        op = get_op(op)
    if not isinstance(op, OpOverload):
        raise TypeError(f"{caller}: expected an operator name, OpOverload or CustomOpDef, got {type(op).__name__}")
    found = _OPDEFS.get(op)
    if found is not None:
        return found
    if op.namespace in _RESERVED:
        raise ValueError(f"{caller}: {op.name} is one of strided's own operators (native_functions.yaml); this "
                         "takes operators made with strided.library.custom_op or Library.define")
    return CustomOpDef(op, None)


def register_fake(op, fn: Callable | None = None, /):
    """torch.library.register_fake: the Meta kernel of a custom or library-defined operator; a decorator when
    ``fn`` is None."""
    opdef = _opdef(op, "register_fake")
    return opdef.register_fake if fn is None else opdef.register_fake(fn)


def register_kernel(op, device_types, fn: Callable | None = None, /):
    """torch.library.register_kernel: ``fn`` as the operator's kernel for ``device_types``."""
    return _opdef(op, "register_kernel").register_kernel(device_types, fn)


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None) -> None:
    """torch.library.register_autograd: the operator's backward formula (Note [Custom ops])."""
    _opdef(op, "register_autograd").register_autograd(backward, setup_context=setup_context)

