"""Activation checkpointing (``torch.utils.checkpoint``): keep a block's inputs, not its activations,
and run the block again in backward to get them back.

Note [Non-reentrant checkpoint]
``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` with grad mode on, so the graph is
recorded as usual, but under saved-tensor hooks (Note [Saved tensor hooks]) whose ``pack`` keeps a
small handle instead of the tensor: the block's activations are freed as soon as the forward no
longer needs them. The first ``unpack`` in backward runs ``fn`` again on detached copies of the
inputs, with the forward's RNG state (dropout draws the same mask) and autocast state, and a
``pack`` that catches the tensors in the order they are saved: the i-th tensor saved in the
recomputation is the i-th handle's. Recomputation stops once the last handle is filled
(``early_stop``). Each handle's tensor is handed out once and dropped; a second backward through a
retained graph recomputes again. The recomputation is checked against the forward: the same
number of tensors, each with the same shape, dtype and device (``determinism_check="default"``).
The inputs are saved as any saved tensor (their versions are checked, so an input modified in
place after the forward raises torch's error; an enclosing hook, such as an outer checkpoint,
applies to them). Gradients reach parameters through the recorded graph, so ``autograd.grad``,
``backward(inputs=...)`` and keyword arguments work.

Note [Reentrant checkpoint]
``use_reentrant=True`` is torch's older form: a custom Function runs ``fn`` under ``no_grad`` and,
in its backward, runs it again with grad on and calls ``backward`` on the recomputed outputs (a
backward inside the backward). Parameters get their gradients from that inner backward, added to
``.grad`` directly, so it cannot serve ``autograd.grad`` or ``backward(inputs=...)`` (an error),
and outputs do not require grad unless an input does.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
import weakref

from .. import random as _random
from ..amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from ..autograd.engine import is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import SavedTensor, saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn"]

_DEBUG_TIP = ("\nTip: pass `debug=True` to `strided.utils.checkpoint.checkpoint(...)` to list the "
              "metadata of every saved tensor.")
_REENTRANT_WARNING = (
    "strided.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can "
    "pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.")


class CheckpointError(RuntimeError):
    """A recomputation that does not match the forward (torch's ``CheckpointError``)."""


class _StopRecomputation(BaseException):
    """Raised by the recomputation's pack hook once every handle is filled (``early_stop``); a
    BaseException so that no ``except Exception`` in the checkpointed code swallows it."""


def noop_context_fn():
    """The default ``context_fn``: no extra context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function=None, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True,
               context_fn=noop_context_fn, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its activations: they are recomputed in backward
    (Note [Non-reentrant checkpoint], Note [Reentrant checkpoint]).

    Called without a function, returns a decorator: ``@checkpoint(use_reentrant=False)``.

    Examples
    --------
    >>> for block in model.blocks:
    ...     x = checkpoint(block, x, use_reentrant=False)   # each block's activations: recomputed
    """
    if function is None and not args:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return functools.partial(_decorate, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state,
                                 context_fn=context_fn, determinism_check=determinism_check, debug=debug,
                                 early_stop=early_stop)
    if not callable(function):
        raise TypeError(f"checkpoint: function must be callable, got {type(function).__name__}")
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn,
                                         determinism_check, debug, early_stop)


def _decorate(function, **options):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return checkpoint(function, *args, **options, **kwargs)

    return wrapper


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in ``segments`` pieces, checkpointing every
    piece but the last (``torch.utils.checkpoint.checkpoint_sequential``)."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if not functions:
        raise ValueError("checkpoint_sequential: functions must not be empty")
    if not isinstance(segments, int) or isinstance(segments, bool) or not 0 < segments <= max(len(functions), 1):
        raise ValueError(f"checkpoint_sequential: segments must be an int in [1, {len(functions)}], got {segments!r}")

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


# ------------------------------------------------------------------------------ shared state capture
class _ForwardState:
    """What the recomputation must reproduce: RNG states (CPU and the inputs' CUDA devices) and
    the autocast state of both device types."""

    def __init__(self, args, preserve_rng_state: bool):
        self.preserve = preserve_rng_state
        self.devices = sorted({a.device.index or 0 for a in args if isinstance(a, Tensor) and a.device.type == "cuda"})
        if preserve_rng_state:
            self.cpu_state = _random.default_generator.get_state()
            self.cuda_states = [_random.default_generator_for(f"cuda:{i}").get_state() for i in self.devices]
        self.autocast = [(d, is_autocast_enabled(d), get_autocast_dtype(d)) for d in ("cpu", "cuda")]

    @contextlib.contextmanager
    def restored(self):
        with _random.fork_rng(devices=self.devices, enabled=self.preserve), contextlib.ExitStack() as stack:
            if self.preserve:
                _random.default_generator.set_state(self.cpu_state)
                for i, state in zip(self.devices, self.cuda_states):
                    _random.default_generator_for(f"cuda:{i}").set_state(state)
            for device_type, enabled, dtype in self.autocast:
                stack.enter_context(autocast(device_type, dtype=dtype, enabled=enabled))
            yield


def _detached(args) -> list:
    out = []
    for a in args:
        if isinstance(a, Tensor):
            d = a.detach()
            d.requires_grad = a.requires_grad
            a = d
        out.append(a)
    return out


def _check_inputs(args) -> None:
    if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=4)


# ------------------------------------------------------------------------------ non-reentrant
class _Handle:
    """What the forward's pack hook keeps in place of a saved tensor."""

    __slots__ = ("frame", "index", "__weakref__")

    def __init__(self, frame, index: int):
        self.frame = frame
        self.index = index


class _Frame:
    """One checkpointed call: its inputs, the metadata of what it saved, and the recomputed tensors."""

    def __init__(self, function, args, kwargs, state, context, determinism_check, debug, early_stop):
        self.function = function
        self.kwargs = kwargs
        self.state = state
        self.recompute_context = context
        self.check = determinism_check == "default"
        self.debug = debug
        self.early_stop = early_stop
        # the inputs are saved as any saved tensor: version-checked, and packed by an enclosing hook
        self.inputs = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]
        self.metas: list[tuple] = []  # (sizes, dtype, device) of the i-th saved tensor
        self.handles: list = []  # weak references to the handles, by index
        self.recomputed: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> _Handle:
        h = _Handle(self, len(self.metas))
        self.metas.append(_meta(t))
        self.handles.append(weakref.ref(h))
        return h

    def unpack(self, h: _Handle) -> Tensor:
        t = self.recomputed.pop(h.index, None)
        if t is None:
            self.recompute()
            t = self.recomputed.pop(h.index)
        return t

    def recompute(self) -> None:
        args = _detached([a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.inputs])
        caught: list = []
        want = len(self.metas)

        def pack(t):
            caught.append(t)
            if self.early_stop and len(caught) == want:
                raise _StopRecomputation
            return None

        def unpack(_):
            raise CheckpointError("strided.utils.checkpoint: the recomputation's own graph is never run backward")

        try:
            with self.state.restored(), self.recompute_context, enable_grad(), saved_tensors_hooks(pack, unpack):
                self.function(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        if self.check:
            self._check(caught)
        for i, t in enumerate(caught[:want]):
            if self.handles[i]() is not None:  # a handle still held by a node that will read it
                self.recomputed[i] = t

    def _check(self, caught: list) -> None:
        if len(caught) != len(self.metas):
            raise CheckpointError(
                "strided.utils.checkpoint: A different number of tensors was saved during the original forward "
                f"and recomputation.\nNumber of tensors saved during forward: {len(self.metas)}\n"
                f"Number of tensors saved during recomputation: {len(caught)}.\n{self._detail(caught)}")
        bad = [i for i, (t, m) in enumerate(zip(caught, self.metas)) if _meta(t) != m]
        if bad:
            lines = "".join(f"tensor at position {i}:\nsaved metadata: {_meta_str(self.metas[i])}\n"
                            f"recomputed metadata: {_meta_str(_meta(caught[i]))}\n" for i in bad)
            raise CheckpointError("strided.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{lines}.\n{self._detail(caught)}")

    def _detail(self, caught: list) -> str:
        if not self.debug:
            return _DEBUG_TIP
        fwd = "\n".join(f"  {i}: {_meta_str(m)}" for i, m in enumerate(self.metas))
        rec = "\n".join(f"  {i}: {_meta_str(_meta(t))}" for i, t in enumerate(caught))
        return f"Saved during the forward:\n{fwd}\nSaved during the recomputation:\n{rec}"


def _meta(t: Tensor) -> tuple:
    return tuple(t._sizes), t.dtype, t.device


def _meta_str(m) -> str:
    return f"{{'shape': {list(m[0])}, 'dtype': {m[1]}, 'device': {m[2]}}}"


def _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check,
                                  debug, early_stop):
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, _ForwardState(args, preserve_rng_state), recompute_context,
                   determinism_check, debug, early_stop)
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


# ------------------------------------------------------------------------------ reentrant
class _CheckpointFunction(Function):
    """Note [Reentrant checkpoint]."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        _check_inputs(args)
        ctx.run_function = run_function
        ctx.state = _ForwardState(args, preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, strided.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detached(inputs)
        with ctx.state.restored(), enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..autograd import backward

        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)
