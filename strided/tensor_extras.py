"""Tensor methods torch has that are not operators: predicates (``is_signed``, ``is_nonzero``...), casts
(``byte``, ``char``, ``short``), ``mH`` / ``H``, the ``real`` / ``imag`` properties, ``sum_to_size``,
``new_empty_strided``, ``resize_as_`` and the CPU-only element-wise Python callbacks ``apply_`` / ``map_`` /
``map2_``."""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt

__all__ = ["TensorExtras", "cast"]

_PY_NUMBERS = frozenset((int, float, bool, complex))
_COPY = []  # [the aten::copy_ overload], found on the first copy

def cast(t, dtype, memory_format=None):
    """``t.to(dtype)`` for the cast methods (``x.float()``, ``x.long(memory_format=...)``)."""
    return t.to(dtype) if memory_format is None else t.to(dtype, memory_format=memory_format)


def _ops():
    from .ops import bound

    return bound


def _set_part(part, value) -> None:
    """``x.real = value`` / ``x.imag = value``: copy (or fill with a number) into the part's view."""
    if hasattr(value, "_storage"):
        part.copy_(value)
    else:
        part.fill_(value)


def _varargs(args) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else tuple(args)


def _not_a_tensor(method: str, name: str, value) -> None:
    """torch's binding error for a method's Tensor argument (position 1: the first after ``self``)."""
    from .dispatch.argument_checks import arg_tensor

    arg_tensor(method, name, 1, value)


class TensorExtras:
    """Mixin of :class:`strided.Tensor` (no state of its own)."""

    def copy_(self, other, non_blocking=False):
        """Copy ``other`` into ``self`` (broadcast to its shape, cast to its dtype); a Python number is copied as
        torch copies one (Note [Numbers as tensors]). torch's method names the source ``other`` (the ATen
        schema: ``src``)."""
        if other.__class__ in _PY_NUMBERS or isinstance(other, np.generic):
            from .dispatch.numbers_as_tensors import wrapped_number

            other = wrapped_number(other, None, self.device)
        elif not hasattr(other, "_storage"):
            _not_a_tensor("copy_", "other", other)
        try:
            copy = _COPY[0]
        except IndexError:
            copy = _COPY.append(_ops().copy_.default) or _COPY[0]
        return copy(self, other, non_blocking)

    __slots__ = ()

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` after a backward has updated this leaf's ``.grad``; returns a handle whose
        ``remove()`` unregisters it."""
        from .autograd.graph import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    def share_memory_(self):
        """Move this tensor's CPU memory into shared memory (views included), so processes forked afterwards
        share it; a no-op for CUDA tensors and memory already shared (Note [Shared CPU memory])."""
        self._storage.share_memory_()
        return self

    def is_shared(self) -> bool:
        """Whether this tensor's memory is shared between processes (``share_memory_()``; CUDA: always)."""
        return self._storage.is_shared()

    # ------------------------------------------------------------------ predicates and queries
    def is_signed(self) -> bool:
        """True if the dtype is signed (floating dtypes are)."""
        return self.dtype.is_signed

    def is_nonzero(self) -> bool:
        """The truth value of a one-element tensor (torch's errors otherwise)."""
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def new(self, *args, **kwargs):
        """torch's legacy ``x.new(...)``: the legacy constructor (sizes, data, a tensor of this type, nothing) with
        this tensor's dtype and device (Note [Legacy constructors])."""
        from .legacy_tensor_types import legacy_new

        if not (len(args) == 1 and isinstance(args[0], TensorExtras)):  # Tensor(tensor) keeps that tensor's device
            kwargs.setdefault("device", self.device)
        return legacy_new(self.dtype, self.device.type, args, kwargs)

    def is_same_size(self, other) -> bool:
        """True if ``other`` has this tensor's shape."""
        if not isinstance(other, TensorExtras):
            _not_a_tensor("is_same_size", "other", other)
        return self._sizes == other._sizes

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for leaves)."""
        meta = self._autograd
        return 0 if meta is None or meta.grad_fn is None else meta.output_nr

    def dim_order(self) -> tuple:
        """The dims from outermost to innermost in memory (largest stride first; ties keep dim order)."""
        return tuple(sorted(range(len(self._sizes)), key=lambda d: -self._strides[d]))

    def const_data_ptr(self) -> int:
        """The address of the first element, for reading."""
        return self.data_ptr()

    def is_set_to(self, tensor) -> bool:
        """True if both tensors view the same storage with the same offset, sizes and strides."""
        if not isinstance(tensor, TensorExtras):
            _not_a_tensor("is_set_to", "tensor", tensor)
        return (self._storage is tensor._storage and self._offset == tensor._offset
                and self._sizes == tensor._sizes and self._strides == tensor._strides)

    # ------------------------------------------------------------------ short-time Fourier transforms
    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
             normalized=False, onesided=None, return_complex=None, align_to_window=None):
        """``strided.stft(self, ...)`` (Note [STFT composition] in stft.py)."""
        from .stft import stft

        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)

    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
              onesided=None, length=None, return_complex=False):
        """``strided.istft(self, ...)`` (Note [STFT composition] in stft.py)."""
        from .stft import istft

        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)

    # ------------------------------------------------------------------ complex parts and conjugation
    def is_conj(self) -> bool:
        """False: strided has no conjugate bit (Note [No conjugate bit] in ops/composite/complex_ops.py)."""
        return False

    def is_neg(self) -> bool:
        """False: strided has no negative bit (Note [No conjugate bit] in ops/composite/complex_ops.py)."""
        return False

    @property
    def real(self):
        """The real part: a view of a complex tensor, ``self`` for a real one (as torch)."""
        return _ops().real(self)

    @real.setter
    def real(self, value):
        _set_part(_ops().real(self), value)

    @property
    def imag(self):
        """The imaginary part of a complex tensor, a view (torch's error for real dtypes)."""
        return _ops().imag(self)

    @imag.setter
    def imag(self, value):
        _set_part(_ops().imag(self), value)

    @property
    def mH(self):  # noqa: N802 - torch's name
        """The conjugate transpose of the last two dims (their transpose for real dtypes)."""
        if len(self._sizes) < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {len(self._sizes)}-D tensor.")
        t = self.transpose(-2, -1)
        return t.conj() if self.dtype.is_complex else t

    @property
    def H(self):  # noqa: N802 - torch's name
        """The conjugate transpose of a matrix (its transpose for real dtypes)."""
        n = len(self._sizes)
        if n == 2:
            t = self.transpose(0, 1)
            return t.conj() if self.dtype.is_complex else t
        if n == 0:
            return self.conj()
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")

    # ------------------------------------------------------------------ casts and new tensors
    def byte(self, memory_format=None):
        """``self.to(strided.uint8)``."""
        return cast(self, _dt.uint8, memory_format)

    def char(self, memory_format=None):
        """``self.to(strided.int8)``."""
        return cast(self, _dt.int8, memory_format)

    def short(self, memory_format=None):
        """``self.to(strided.int16)``."""
        return cast(self, _dt.int16, memory_format)

    def cfloat(self, memory_format=None):
        """``self.to(strided.complex64)``."""
        return cast(self, _dt.complex64, memory_format)

    def cdouble(self, memory_format=None):
        """``self.to(strided.complex128)``."""
        return cast(self, _dt.complex128, memory_format)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """This tensor (strided tensors are dense), converted to ``dtype`` when given."""
        return self if dtype is None or dtype == self.dtype else self.to(dtype)

    @property
    def is_nested(self) -> bool:
        """False: strided has no nested tensors."""
        return False

    # Note [Layouts and devices strided lacks]: library code asks torch tensors ``x.is_sparse``,
    # ``x.is_quantized`` or ``x.is_mps`` before taking a special path; a strided tensor is dense, unquantized and on
    # a CPU, CUDA or Meta device, so each answers False (as a dense CPU torch tensor does).
    is_sparse = is_sparse_csr = is_quantized = is_mkldnn = property(lambda self: False)
    is_mps = is_xpu = is_ipu = is_xla = is_vulkan = is_maia = is_mtia = property(lambda self: False)

    def is_distributed(self) -> bool:
        """False: strided tensors are not distributed (torch's ``Tensor.is_distributed``)."""
        return False

    def narrow_copy(self, dim: int, start: int, length: int):
        """``strided.narrow_copy(self, dim, start, length)``: the narrowed view in new, contiguous memory."""
        from .view_copies import narrow_copy

        return narrow_copy(self, dim, start, length)

    def nonzero_static(self, *, size: int, fill_value: int = -1):
        """``strided.nonzero_static(self, size=size, fill_value=fill_value)``."""
        from .toplevel_functions import nonzero_static

        return nonzero_static(self, size=size, fill_value=fill_value)

    def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                          requires_grad=False):
        """An uninitialized tensor of ``size`` and ``stride``, this tensor's dtype and device by default."""
        from .factories import empty_strided

        t = empty_strided(tuple(size), tuple(stride), dtype=dtype or self.dtype, device=device or self.device)
        return t.requires_grad_(True) if requires_grad else t

    def sum_to_size(self, *size):
        """Sum this tensor down to ``size`` (which must expand to this tensor's shape)."""
        if not size:
            raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
        size = tuple(_varargs(size))
        n, k = len(self._sizes), len(size)
        ok = k <= n and all(s == 1 or s == self._sizes[n - k + i] for i, s in enumerate(size))
        if not ok:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self._sizes)}}}.")
        if not size:  # torch's sum_to: an empty shape is a full sum, which promotes integers (a 0-dim input too)
            return self.sum()
        lead = tuple(range(n - k))
        dims = lead + tuple(n - k + i for i, s in enumerate(size) if s == 1 and self._sizes[n - k + i] != 1)
        out = self.sum(list(dims), keepdim=True) if dims else self
        return out.reshape(size) if lead else out

    def round(self, *, decimals=None):  # noqa: A003 - torch's name
        """Round half to even; with ``decimals``, to that many decimal digits (``strided.round``)."""
        from .functional import round as _round

        return _round(self, decimals=decimals)

    def round_(self, *, decimals=None):
        """In-place :meth:`round`."""
        from .functional import round as _round

        return self.copy_(_round(self, decimals=decimals)) if decimals is not None else _ops().round_(self)

    def resize_as_(self, the_template, *, memory_format=None):
        """Resize this tensor to ``the_template``'s shape (``resize_``)."""
        if not isinstance(the_template, TensorExtras):
            _not_a_tensor("resize_as_", "the_template", the_template)
        return self.resize_(the_template.shape, memory_format=memory_format)

    def hardshrink(self, lambd: float = 0.5):
        """``strided.nn.functional.hardshrink(self, lambd)``."""
        from .nn.functional import hardshrink

        return hardshrink(self, lambd)

    def prelu(self, weight):
        """``strided.nn.functional.prelu(self, weight)``."""
        from .nn.functional import prelu

        return prelu(self, weight)

    # ------------------------------------------------------------------ Python callbacks (CPU only)
    def _callback_check(self, name: str, others=()) -> None:
        for t in (self, *others):
            if t.device.type not in ("cpu", "meta"):
                raise TypeError(f"{name} is only implemented on CPU tensors")

    def apply_(self, callable):  # noqa: A002 - torch's argument name
        """Replace each element ``x`` by ``callable(x)`` (CPU only, slow: a Python call per element)."""
        self._callback_check("apply_")
        return self._callback_write(callable, ())

    def map_(self, tensor, callable):  # noqa: A002
        """``self[i] = callable(self[i], tensor[i])``, ``tensor`` broadcast to ``self`` (CPU only)."""
        self._callback_check("map_", (tensor,))
        return self._callback_write(callable, (tensor,))

    def map2_(self, x, y, callable):  # noqa: A002
        """``self[i] = callable(self[i], x[i], y[i])``, ``x`` and ``y`` broadcast to ``self`` (CPU only)."""
        self._callback_check("map2_", (x, y))
        return self._callback_write(callable, (x, y))

    def _callback_write(self, fn, others):
        if self.device.type == "meta":
            return self
        import numpy as np

        from .factories import tensor as make

        others = [o.expand(self.shape).numpy() for o in others]
        mine = self.numpy()
        out = np.empty(mine.shape, dtype=mine.dtype)
        for idx in np.ndindex(mine.shape):
            out[idx] = fn(mine[idx].item(), *(o[idx].item() for o in others))
        self.copy_(make(out, dtype=self.dtype))
        return self
