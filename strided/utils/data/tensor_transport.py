"""How DataLoader workers send tensors to the main process.

Note [Tensors between processes]
strided tensors refuse plain ``pickle`` (state is saved with ``strided.nn.save``). Worker results
travel through ``multiprocessing`` queues, which pickle with ``ForkingPickler``; this module
registers a reduction with that pickler only, as torch registers its own: a CPU tensor goes as its
NumPy array (its bytes, shape and dtype, bfloat16 included through ml_dtypes), and is rebuilt as a
fresh contiguous tensor on the other side. A leaf that requires grad keeps the flag; a non-leaf
that requires grad, and any CUDA tensor, are refused with an error that says what to do instead
(workers are forked from a process that may hold a CUDA context, so they must not use CUDA).
"""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from ...tensor import Tensor

__all__ = ["register_tensor_reduction"]


def _rebuild(array, requires_grad: bool) -> Tensor:
    from ... import from_numpy

    t = from_numpy(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce(t: Tensor):
    if t.device.type != "cpu":
        raise RuntimeError(
            f"DataLoader worker: cannot send a {t.device.type} tensor to the main process; build samples on the "
            "CPU in workers and move each batch to the device in the main process (pin_memory=True makes that "
            "copy asynchronous)"
        )
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
            "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
            "the tensor before serializing (e.g., putting it on the queue)."
        )
    return _rebuild, (t.detach().contiguous().numpy(), t.requires_grad)


_registered = False


def register_tensor_reduction() -> None:
    """Let ``multiprocessing`` queues carry strided tensors (Note [Tensors between processes])."""
    global _registered
    if not _registered:
        ForkingPickler.register(Tensor, _reduce)
        _registered = True
