"""The first CUDA kernels, registered under the YAML's names: factories, fill, copies, random."""

from __future__ import annotations

import warnings

import numpy as np

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....random import default_generator_for
from ....ops import bound as ops_bound
from ....tensor import Tensor, contiguous_strides, is_row_major
from ...meta import factories as meta
from ...meta.common import new_output
from .. import driver
from ..allocator import allocate_storage
from ..capture import captures_underway, stream_is_capturing
from ..copies import copy_ as _copy_impl
from ..driver import check, cu
from ..graphs import capture_philox
from ..streams import current_stream_handle
from ..sync_debug import stream_synchronize
from . import arange_kernel, copy_kernel, fill_kernel, random_kernel

__all__ = []

if not driver.is_available():  # the dispatcher reads ImportError as "CUDA backend not available"
    raise ImportError("no usable CUDA driver/device (strided.cuda.is_available() is False)")

from . import optim_ops  # noqa: E402, F401 - fused optimizers (multi-tensor)
from . import foreach_ops  # noqa: E402, F401 - _foreach_* on the multi-tensor kernels
from . import reduction_ops  # noqa: E402, F401 - reductions, cumsum, softmax, layer_norm, losses

kernel("CUDA")(meta.empty)
kernel("CUDA")(meta.empty_strided)
kernel("CUDA")(meta.set_)
kernel("CUDA")(meta.set_source_storage)
kernel("CUDA")(meta.set_source_tensor)
kernel("CUDA")(meta.set_empty)


@kernel("CUDA")
def fill_(self, value):
    meta.fill_(self, value)
    if isinstance(value, Tensor):
        value = value.item()
    if self.dtype.is_complex:
        return complex_ops.fill_complex(self, value)
    if self.dtype is dt.bool:
        value = bool(value)
    i = self.device.index
    fill_kernel(i, self.dtype, self.data_ptr(), self._sizes, self._strides, value, current_stream_handle(i))
    return self


@kernel("CUDA")
def copy_(self, src, non_blocking=False):
    meta.copy_(self, src, non_blocking)
    if self.device.type == "meta" or src.device.type == "meta":
        if src.device.type == "meta" and self.device.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self
    if src.dtype.is_complex and not self.dtype.is_complex and self.dtype is not dt.bool:  # torch's copy_ (Copy.cpp)
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
    return _copy_impl(self, src, non_blocking)


# Note [CUDA clone]
# clone is CompositeExplicitAutograd (empty_like + copy_): two more dispatches, the copy's Meta
# checks and its broadcasting, about half of a clone's host cost. The CUDA kernel allocates the
# result with the composite's strides (preserve_format: a contiguous or non-dense input gives a
# contiguous result, a dense permuted one the same strides) and queues one copy: a memcpy when the
# layouts match, the strided copy kernel otherwise. channels_last requests take the composite.
@kernel("CUDA")
def clone(self, *, memory_format=None):
    sizes = self._sizes
    if memory_format in (None, "preserve_format"):
        if not self.is_contiguous() and self._is_non_overlapping_and_dense():
            strides = self._strides
        else:
            strides = contiguous_strides(sizes)
    elif memory_format == "contiguous_format":
        strides = contiguous_strides(sizes)
    else:
        out = ops_bound.empty_like(self, memory_format=memory_format).copy_(self)
        out._storage._version = 0  # a new tensor starts at version 0, as torch's
        return out
    out = new_output(sizes, self.dtype, self.device, strides)
    n = out.numel()
    if n:
        i = self.device.index
        stream = current_stream_handle(i)
        if strides == self._strides:  # one dense block, same element order
            driver.ensure_context(i)
            check(cu().cuMemcpyAsync(out.data_ptr(), self.data_ptr(), n * self.dtype.itemsize, stream))
        else:
            copy_kernel(i, self.dtype, self.dtype, out.data_ptr(), self.data_ptr(), sizes, strides, self._strides,
                        stream)
    return out


@kernel("CUDA")
def arange(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = meta.arange(start, end, step, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    i = out.device.index
    arange_kernel(i, out.dtype, out.data_ptr(), out._sizes[0], start, step, current_stream_handle(i))
    return out


@kernel("CUDA")
def _local_scalar_dense(self):
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    i = self.device.index
    host = np.empty(1, dtype=self.dtype.numpy_dtype)
    stream = current_stream_handle(i)
    driver.ensure_context(i)
    check(cu().cuMemcpyDtoHAsync(host.ctypes.data, self.data_ptr(), self.dtype.itemsize, stream))
    stream_synchronize(stream, i)  # raises a kernel's pending index error (Note [Deferred index errors])
    v = host[0]
    if self.dtype is dt.bool:
        return bool(v)
    if self.dtype.is_floating_point:
        return float(v)
    if self.dtype.is_complex:
        return complex(v)
    return int(v)


@kernel("CUDA")
def resize_(self, size, *, memory_format=None):
    old = self._storage
    old_ptr, old_n, keep = old._data_ptr, old.nbytes(), old.owner  # keep the old block until copied
    meta.resize_(self, size, memory_format=memory_format)  # grows the storage object in place
    if old._data_ptr != old_ptr and old_n:
        i = self.device.index
        driver.ensure_context(i)
        check(cu().cuMemcpyAsync(old._data_ptr, old_ptr, old_n, current_stream_handle(i)))
    del keep
    return self


def _random(self, mode, generator, a=0.0, b=0.0, lo=0, rng=1, prob=None):
    i = self.device.index
    stream = current_stream_handle(i)
    gen = generator if generator is not None else default_generator_for(self.device)
    state_ptr = 0
    if captures_underway() and stream_is_capturing(stream):  # Note [Random ops under capture]
        state_ptr, offset = capture_philox(gen, stream, self.device)
    else:
        offset = gen.philox_offset
        gen.philox_offset = offset + 1
    n = self.numel()
    dense = is_row_major(self._sizes, self._strides)
    target = self if dense else _empty_dense(self)
    prob_ptr = 0
    keep = None
    if prob is not None:
        keep = prob.to(dtype=self.dtype).contiguous()
        prob_ptr = keep.data_ptr()
    random_kernel(i, self.dtype, target.data_ptr(), n, gen.initial_seed(), offset, mode, a, b, lo, rng,
                  prob_ptr, stream, state_ptr)
    if not dense:
        copy_kernel(i, self.dtype, self.dtype, self.data_ptr(), target.data_ptr(), self._sizes,
                    self._strides, _dense(self._sizes), stream)
    del keep
    return self


def _dense(sizes):
    out, acc = [], 1
    for n in reversed(sizes):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _empty_dense(t: Tensor) -> Tensor:
    from ....tensor import make_tensor

    st = allocate_storage(t.numel() * t.dtype.itemsize, t.device)
    return make_tensor(st, 0, t._sizes, _dense(t._sizes), t.dtype)


@kernel("CUDA")
def uniform_(self, from_=0, to=1, *, generator=None):
    meta.uniform_(self, from_, to)
    return _random(self, 0, generator, from_, to)


@kernel("CUDA")
def normal_(self, mean=0, std=1, *, generator=None):
    meta.normal_(self, mean, std)
    return _random(self, 1, generator, mean, std)


@kernel("CUDA")
def random_(self, from_, to, *, generator=None):
    meta.random_(self, from_, to)
    if to is None:
        if self.dtype.is_floating_point:
            to = 2 ** dt.mantissa_digits(self.dtype) + 1
        elif self.dtype is dt.bool:
            to = 2
        else:
            to = 2 ** (8 * self.dtype.itemsize - (1 if self.dtype.is_signed else 0))
    return _random(self, 2, generator, lo=int(from_), rng=int(to) - int(from_))


@kernel("CUDA")
def bernoulli(self, *, generator=None):
    out = meta.bernoulli(self)
    return _random(out, 3, generator, prob=self)


@kernel("CUDA")
def bernoulli_(self, p=0.5, *, generator=None):
    meta.bernoulli_(self, p)
    return _random(self, 3, generator, a=float(p))


# Joining, indexing, sorting, tril/triu, one_hot, linspace, eye (registered on import).
from . import advanced_indexing_ops  # noqa: E402, F401
from . import indexing_ops  # noqa: E402, F401
from . import joining_ops  # noqa: E402, F401
from . import sort_ops  # noqa: E402, F401
from . import recurrent_ops  # noqa: E402, F401
from . import pooling_ops  # noqa: E402, F401 - max_pool2d_with_indices, avg_pool2d and their backwards
from . import im2col_ops  # noqa: E402, F401 - im2col / col2im: F.unfold / F.fold, convolution columns
from . import convolution_ops  # noqa: E402, F401 - the convolution op: im2col and cuBLASLt GEMMs, no dispatcher
from . import batch_norm_ops  # noqa: E402, F401 - native_batch_norm and its backward, two launches each
from . import group_norm_ops  # noqa: E402, F401 - native_group_norm and its backward, two passes each way
from . import scan_index_ops  # noqa: E402, F401
from . import blas_ops  # noqa: E402, F401
from . import bitwise_ops  # noqa: E402, F401
from . import binary_math_ops  # noqa: E402, F401
from . import math_more_ops  # noqa: E402, F401 - igamma, gcd, lcm, nextafter, frexp
from . import scatter_reduce_ops  # noqa: E402, F401
from . import linalg_triangular_ops  # noqa: E402, F401
from . import linalg_lu_ops  # noqa: E402, F401
from . import linalg_orthogonal_ops  # noqa: E402, F401
from . import linalg_eig_ops  # noqa: E402, F401 - linalg_eig on a host copy (Note [eig on the host])
from . import linalg_ldl_ops  # noqa: E402, F401 - LDL on a host copy, as eig
from . import linalg_complex  # noqa: E402, F401 - complex factorizations (Note [Complex linear algebra on CUDA])
from . import random_samplers_ops  # noqa: E402, F401
from . import fft_ops  # noqa: E402, F401 - _fft_c2c, _fft_r2c, _fft_c2r (Note [CUDA FFT])

# Pointwise binary/ternary/unary ops on the elementwise engine, and the direct in-place kernels.
from . import pointwise_ops  # noqa: E402
from . import complex_ops  # noqa: E402 - conj_physical, angle, polar, complex (complex.cuh)

from . import inplace_ops  # noqa: E402

inplace_ops.register_inplace()
