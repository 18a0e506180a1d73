"""torch's other spellings of existing operators, and the in-place forms of composite ops.

Each kernel is CompositeImplicitAutograd: ``arccos`` is ``acos``, ``divide`` is ``div``, ``greater`` is
``gt``, ``concat`` is ``cat``... Autograd differentiates them through the op they call.

Note [Composite in-place forms]
An ``autogen: X_`` in-place overload of an op without derivative formulas (a CompositeImplicitAutograd
``clamp_min``, ``square``, ``nan_to_num``) would have no Autograd kernel: it computes the functional op
and copies the result into ``self``. The in-place forms here call an existing in-place op instead
(``clamp_min_`` is ``clamp_(min=...)``, ``square_`` is ``pow_(2)``), so the in-place autograd rules of
that op record the write (Note [In-place autograd]) and every backend runs them.
"""

from __future__ import annotations

from ...dispatch.library import kernel
from .. import bound as ops

__all__ = []

_CIA = "CompositeImplicitAutograd"

# one-argument aliases and their in-place forms: name -> the op it calls
_UNARY = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctanh": "atanh", "negative": "neg", "fix": "trunc",
}
# two-argument aliases (every overload has the same argument names): name -> the op it calls
_BINARY = {
    "arctan2": "atan2", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "multiply": "mul",
}


def _alias(name: str, target: str) -> None:
    def fn(self, *args, **kwargs):
        return getattr(ops, target)(self, *args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    kernel(_CIA)(fn)


for _name, _target in {**_UNARY, **_BINARY}.items():
    _alias(_name, _target)
    _alias(f"{_name}_", f"{_target}_")
del _name, _target


@kernel(_CIA)
def divide(self, other, *, rounding_mode=None):
    return ops.div(self, other) if rounding_mode is None else ops.div(self, other, rounding_mode=rounding_mode)


@kernel(_CIA)
def divide_(self, other, *, rounding_mode=None):
    return ops.div_(self, other) if rounding_mode is None else ops.div_(self, other, rounding_mode=rounding_mode)


@kernel(_CIA)
def subtract(self, other, alpha=1):
    return ops.sub(self, other, alpha=alpha)


@kernel(_CIA)
def subtract_(self, other, alpha=1):
    return ops.sub_(self, other, alpha=alpha)


@kernel(_CIA)
def rsub(self, other, *, alpha=1):
    """``other - alpha * self`` (torch's ``rsub``)."""
    return ops.sub(other, self, alpha=alpha)


@kernel(_CIA)
def rsub_scalar(self, other, alpha=1):
    """``other - alpha * self`` for a Python number ``other``, promoted and cast as torch's wrapped scalars."""
    from ...tensor_operators import _reflected_operand

    return ops.sub(_reflected_operand(self, other), self, alpha=alpha)  # a 0-dim CPU operand: no H2D copy


@kernel(_CIA)
def true_divide_(self, other):
    return ops.div_(self, other)


@kernel(_CIA)
def positive(self):
    if self.dtype.name == "bool":
        raise NotImplementedError("The `+` operator, on a bool tensor is not supported.")
    return self


@kernel(_CIA)
def clamp_min_(self, min):  # noqa: A002 - torch's argument name
    return ops.clamp_(self, min=min)


@kernel(_CIA)
def clamp_max_(self, max):  # noqa: A002 - torch's argument name
    return ops.clamp_(self, max=max)


@kernel(_CIA)
def clip_(self, min=None, max=None):  # noqa: A002 - torch's argument names
    return ops.clamp_(self, min, max)


@kernel(_CIA)
def clip_tensor(self, min=None, max=None):  # noqa: A002 - torch's argument names
    return ops.clamp(self, min, max)


@kernel(_CIA)
def clip__tensor(self, min=None, max=None):  # noqa: A002 - torch's argument names
    return ops.clamp_(self, min, max)


@kernel(_CIA)
def square_(self):
    return ops.pow_(self, 2)


@kernel(_CIA)
def concat(tensors, dim=0):
    return ops.cat(tensors, dim)


@kernel(_CIA)
def moveaxis(self, source, destination):
    return ops.movedim(self, source, destination)


@kernel(_CIA)
def msort(self):
    return ops.sort(self, 0)[0]


@kernel(_CIA)
def ravel(self):
    return ops.reshape(self, (-1,))


def _unmarked(views: list) -> list:
    """The ``unsafe_`` variants' outputs: autograd lets them be written in place (Note [Multi-output views])."""
    for v in views:
        meta = v._autograd
        if meta is not None:
            meta.multi_output = meta.no_grad_view = False
    return views


@kernel(_CIA)
def unsafe_chunk(self, chunks, dim=0):
    return _unmarked(ops.chunk(self, chunks, dim))


@kernel(_CIA)
def unsafe_split(self, split_size, dim=0):
    return _unmarked(ops.split(self, split_size, dim))


@kernel(_CIA)
def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return _unmarked(ops.split_with_sizes(self, split_sizes, dim))
