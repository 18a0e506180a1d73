"""How cuBLASLt reads a row-major operand: transpose, leading dimension, batch stride, or a copy.

Note [Row-major GEMM on cuBLASLt]
cuBLASLt is column-major.  A contiguous row-major ``out[M, N]`` is the column-major matrix
``D = outᵀ`` (N × M, ld N), and ``outᵀ = bᵀ aᵀ``: cuBLAS's A comes from ``b`` and its B from
``a`` (torch's ``prepare_matrix_for_cublas`` with ``transpose_result``).  A row-major operand
X (r × c, strides s0, s1) supplies ``Xᵀ`` without a copy in two ways: rows contiguous
(``s1 == 1``, ``s0 >= c``) — Xᵀ *is* a column-major matrix with ld s0, op N; or columns
contiguous (``s0 == 1``, ``s1 >= r``) — X is column-major with ld s1, op T.  Size-1 dims
ignore their stride.  Only an operand fitting neither (e.g. a stride-2 slice of the last dim,
an expanded dim) is copied to contiguous.  3-D operands add a batch stride, 0 for a broadcast
batch (``expand``), which cuBLASLt reads as "the same matrix for every batch".
"""

from __future__ import annotations

__all__ = ["OP_N", "OP_T", "layout", "operand", "dims", "geometry", "ptr", "align"]

OP_N, OP_T = 0, 1  # cublasOperation_t: CUBLAS_OP_N, CUBLAS_OP_T (blas.py checks them against the bindings)


def layout(t, r: int, c: int):
    """(op, rows, cols, ld) of a column-major P with op(P) = Xᵀ for X = t's last two dims (r × c), or None.

    Note [Row-major GEMM on cuBLASLt].
    """
    s0, s1 = t._strides[-2], t._strides[-1]
    if (c == 1 or s1 == 1) and (r == 1 or s0 >= c):
        return OP_N, c, r, s0 if r > 1 else c
    if (r == 1 or s0 == 1) and (c == 1 or s1 >= r):
        return OP_T, r, c, s1 if c > 1 else r
    return None


def operand(t, r: int, c: int):
    """``(t or a contiguous copy of it, layout)``: the copy only when ``t`` fits no layout."""
    lay = layout(t, r, c)
    if lay is None:
        t = t.contiguous()
        lay = layout(t, r, c)
    return t, lay


# Note [GEMM geometry memo]
# A model multiplies the same few operand layouts every step. Whether cuBLASLt can read each operand
# in place, and with which transpose, leading dimension and batch stride, depends only on the sizes
# and strides of the operands and of the output, so that is memoized per layout (bounded: cleared
# past 4096 entries). Layouts that need a contiguous copy are not memoized: they take operand() each
# call. The data pointers (and so the alignments in the plan key) are read on every call.
_GEOMETRY: dict = {}


def dims(a, sizes) -> tuple:
    """(M, N, K, batch) of a GEMM writing ``sizes`` from ``a``'s (…, M, K)."""
    return sizes[-2], sizes[-1], a._sizes[-1], sizes[0] if len(sizes) == 3 else 1


def geometry(a, b, sizes):
    """(M, N, K, batch, ta, lda, tb, ldb, sa, sb) when both operands are read in place, else None
    (memoized per layout: Note [GEMM geometry memo])."""
    key = (a._sizes, a._strides, b._sizes, b._strides, sizes)
    geo = _GEOMETRY.get(key)
    if geo is None:
        M, N, K, batch = dims(a, sizes)
        lb, la = layout(b, K, N), layout(a, M, K)
        if lb is None or la is None:
            return None
        sa = b._strides[0] if batch > 1 else 0
        sb = a._strides[0] if batch > 1 else 0
        if len(_GEOMETRY) > 4096:
            _GEOMETRY.clear()
        geo = _GEOMETRY[key] = (M, N, K, batch, lb[0], lb[3], la[0], la[3], sa, sb)
    return geo


def ptr(t, isz: int) -> int:
    """``t.data_ptr()`` of a CUDA tensor without its two method calls (0 for an empty storage)."""
    base = t._storage._data_ptr
    return base + t._offset * isz if base else 0


def align(ptr: int) -> int:
    """The alignment cuBLASLt may assume for an operand at ``ptr`` (at most 256 bytes)."""
    return min(ptr & -ptr, 256) if ptr else 256
