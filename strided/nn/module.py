"""``Module``: the base of every layer (torch.nn.Module).

A Module owns three ordered dicts: ``_parameters`` (Parameter or None), ``_buffers`` (Tensor or
None; persistent ones go into the state dict) and ``_modules`` (child Modules). Assigning an
attribute routes the value into the right dict (Note [Module attributes]); reading an attribute
that is not in ``__dict__`` looks in the three dicts. Everything else (iterators, train/eval,
``to``, ``apply``, the state dict) walks those dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..tensor import Tensor
from ..utils.hooks import RemovableHandle
from ._conversions import ConversionMixin
from ._state_dict import StateDictMixin
from .module_hooks import GLOBAL_HOOKS, HooksMixin, call_with_hooks, run_registration_hooks
from .parameter import Buffer, Parameter

__all__ = ["Module", "RemovableHandle"]

_GLOBAL_CALL_HOOKS = GLOBAL_HOOKS.any_call  # one entry per global forward / backward hook registered
_ON_PARAMETER, _ON_BUFFER = GLOBAL_HOOKS.parameter_registration, GLOBAL_HOOKS.buffer_registration
_ON_MODULE = GLOBAL_HOOKS.module_registration


def _typename(value) -> str:
    """torch.typename: a tensor's legacy type (``strided.FloatTensor``), else the qualified class name."""
    if isinstance(value, Tensor):
        return value.type()
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(num_spaces * " " + line for line in lines[1:])


def _check_name(kind: str, name, module: Module) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


class Module(StateDictMixin, ConversionMixin, HooksMixin):
    """Base class of all neural-network layers; subclasses define ``forward``.

    Examples
    --------
    >>> class MLP(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    """

    training: bool

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = {}
        d["_forward_hooks"] = {}
        d["_backward_pre_hooks"] = {}
        d["_backward_hooks"] = {}

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def compile(self, **kwargs) -> None:
        """torch's ``Module.compile``: the arguments checked as ``strided.compile`` checks them; the module keeps
        running eagerly, its state-dict keys unchanged (Note [No compiler] in strided/compiler.py)."""
        from ..compiler import compile as compile_

        compile_(self, **kwargs)  # its checks; the wrapper it returns is not kept

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"] or d["_backward_pre_hooks"]
                or _GLOBAL_CALL_HOOKS):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)  # torch's order of hooks (module_hooks.py)

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(strided.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        if _ON_PARAMETER:
            param = run_registration_hooks(_ON_PARAMETER, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; ``persistent=False`` keeps it out of the
        state dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(strided Tensor or None required)")
        if _ON_BUFFER:
            tensor = run_registration_hooks(_ON_BUFFER, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name, self)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if _ON_MODULE:
            module = run_registration_hooks(_ON_MODULE, self, name, module)
        self._modules[name] = module

    register_module = add_module

    # Note [Module attributes]
    # As torch: assigning a Parameter registers it (and removes a same-named buffer, child or plain
    # attribute); assigning a Module registers a child; assigning a Buffer registers it (persistent or
    # not); assigning to an existing buffer name replaces the buffer; assigning a non-Parameter to a
    # parameter name is an error (None clears).
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_everywhere(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(strided.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_everywhere(name, keep="_modules")
                modules[name] = run_registration_hooks(_ON_MODULE, self, name, value) if _ON_MODULE else value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(strided.nn.Module or None expected)")
                modules[name] = run_registration_hooks(_ON_MODULE, self, name, value) if _ON_MODULE else value
            elif isinstance(value, Buffer):
                if d.get("_buffers") is None:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                persistent = value.persistent
                value.__class__ = Tensor  # registered, it is a plain Tensor again (torch's Buffer does the same)
                self._remove_everywhere(name, keep="_buffers")
                self.register_buffer(name, value, persistent)
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(strided Tensor or None expected)")
                    buffers[name] = run_registration_hooks(_ON_BUFFER, self, name, value) if _ON_BUFFER else value
                else:
                    object.__setattr__(self, name, value)

    def _remove_everywhere(self, name: str, keep: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name: str):
        # Note [Fast attribute lookup]: called for every parameter, buffer and child read in forward;
        # unrolled (no loop, no tuple) since it runs hundreds of times per training step.
        d = self.__dict__
        if "_parameters" in d:
            table = d["_parameters"]
            if name in table:
                return table[name]
            table = d["_buffers"]
            if name in table:
                return table[name]
            table = d["_modules"]
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__[store]
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ------------------------------------------------------------------ iterators
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs, children's included as ``child.name``; shared ones once."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and all descendants, depth first, as ``(dotted name, module)``."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` ("" is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str):
        """The parameter at dotted path ``target`` (``"0.weight"``), with torch's errors."""
        return self._tensor_at(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str):
        """The buffer at dotted path ``target`` (``"0.running_mean"``), with torch's errors."""
        return self._tensor_at(target, "_buffers", "a buffer")

    def _tensor_at(self, target: str, table: str, kind: str):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, table):
            raise AttributeError(f"`{name}` is not {kind}")
        return getattr(mod, name)

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (replacing what is there; ``strict``: only an existing one)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    # ------------------------------------------------------------------ modes and gradients
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout active) on this module and all descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every descendant, then on this module (e.g. to initialize weights)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """One line (or several) shown inside this module's repr; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_addindent(repr(module), 2)}" for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

