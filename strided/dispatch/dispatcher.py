"""The dispatcher: ``OpOverload`` (one schema, a kernel per key); packets (a name) are in ``packet.py``, the kernel
tables it resolves from in ``kernel_tables.py``.

Calling an overload computes a *keyset* from its arguments (the backend of the tensors' device,
plus the Autograd bit when grad mode is on and an input requires grad), finds the kernel for that
keyset once, caches it, and calls it with the arguments unchanged.

Note [Dispatch order]
Equivalent to torch's ``computeDispatchTableEntryWithDebug`` (and ``torch/_ops.py``'s
``resolve_key``), for the keys strided has:
  1. Autocast, when the keyset has the Autocast bit and the op has an Autocast kernel (above
     Autograd, as torch's AutocastCPU/AutocastCUDA keys: the casts it inserts are recorded by autograd);
  2. Autograd, when the keyset has the Autograd bit and the op has an Autograd kernel;
  3. the backend's own kernel (CUDA, CPU or Meta);
  4. CompositeExplicitAutograd: one kernel for every backend, written in terms of other ops;
  5. CompositeImplicitAutograd: a decomposition (which also serves Autograd);
  6. otherwise the error torch raises: "Could not run 'aten::X' with arguments from the 'CUDA'
     backend ...".
Registering a kernel clears the op's cache; registering twice for one key is an error.
"""

from __future__ import annotations

from ..device import CPU, device
from .kernel_tables import (  # noqa: F401 - re-exported
    _LOAD_ERRORS,
    BACKEND_KERNEL_WRAPPERS,
    KERNEL_MODULES,
    KERNEL_TABLES,
    _load_table,
    _tracing,
    backend_loaded,
    clear_all_caches,
)
from .keys import AUTOCAST_BIT, AUTOGRAD_BIT, BACKEND_KEYS, BACKENDS, COMPLEX_BIT, DispatchKey
from .state import autocast_state, grad_mode
from .versions import bump_list_versions, bump_version

__all__ = ["OpOverload", "grad_mode", "autocast_state", "NotImplementedForBackend"]

# With `device_check: NoCheck` (copy_), the kernel of the first of these device types runs.
_CROSS_DEVICE_PREFERENCE = {"cuda": 0, "meta": 1, "cpu": 2}
_SCALAR_CLASSES = frozenset({int, float, bool, complex})  # the fast path's numbers; others go to _keyset

# Note [Explicit device keys]
# A factory (an op with a Device argument and no Tensor argument: empty(n, device="cuda")) is
# dispatched on that argument alone, and its backend key depends only on the value, so the key is
# memoized per value: one dict lookup instead of parsing. Only exact str and device values are
# memoized (a bool or float must not find the entry of an equal int, and must reach device()'s
# error); an invalid string raises before its entry is made.
_EXPLICIT_KEYS: dict = {}
_default_factory_key = DispatchKey.CPU  # the backend of factories given no device (Note [Default device])


def set_default_factory_key(dev) -> None:
    """Note [Default device]: ``dev`` (None: the CPU) becomes the backend of factories given no device."""
    global _default_factory_key
    key = DispatchKey.CPU if dev is None else BACKEND_KEYS[dev.type]
    _default_factory_key = key


_refresh_view = None


def _late(t) -> bool:
    """True when ``t`` was a late-requiring view and now has its history (Note [Late-requiring views]
    in autograd/inplace.py)."""
    global _refresh_view
    if _refresh_view is None:
        from ..autograd.inplace import refresh_view as _refresh_view
    return _refresh_view(t)


class NotImplementedForBackend(NotImplementedError):
    """No kernel for the arguments' backend (torch raises NotImplementedError too)."""


class OpOverload:
    """One operator overload, e.g. ``strided.ops.aten.add.Tensor``."""

    __slots__ = (
        "schema", "namespace", "name", "overload_name", "location", "_dispatch_names", "_kernels",
        "_cache", "_tensor_args", "_device_arg", "__name__", "__qualname__", "packet", "device_check",
        "_mutated", "_mutated_lists", "_lead", "_factory_device", "_required_tensor", "_lead_optional",
    )

    def __init__(self, schema, namespace: str = "aten", location: str = "", dispatch_names=None,
                 device_check: bool = True):
        self.schema = schema
        self.device_check = device_check  # False: `device_check: NoCheck` (copy_ crosses devices)
        self.namespace = namespace
        self.name = f"{namespace}::{schema.name}"
        self.overload_name = schema.overload or "default"
        self.location = location
        self._dispatch_names = dict(dispatch_names or {})  # DispatchKey -> kernel name (from YAML)
        self._kernels: dict = {}  # DispatchKey -> function
        self._cache: dict = {}  # keyset int -> function
        self.__name__ = schema.qualified_name
        self.__qualname__ = f"{namespace}.{schema.qualified_name}"
        self.packet = None
        tensor_args, device_arg = [], None
        for i, arg in enumerate(schema.arguments):
            if arg.type.base == "Tensor":
                # the last item: None is refused here -- for a plain ``Tensor`` argument, or as an element of a
                # ``Tensor[]`` one (Note [Non-tensor arguments])
                required = not arg.type.elem_optional if arg.type.is_list else not arg.type.optional
                tensor_args.append((i, arg.name, arg.type.is_list, required))
            elif arg.type.base == "Device":
                device_arg = (i, arg.name)
        self._tensor_args = tuple(tensor_args)
        self._device_arg = device_arg
        # the first plain ``Tensor`` argument: a call whose only tensor-typed values are neither tensors nor
        # numbers is refused naming it (Note [Non-tensor arguments])
        self._required_tensor = next(((i, arg.name) for i, arg in enumerate(schema.arguments)
                                      if arg.type.base == "Tensor" and not arg.type.is_list
                                      and not arg.type.optional), None)
        # Note [Keyset fast path]: 1, 2 or 3 when the Tensor arguments are exactly the first one to
        # three positional arguments (no lists, no Device argument), else 0
        positions = tuple(i for i, _, _, _ in tensor_args)
        self._lead = (len(positions) if positions in ((0,), (0, 1), (0, 1, 2)) and device_arg is None
                      and not any(is_list for _, _, is_list, _ in tensor_args) else 0)
        # whether the second / third leading Tensor argument is optional: None there stays on the fast path
        # (``linear(x, w, None)``), a None for a plain Tensor goes to ``_keyset``'s refusal
        self._lead_optional = tuple(not required for _, _, _, required in tensor_args[1:3]) + (False, False)
        # Note [Factory fast path]: a factory (no Tensor arguments) whose ``device=`` is keyword-only
        # reads its key from the keyword alone; this is that keyword's name, else None
        self._factory_device = (device_arg[1] if device_arg is not None and not tensor_args
                                and schema.arguments[device_arg[0]].kwarg_only else None)
        # Note [Version counter]: (position, name) of the first written-to Tensor argument, or None
        self._mutated = next(((i, a.name) for i, a in enumerate(schema.arguments)
                              if a.annotation is not None and a.annotation.is_write
                              and a.type.base == "Tensor" and not a.type.is_list), None)
        self._mutated_lists = tuple((i, a.name) for i, a in enumerate(schema.arguments)
                                    if a.annotation is not None and a.annotation.is_write
                                    and a.type.base == "Tensor" and a.type.is_list)

    def __repr__(self) -> str:
        return f"<OpOverload {self.name}.{self.overload_name}>"

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        # Note [Keyset fast path]: the common call (leading Tensor arguments on one device) reads
        # each tensor's cached backend key; anything else (kwargs tensors, mixed devices, lists,
        # a Device argument) takes the general ``_keyset``. Both give the same keyset.
        keyset = None
        lead = self._lead
        if lead and len(args) >= lead and isinstance(a := args[0], _Tensor):
            # a view whose base requires grad may be a late-requiring view (Note [Late-requiring views])
            grad = a._requires_grad or ((x := a._base) is not None and x._requires_grad and _late(a))
            same_device = True
            k = a._key  # the backend key, with COMPLEX_BIT for a complex tensor
            if lead == 2:
                if isinstance(b := args[1], _Tensor):
                    same_device = b.device is a.device
                    k |= b._key
                    grad = (b._requires_grad or ((x := b._base) is not None and x._requires_grad and _late(b))
                            or grad)
                elif b.__class__ not in _SCALAR_CLASSES and not (b is None and self._lead_optional[0]):
                    same_device = False  # _keyset refuses what is neither a Tensor nor a number
            elif lead == 3:  # addmm, linear with a bias
                if isinstance(b := args[1], _Tensor):
                    same_device = b.device is a.device
                    k |= b._key
                    grad = (b._requires_grad or ((x := b._base) is not None and x._requires_grad and _late(b))
                            or grad)
                elif b.__class__ not in _SCALAR_CLASSES and not (b is None and self._lead_optional[0]):
                    same_device = False
                if isinstance(c := args[2], _Tensor):
                    same_device = same_device and c.device is a.device
                    k |= c._key
                    grad = (c._requires_grad or ((x := c._base) is not None and x._requires_grad and _late(c))
                            or grad)
                elif c.__class__ not in _SCALAR_CLASSES and not (c is None and self._lead_optional[1]):
                    same_device = False
            if same_device:
                keyset = k
                if grad and grad_mode.enabled:
                    keyset |= AUTOGRAD_BIT
                if autocast_state.active and autocast_state.tls.mask >> (k & 0xF) & 1:
                    keyset |= AUTOCAST_BIT
        elif (name := self._factory_device) is not None and not autocast_state.active:
            explicit = kwargs.get(name)
            if explicit is None:
                keyset = _default_factory_key
            elif explicit.__class__ is str or explicit.__class__ is device:
                keyset = _EXPLICIT_KEYS.get(explicit)  # Note [Explicit device keys]; a miss: _keyset
        if keyset is None:
            keyset = self._keyset(args, kwargs)
        fn = self._cache.get(keyset)
        if fn is None:
            fn = self._resolve(keyset)
        return fn(*args, **kwargs)

    def redispatch(self, keyset: int, *args, **kwargs):
        """Call the kernel for an explicit keyset (an Autograd kernel calls the backend below it)."""
        fn = self._cache.get(keyset)
        if fn is None:
            fn = self._resolve(keyset)
        return fn(*args, **kwargs)

    def _keyset(self, args, kwargs) -> int:
        if not self._tensor_args and self._device_arg is not None:  # a factory: the device decides
            i, name = self._device_arg
            explicit = args[i] if i < len(args) else kwargs.get(name)
            if explicit is None:
                key = _default_factory_key
            elif (cls_ := explicit.__class__) is str or cls_ is device:
                key = _EXPLICIT_KEYS.get(explicit)  # Note [Explicit device keys]
                if key is None:
                    key = _EXPLICIT_KEYS[explicit] = BACKEND_KEYS[device(explicit).type]
            else:
                key = BACKEND_KEYS[device(explicit).type]
            if autocast_state.active and autocast_state.tls.mask >> (key & 0xF) & 1:
                key |= AUTOCAST_BIT
            return key
        dev = None
        grad = False
        bits = 0  # COMPLEX_BIT when a complex tensor is among the arguments
        nargs = len(args)
        for i, name, is_list, required in self._tensor_args:
            a = args[i] if i < nargs else kwargs.get(name)
            if a is None:
                if required and not is_list and (i < nargs or name in kwargs):
                    _refuse_argument(self.__name__.split(".")[0], i, name, a)
                continue
            if not is_list and not isinstance(a, _Tensor):
                if required and not isinstance(a, _NUMBERS):
                    _refuse_argument(self.__name__.split(".")[0], i, name, a)
                continue  # a Python scalar where the schema allows wrapping, or None for an optional Tensor
            if is_list and not isinstance(a, (list, tuple)):
                _refuse_list(self.__name__.split(".")[0], i, name, a)
            for j, t in enumerate(a if is_list else (a,)):
                if not isinstance(t, _Tensor):
                    if is_list and (required or t is not None):
                        _refuse_element(i, j, t)
                    continue
                d = t.device
                bits |= t._key
                if dev is None:
                    dev, dev_is_cpu_scalar = d, (d is CPU and not t._sizes)
                elif d is not dev:
                    if d is CPU and not t._sizes:
                        pass  # zero-dim CPU tensors may join any device, as in torch
                    elif dev_is_cpu_scalar:
                        dev, dev_is_cpu_scalar = d, (d is CPU and not t._sizes)
                    elif not self.device_check:
                        if _CROSS_DEVICE_PREFERENCE[d.type] < _CROSS_DEVICE_PREFERENCE[dev.type]:
                            dev = d
                    else:
                        raise RuntimeError(
                            "Expected all tensors to be on the same device, but found at least two "
                            f"devices, {dev} and {d}!"
                        )
                if t._requires_grad or ((x := t._base) is not None and x._requires_grad and _late(t)):
                    grad = True
        if self._device_arg is not None:
            i, name = self._device_arg
            explicit = args[i] if i < nargs else kwargs.get(name)
            if explicit is not None:
                dev = device(explicit)
        if dev is None and self._required_tensor is not None:
            self._check_required_tensor(args, kwargs)
        key = BACKEND_KEYS[dev.type] if dev is not None else DispatchKey.CPU
        key |= bits & COMPLEX_BIT
        if grad and grad_mode.enabled:
            key |= AUTOGRAD_BIT
        if autocast_state.active and autocast_state.tls.mask >> (key & 0xF) & 1:
            key |= AUTOCAST_BIT  # Note [Autocast state]
        return key

    # Note [Non-tensor arguments] (in argument_checks.py): the refusals of ``_keyset`` and this check
    def _check_required_tensor(self, args, kwargs) -> None:
        i, name = self._required_tensor
        value = args[i] if i < len(args) else kwargs.get(name)
        if value is not None and not isinstance(value, _Tensor):
            _refuse_argument(self.__name__.split(".")[0], i, name, value)

    # ------------------------------------------------------------------ kernels
    def kernel(self, key: DispatchKey):
        """The kernel registered (or named in the YAML) for ``key``, or None."""
        fn = self._kernels.get(key)
        if fn is None and key in self._dispatch_names:
            table = _load_table(key)
            if table is not None:
                name = self._dispatch_names[key]
                fn = table.get(name)
                if fn is None:
                    raise RuntimeError(
                        f"{self.location}: {self.name}.{self.overload_name} names kernel '{name}' for "
                        f"{key.name}, but {KERNEL_MODULES[key]} defines no kernel of that name"
                    )
                self._kernels[key] = fn
        return fn

    def has_kernel(self, key: DispatchKey) -> bool:
        return key in self._kernels or key in self._dispatch_names

    def register(self, key: DispatchKey, fn) -> None:
        """Register ``fn`` for ``key``; an existing kernel for that key is an error."""
        if self.has_kernel(key):
            raise RuntimeError(
                f"Trying to register a second kernel for {self.name}.{self.overload_name} at dispatch "
                f"key {key.name}; a kernel is already registered there"
            )
        self._kernels[key] = fn
        self._cache.clear()

    def available_keys(self) -> list[str]:
        return [k.name for k in DispatchKey if self.has_kernel(k)]

    def _runs_on(self, backend: DispatchKey) -> bool:
        """Whether some kernel would serve ``backend`` (else the call gets the no-kernel error, complex or not)."""
        return any(self.has_kernel(k) for k in (backend, DispatchKey.CompositeExplicitAutograd,
                                                 DispatchKey.CompositeImplicitAutograd))

    def _resolve(self, keyset: int):
        """See Note [Dispatch order]."""
        backend = DispatchKey(keyset & 0xF)
        if keyset & COMPLEX_BIT and not complex_supported(self, backend) and self._runs_on(backend):
            fn = self._cache[keyset] = complex_refusal(self, backend)  # Note [Complex operators]
            return fn
        fn = None
        # 1. Autocast
        if keyset & AUTOCAST_BIT:
            fn = self.kernel(DispatchKey.Autocast)
        # 2. Autograd
        if fn is None and keyset & AUTOGRAD_BIT:
            fn = self.kernel(DispatchKey.Autograd)
            if fn is not None and hasattr(fn, "for_keyset"):
                fn = fn.for_keyset(keyset)  # Note [Autograd redispatch]
        # 3. the backend's own kernel (the one that bumps the version: Note [Version counter])
        if fn is None:
            fn = self.kernel(backend)
            writes = fn is not None and (self._mutated is not None or bool(self._mutated_lists))
            if fn is not None and (wrap := BACKEND_KERNEL_WRAPPERS.get(backend)) is not None:
                fn = wrap(fn)  # Note [Backend kernel wrappers]
        else:
            writes = False
        # 4. CompositeExplicitAutograd, 5. CompositeImplicitAutograd
        if fn is None:
            fn = self.kernel(DispatchKey.CompositeExplicitAutograd)
        if fn is None:
            fn = self.kernel(DispatchKey.CompositeImplicitAutograd)
        # 6. no kernel
        if fn is None:
            if backend is DispatchKey.CUDA and _load_table(DispatchKey.CUDA) is None:
                # no kernel because the whole backend could not load: say that, not which backends
                # the op has (the list would name CUDA and confuse)
                raise NotImplementedForBackend(
                    f"Could not run '{self.name}' with arguments from the 'CUDA' backend: the CUDA backend "
                    f"is not available ({_LOAD_ERRORS.get(DispatchKey.CUDA)}). Use device='cpu', or run on a "
                    "machine with an NVIDIA GPU and driver, with strided installed with its 'cuda' extra."
                )
            raise NotImplementedForBackend(
                f"Could not run '{self.name}' with arguments from the '{backend.name}' backend. This "
                "could be because the operator doesn't exist for this backend, or was omitted during "
                f"the selective/custom build process. '{self.name}' is only available for these "
                f"backends: [{', '.join(self.available_keys())}]."
            )
        if writes:
            fn = (bump_version(fn, *self._mutated) if self._mutated is not None
                  else bump_list_versions(fn, self._mutated_lists))
        if _tracing.wrapper is not None:
            fn = _tracing.wrapper(self, keyset, fn)
        self._cache[keyset] = fn
        return fn


# Note [Autograd redispatch]
# An Autograd kernel that has a ``for_keyset(keyset)`` attribute is specialized to the keyset it
# was resolved for (once, then cached like any kernel), so it can call the kernel below Autograd
# with ``op.redispatch(keyset & 0xF, ...)`` instead of recomputing the keyset from the arguments
# (torch's redispatch with the keys below Autograd).


from ..ops.complex_support import complex_refusal, complex_supported  # noqa: E402
from ..tensor import Tensor as _Tensor  # noqa: E402
from .argument_checks import NUMBERS as _NUMBERS  # noqa: E402
from .argument_checks import refuse_list_element as _refuse_element  # noqa: E402
from .argument_checks import refuse_tensor_argument as _refuse_argument  # noqa: E402
from .argument_checks import refuse_tensor_list as _refuse_list  # noqa: E402

__all__ += ["KERNEL_TABLES", "KERNEL_MODULES", "BACKENDS", "BACKEND_KERNEL_WRAPPERS"]
