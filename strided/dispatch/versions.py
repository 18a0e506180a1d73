"""Version counters: the wrappers that count each in-place write of a backend kernel (Note [Version counter])
and refuse one into an inference tensor outside inference mode (Note [Inference tensors] in storage.py)."""

from __future__ import annotations

from .state import grad_mode

__all__ = ["bump_version", "bump_list_versions", "INFERENCE_INPLACE", "before_write"]

INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                     "clone to get a normal tensor before doing inplace update.See "
                     "https://github.com/pytorch/rfcs/pull/17 for more details.")


# Note [Version counter]
# Every backend kernel that writes a Tensor argument (``Tensor(a!)``: in-place ops, ``out=``,
# copy_, fill_, random fills) bumps the written tensor's version counter after it returns;
# composite kernels (autogen in-place/out, zero_) write through such ops, so one in-place call
# counts once. The counter lives on the storage, so a tensor and all its views share it (torch's
# VariableVersion), and autograd compares it with the version a saved tensor had when the graph
# was recorded. The wrapper is added once at resolution, so ops that write nothing pay nothing.
class _BeforeWrite:
    __slots__ = ("hook",)

    def __init__(self):
        self.hook = None  # called with each tensor about to be written (allow_mutation_on_saved_tensors)


before_write = _BeforeWrite()


def bump_version(fn, position: int, name: str):
    def bump(*args, **kwargs):
        target = args[position] if position < len(args) else kwargs[name]
        if target._storage.inference and not grad_mode.inference:
            raise RuntimeError(INFERENCE_INPLACE)  # Note [Inference tensors]
        if before_write.hook is not None:
            before_write.hook(target)
        out = fn(*args, **kwargs)
        target._storage._version += 1  # read again: resize_ / set_ may have given target a new storage
        return out

    bump.__wrapped__ = fn
    return bump


def bump_list_versions(fn, written: tuple):
    """The ``Tensor(a!)[]`` form (fused optimizer kernels): every tensor of every written list."""
    def bump(*args, **kwargs):
        if not grad_mode.inference:
            for position, name in written:
                tensors = args[position] if position < len(args) else kwargs[name]
                for t in tensors:
                    if t._storage.inference:
                        raise RuntimeError(INFERENCE_INPLACE)  # Note [Inference tensors]
        if before_write.hook is not None:
            for position, name in written:
                for t in args[position] if position < len(args) else kwargs[name]:
                    before_write.hook(t)
        out = fn(*args, **kwargs)
        for position, name in written:
            tensors = args[position] if position < len(args) else kwargs[name]
            for t in tensors:
                t._storage._version += 1
        return out

    bump.__wrapped__ = fn
    return bump
