"""torch's deprecated argument orders, still accepted with its warning: ``add(t, number, other)``,
``x.add_(-lr, grad)``, ``addcmul_(value, t1, t2)``... (torch's ``tools/autograd/deprecated.yaml``).

Note [Deprecated argument orders]
Before ``alpha`` and ``value`` were keyword-only, old optimizer code wrote ``p.data.add_(-lr, d_p)`` and
``exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)``. torch still parses these: the number in the second
place is the scale of the tensors that follow, and a UserWarning names the old and the new signature. strided
reads them the same way, only after every current overload has failed to match (so a current call costs nothing),
and calls the op with the number as its keyword.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["deprecated_form"]

# op name -> (the number's keyword, the tensors after it)
_FORMS = {
    "add": ("alpha", ("other",)), "sub": ("alpha", ("other",)),
    "add_": ("alpha", ("other",)), "sub_": ("alpha", ("other",)),
    "addcmul": ("value", ("tensor1", "tensor2")), "addcdiv": ("value", ("tensor1", "tensor2")),
    "addcmul_": ("value", ("tensor1", "tensor2")), "addcdiv_": ("value", ("tensor1", "tensor2")),
}
_NUMBERS = (int, float, complex)


def _message(name: str, word: str, tensors: tuple) -> str:
    sig = ", ".join(f"Tensor {t}" for t in tensors)
    if name.endswith("_"):  # in-place: Tensor methods only
        return (f"This overload of {name} is deprecated:\n\t{name}(Number {word}, {sig})\nConsider using one of the "
                f"following signatures instead:\n\t{name}({sig}, *, Number {word} = 1)")
    return (f"This overload of {name} is deprecated:\n\t{name}(Tensor input, Number {word}, {sig}, *, Tensor out = "
            f"None)\nConsider using one of the following signatures instead:\n\t{name}(Tensor input, {sig}, *, "
            f"Number {word} = 1, Tensor out = None)")


def _caller_level() -> int:
    """The stack level of the first frame outside strided (the user's call, function or Tensor method)."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("strided."):
        frame, level = frame.f_back, level + 1
    return level


def deprecated_form(packet, args: tuple, kwargs: dict):
    """A callable running ``packet`` for the deprecated order of ``args``, or None when they are not in it."""
    from ..tensor import Tensor

    form = _FORMS.get(packet.name) if packet.namespace == "aten" else None
    if form is None:
        return None
    word, tensors = form
    allowed = {"out"} if not packet.name.endswith("_") else set()
    if (len(args) != 2 + len(tensors) or not isinstance(args[0], Tensor) or isinstance(args[1], bool)
            or not isinstance(args[1], _NUMBERS) or not all(isinstance(t, Tensor) for t in args[2:])
            or not set(kwargs) <= allowed):
        return None
    message = _message(packet.name, word, tensors)

    def call(*a, **k):
        warnings.warn(message, UserWarning, stacklevel=_caller_level())
        return packet(a[0], *a[2:], **{word: a[1]}, **k)

    return call
