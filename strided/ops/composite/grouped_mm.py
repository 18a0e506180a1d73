"""``_grouped_mm`` (``F.grouped_mm``): one GEMM per group of a Mixture-of-Experts layer, the groups' extents in
``offs``.

Note [Grouped GEMM as GEMMs]
torch runs the groups as one grouped-GEMM kernel (CUTLASS on CUDA, a loop of ``mm`` on the CPU). Here they are a
loop of ``mm`` on every backend, sliced by the offsets, so autograd differentiates through the slices and the
products (torch's one ``GroupedMmBackward0`` node is a cat / stack of ``MmBackward0`` nodes here). The four
layouts, ``offs[g]`` the end of group g (the previous end, or 0, its start):

    mat_a (M, K)    mat_b (G, K, N)   rows of mat_a grouped           -> (M, N)
    mat_a (G, M, K) mat_b (K, N)      columns of mat_b grouped        -> (M, N)
    mat_a (M, K)    mat_b (K, N)      the contraction K grouped       -> (G, M, N)
    mat_a (G, M, K) mat_b (G, K, N)   no offs: a batched GEMM         -> (G, M, N)

Rows or columns past ``offs[-1]`` are zeros (torch leaves them uninitialized); offsets that decrease or pass the
end are clamped (torch does not check them). The offsets are read on the host: on CUDA one synchronization per
call, where torch's kernel reads them on the device. torch's checks come first, in its order and words -- the
dtypes (float32, bfloat16, float16), 2-d or 3-d operands, the 16-byte stride rule of its kernels (one of the last
two dims contiguous, the other's stride a multiple of 16 bytes), int32 1-d offsets exactly when an operand is
2-d, no bias, no other output dtype -- and the output's last-dim stride is padded to 16 bytes as torch's is.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...backends.meta.pointwise import scalar_type_name
from ...dispatch.library import kernel
from ...strides import contiguous_strides
from .. import bound as ops

__all__ = []

_DTYPES = (dt.float32, dt.bfloat16, dt.float16)


def _check_strides(mat) -> None:
    """torch's ``check_valid_strides_and_return_transposed``: its grouped kernels' layout rule."""
    if mat.device.type != "meta" and mat.data_ptr() % 16:
        raise RuntimeError("expected data_ptr to be aligned to 16 bytes\n")
    alignment = 16 // mat.dtype.itemsize
    (size_m, size_n), (stride_m, stride_n) = mat._sizes[-2:], mat._strides[-2:]
    if stride_n == 1 and stride_m >= max(1, size_n):
        major = stride_m
    elif stride_m == 1 and stride_n >= max(1, size_m):
        major = stride_n
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(mat._strides)} for strides and {list(mat._sizes)} "
                           f"for sizes")
    if major % alignment:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _check(a, b, offs, bias, out_dtype) -> None:
    for name, m in (("mat_a", a), ("mat_b", b)):
        if m.dtype not in _DTYPES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{scalar_type_name(m.dtype)}")
    for name, m in (("mat_a", a), ("mat_b", b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    a_2d, b_2d = a.dim() == 2, b.dim() == 2
    if not (a_2d and b_2d) and a._sizes[-1] != b._sizes[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_strides(a)
    _check_strides(b)
    if (offs is not None) != (a_2d or b_2d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype is not dt.int32:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if a_2d != b_2d and offs.shape[0] != (b if a_2d else a)._sizes[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if not (a_2d or b_2d) and a._sizes[0] != b._sizes[0]:
        raise RuntimeError("batched dimension has to match")


def _extents(offs, length: int) -> list[tuple[int, int]]:
    """(start, end) of each group, clamped to [0, length] and never decreasing."""
    out, start = [], 0
    for end in offs.tolist():
        end = min(max(end, start), length)
        out.append((start, end))
        start = end
    return out


def _with_tail(pieces: list, dim: int, sizes: tuple, like):
    """``pieces`` joined along ``dim``, zeros (of ``like``'s dtype and device) after them up to ``sizes[dim]``."""
    done = sum(p.shape[dim] for p in pieces)
    if done < sizes[dim]:
        tail = list(sizes)
        tail[dim] = sizes[dim] - done
        pieces = [*pieces, ops.zeros(tail, dtype=like.dtype, device=like.device)]
    return ops.cat(pieces, dim)


@kernel("CompositeImplicitAutograd")
def _grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None):
    """The grouped matrix product of ``self`` (mat_a) and ``mat2`` (mat_b) (Note [Grouped GEMM as GEMMs])."""
    a, b = self, mat2
    _check(a, b, offs, bias, out_dtype)
    a_2d, b_2d = a.dim() == 2, b.dim() == 2
    if a_2d and b_2d:
        sizes = (offs.shape[0], a._sizes[0], b._sizes[1])
    else:
        sizes = (*a._sizes[:-1], b._sizes[-1]) if not a_2d and not b_2d else (a._sizes[-2], b._sizes[-1])
    if a.device.type == "meta":
        out = ops.empty(sizes, dtype=a.dtype, device=a.device)
    elif not (a_2d or b_2d):
        out = ops.bmm(a, b)
    elif a_2d and b_2d:
        k = a._sizes[1]
        out = ops.stack([ops.mm(ops.slice(a, 1, s, e), ops.slice(b, 0, s, e)) for s, e in _extents(offs, k)])
    elif a_2d:
        m = a._sizes[0]
        pieces = [ops.mm(ops.slice(a, 0, s, e), ops.select(b, 0, g)) for g, (s, e) in enumerate(_extents(offs, m))]
        out = _with_tail(pieces, 0, sizes, a)
    else:
        n = b._sizes[1]
        pieces = [ops.mm(ops.select(a, 0, g), ops.slice(b, 1, s, e)) for g, (s, e) in enumerate(_extents(offs, n))]
        out = _with_tail(pieces, 1, sizes, a)
    alignment = 16 // a.dtype.itemsize
    last = sizes[-1]
    if last % alignment == 0:
        return out
    strides = contiguous_strides((*sizes[:-1], -(-last // alignment) * alignment))  # torch's rows padded to 16 bytes
    padded = ops.empty_strided(sizes, strides, dtype=a.dtype, device=a.device)
    return ops.copy_(padded, out) if a.device.type != "meta" else padded
