"""The ``out=`` dtype each operator accepts: any the result can be cast to, or exactly the result's.

Note [Exact out dtypes]
torch's TensorIterator ops write ``out=`` through a cast, so ``torch.exp(x_float, out=y_double)`` is fine and
``write_out`` (``out_arguments.py``) only checks ``can_cast``. Many other kernels insist on the result's own dtype:
the structured non-TensorIterator ones (mm, gather, tril, softmax, the linalg solvers: "Expected out tensor to
have dtype float, but got double instead"), the unary ops TensorIterator builds with ``check_all_same_dtype``
(abs, neg, floor: "Found dtype Double but expected Float"), and a few dozen kernels with checks of their own words.
A script that writes ``mm(a, b, out=double)`` in strided would stop at that line in torch, so strided refuses
it in the same words. The table maps an operator's name (``linalg.`` names for ``strided.linalg``) to the
message of its refusal, given the result's dtype ``r`` and ``out``'s dtype ``o``; it was read off torch 2.14
by running every OpInfo that supports ``out=`` with an ``out`` of a wider dtype (scratch/out_dtype_sweep.py).
"""

from __future__ import annotations

from .. import dtypes as dt
from ..backends.meta.pointwise import scalar_type_name as _st
from ..backends.meta.pointwise import type_meta_name as _tm

__all__ = ["check_out_dtype", "tuple_out_dtype_error", "CASTING_TUPLE_OUTS"]

# the functions of several results whose ``out`` tensors torch casts into, as a single result's: the others want
# each result's own dtype (run_with_out)
CASTING_TUPLE_OUTS = frozenset(("linalg.lstsq", "geqrf", "lu"))


def _expected(r, o) -> str:
    return f"Expected out tensor to have dtype {_tm(r)}, but got {_tm(o)} instead"


def _found(r, o) -> str:
    return f"Found dtype {_st(o)} but expected {_st(r)}"


def _result_vs_input(r, o) -> str:
    return f"result dtype {_st(o)} does not match input dtype {_st(r)}"


def _scalar_type_found(r, o) -> str:
    return f"expected scalar_type {_st(r)} but found {_st(o)}"


def _object_of(r, o) -> str:
    return f"Expected object of scalar type {_st(r)} but got scalar type {_st(o)} for argument 'out'"


def _same_as_input(words: str):
    return lambda r, o: words


def _boolean_only(name: str):
    return lambda r, o: f"{name} does not support non-boolean outputs."


def _norm(name: str):
    return lambda r, o: f"{name} expected out tensor dtype {_st(r)} but got: {_st(o)}"


def _amax(r, o) -> str:
    return (f"Expected the dtype for input and out to match, but got {_st(r)} for input's dtype and {_st(o)} for "
            "out's dtype.")


def _tensordot(r, o) -> str:
    return f"tensordot: Expected the output tensor to have dtype {_st(r)}, but got an output tensor with dtype {_st(o)}"


_MESSAGES = {
    **dict.fromkeys((
        "mm", "bmm", "addmm", "_addmm_activation", "addmv", "baddbmm", "cross", "diag", "isin", "lu_solve", "softmax",
        "log_softmax", "slice_scatter", "gather", "index_copy", "index_add", "index_reduce", "scatter", "scatter_add",
        "scatter_reduce", "msort", "renorm", "take_along_dim", "tril", "triu", "norm", "argmax", "argmin",
        "linalg.cross", "linalg.det", "linalg.cholesky", "linalg.eigvalsh", "linalg.ldl_solve", "linalg.vector_norm",
        "linalg.lu_solve", "linalg.inv", "linalg.solve", "linalg.svdvals", "alias_copy", "as_strided_copy",
        "detach_copy", "diagonal_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy", "split_copy",
        "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
        "unsqueeze_copy", "view_copy", "view_as_real_copy", "view_as_complex_copy", "triangular_solve"), _expected),
    **dict.fromkeys(("abs", "absolute", "bitwise_not", "ceil", "conj_physical", "frac", "floor", "neg", "negative",
                     "round", "sign", "sgn", "trunc", "fix", "fft.ifft", "fft.ihfft"), _found),
    **dict.fromkeys(("dot", "vdot", "matmul"), _result_vs_input),
    **dict.fromkeys(("diff", "logcumsumexp"), _scalar_type_found),
    **dict.fromkeys(("complex", "polar"), _object_of),
    **dict.fromkeys(("quantile", "nanquantile"), _same_as_input(
        "quantile() out tensor must be same dtype as the input tensor")),
    **{name: _boolean_only(name) for name in ("signbit", "isposinf", "isneginf")},
    **dict.fromkeys(("amax", "amin"), _amax),
    **dict.fromkeys(("tensordot", "inner"), _tensordot),
    "addbmm": lambda r, o: f"self and mat2 must have the same dtype, but got {_st(o)} and {_st(r)}",
    "mv": lambda r, o: f"addmv input tensors must have the same dtype, but got {_st(o)}, {_st(r)}, and {_st(r)}",
    "linalg.solve_triangular": lambda r, o: f"expected scalar type {_st(r)} but found {_st(o)}",
    "masked_select": _same_as_input("masked_select(): self and result must have the same scalar type"),
    "index_select": _same_as_input("index_select(): self and result must have the same scalar type"),
    "heaviside": _same_as_input("heaviside is not yet implemented for tensors with different dtypes."),
    "narrow_copy": _same_as_input("Expected self.dtype() == output.dtype() to be true, but got false.  (Could this "
                                  "error message be improved?  If so, please report an enhancement request to "
                                  "PyTorch.)"),
    "ormqr": lambda r, o: (f"torch.ormqr: Expected input and result to have the same dtype, but input has dtype"
                           f"{_st(r)} and result has dtype {_st(o)}"),
    "float_power": lambda r, o: (f"the output given to float_power has dtype {_st(o)} but the operation's result "
                                 f"requires dtype {_st(r)}"),
    "nan_to_num": lambda r, o: f"nan_to_num: dtype of out: {_st(o)} should be same as input: {_st(r)}",
    "take": lambda r, o: (f"take(): self and out expected to have the same dtype, but got self.dtype = {_st(r)} and "
                          f"out.dtype = {_st(o)}"),
    "histc": lambda r, o: (f"torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                           f"{_tm(r)} and hist {_tm(o)}"),
    **dict.fromkeys(("searchsorted", "bucketize"), lambda r, o: (
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending on "
        f"whether out_int32 flag is True, but we got output tensor's dtype {_st(o)} and out_int32 flag is "
        f"{r is dt.int32}")),
    "nonzero": lambda r, o: f"nonzero: Expected out tensor to have scalar type Long but got scalar type{_st(o)}",
    "linalg.norm": _norm("linalg.norm"),
    "linalg.matrix_norm": _norm("linalg.matrix_norm"),
    "linalg.vecdot": lambda r, o: f"linalg.vecdot: Expected out of dtype{_st(r)} but found {_st(o)}",
    "linalg.multi_dot": lambda r, o: f"multi_dot(): expected out tensor to have dtype {_tm(r)} but got {_tm(o)}",
    "multinomial": lambda r, o: f"multinomial expects Long tensor out, got: {_st(o)}",
}
# all / any write a bool result into a bool or uint8 ``out`` (uint8: the legacy form), whatever the input
_BOOL_REDUCTIONS = frozenset(("all", "any"))


def check_out_dtype(name: str | None, result_dtype, out_dtype) -> None:
    """Raise torch's error when operator ``name`` (``linalg.``-qualified for strided.linalg) refuses an ``out`` of
    ``out_dtype`` for a result of ``result_dtype`` (Note [Exact out dtypes]); the cast check is the caller's."""
    if out_dtype is result_dtype or name is None:
        return
    if name in _BOOL_REDUCTIONS:
        if out_dtype is not dt.bool and out_dtype is not dt.uint8:
            raise RuntimeError(f"{name} only supports bool tensor for result, got: {_st(out_dtype)}")
        return
    message = _MESSAGES.get(name)
    if message is not None:
        raise RuntimeError(message(result_dtype, out_dtype))


def _values_indices(values: str, indices: str):
    return lambda i, r, o: values if i == 0 else indices


_TUPLE_MESSAGES = {
    **dict.fromkeys(("cummax", "cummin"), lambda i, r, o: _scalar_type_found(r, o)),
    "native_batch_norm": lambda i, r, o: f"expected scalar type {_st(r)} but found {_st(o)}",
    "frexp": lambda i, r, o: (f"torch.frexp() expects mantissa to have dtype {_tm(r)} but got {_tm(o)}" if i == 0 else
                              f"torch.frexp() expects exponent to have int dtype but got {_tm(o)}"),
    "kthvalue": _values_indices("output values must be of same type as input",
                                "output indices must be of scalar type Long"),
    "mode": lambda i, r, o: (f"expected scalar type '{_st(r)}' but got '{_st(o)}' for "
                             f"{'values' if i == 0 else 'indices'} output"),
    "histogram": lambda i, r, o: (
        f"torch.histogram: input tensor and {'hist' if i == 0 else 'bin_edges'} tensor should have the same dtype, "
        f"but got input {_tm(r)} and {'hist' if i == 0 else 'bin_edges'} {_tm(o)}" + ("" if i == 0 else
                                                                                      " for dimension 0")),
}


def tuple_out_dtype_error(name: str, i: int, result_dtype, out_dtype) -> RuntimeError:
    """torch's error for result ``i`` of a function of several results written into an ``out`` of another dtype."""
    message = _TUPLE_MESSAGES.get(name)
    if message is None:
        return RuntimeError(_expected(result_dtype, out_dtype))
    return RuntimeError(message(i, result_dtype, out_dtype))
