"""``strided.compile`` and ``strided.compiler``: torch.compile's entry points, for scripts that call them.

Note [No compiler]
strided has no graph compiler: no Dynamo capturing Python bytecode into FX graphs, no Inductor generating fused
kernels. Every op already runs as its own kernel (the elementwise engine, cuBLASLt, the fused optimizers), and
``torch.cuda.graphs``' role is ``strided.cuda.graphs`` (explicit capture). Training scripts commonly write
``model = torch.compile(model)``; those lines run unchanged here and compute eagerly, which is what
``torch.compile(backend="eager")`` computes. What torch's API promises beyond the values is kept where it is
observable: the arguments are checked in torch's words, a module comes back wrapped in an ``OptimizedModule``
whose state-dict keys carry torch's ``_orig_mod.`` prefix (so checkpoints move between the two unchanged), a
function comes back wrapped (``__wrapped__`` names it), ``disable=True`` returns the model itself, and
``nn.Module.compile()`` returns None. A callable backend is refused: it expects a captured FX graph, and there is
none to give it. No speed-up is promised or faked: a compiled model runs exactly as the eager one.
"""

from __future__ import annotations

import functools

from .nn.module import Module

__all__ = ["compile", "OptimizedModule", "InvalidBackend", "is_compiling", "is_dynamo_compiling", "disable",
           "reset", "allow_in_graph", "list_backends"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# torch's registered backend names (torch._dynamo.list_backends() and its debug backends); all run eagerly here
_BACKENDS = ("inductor", "cudagraphs", "eager", "aot_eager", "aot_eager_decomp_partition", "openxla", "tvm", "onnxrt")


class InvalidBackend(RuntimeError):
    """A backend name torch does not register (torch._dynamo.exc.InvalidBackend)."""


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend="inductor",  # noqa: A001
            mode: str | None = None, options: dict | None = None, disable: bool = False):
    """torch.compile: ``model`` (a module or a function) checked as torch checks it and returned to run eagerly
    (Note [No compiler]); without ``model``, a decorator."""
    _check_arguments(backend, mode, options)
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)

        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    return compiled


def _check_arguments(backend, mode, options) -> None:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compile(): argument 'options' must be a dict, not {type(options).__name__}")
    if backend is None or backend in _BACKENDS:
        return
    if callable(backend):
        raise RuntimeError("strided.compile: a callable backend compiles a captured FX graph, and strided captures "
                           "none (Note [No compiler]); leave backend at its default to run the model eagerly")
    raise InvalidBackend(f"Invalid backend: {backend!r}. See `strided.compiler.list_backends()` for available "
                         "backends.")


class OptimizedModule(Module):
    """What ``compile(module)`` returns, as torch's: the module under ``_orig_mod`` (state-dict keys
    ``_orig_mod.weight``, ...), its attributes readable through the wrapper, calls forwarded to it."""

    def __init__(self, mod: Module):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)


def is_compiling() -> bool:
    """torch.compiler.is_compiling: whether code runs inside a graph capture -- never in strided."""
    return False


def is_dynamo_compiling() -> bool:
    """torch.compiler.is_dynamo_compiling: never in strided (Note [No compiler])."""
    return False


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """torch.compiler.disable: exclude ``fn`` from compilation (as a decorator too); in strided nothing is compiled,
    so ``fn`` is returned as it is."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    """torch.compiler.allow_in_graph: ``fn`` itself (there is no graph to put it in)."""
    return fn


def reset() -> None:
    """torch.compiler.reset: clear compilation caches -- strided keeps none (Note [No compiler])."""


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The backend names ``compile`` accepts (torch's names; every one runs eagerly here)."""
    debug = {"eager", "aot_eager", "aot_eager_decomp_partition"}
    return sorted(b for b in _BACKENDS if not (exclude_tags and "debug" in exclude_tags and b in debug))
