"""Which operators take complex tensors (Note [Complex operators]).

Note [Complex operators]
A complex tensor's ``_key`` carries ``COMPLEX_BIT`` (dispatch/keys.py) beside its backend key, so a
call with a complex argument computes a keyset of its own, and the dispatcher resolves that keyset
once, like any other (no per-call cost for real tensors, one cached lookup for complex ones). At
resolution it asks ``complex_supported``: the op must be listed here for the backend, else the
cached kernel raises torch's AT_DISPATCH error (``"relu_cpu" not implemented for 'ComplexFloat'``).
An op with no kernel for the backend at all gets the dispatcher's own "Could not run 'aten::foo'
with arguments from the 'CUDA' backend" instead, complex or not: the dtype is not what is missing.
This is strided's guard against silent wrong answers: NumPy would run most CPU kernels on complex
arrays with its own semantics (ordering complex numbers by real part, for one), so an op is listed
only when its kernels (and its Meta function's dtype rule, and its derivative) were written and
tested for complex values. A composite op is listed only when the ops it calls are.
Ops whose inputs are real and whose output is complex (``polar``, ``complex``, ``view_as_complex``,
factories with ``dtype=complex64``) never see the bit; their kernels handle the dtype themselves.
"""

from __future__ import annotations

from ..dispatch.keys import BACKEND_NAMES, DispatchKey

__all__ = ["COMPLEX_OPS", "CUDA_COMPLEX_OPS", "complex_supported", "complex_refusal", "refuse_complex"]

# Layout: storage, views and copies move bytes whatever they mean.
_LAYOUT = {
    "empty_like", "zeros_like", "ones_like", "full_like", "new_empty", "new_zeros", "new_ones", "new_full",
    "new_empty_strided", "clone", "copy_", "_to_copy", "contiguous", "detach", "alias", "set_", "resize_",
    "view", "view_as", "_unsafe_view", "reshape", "reshape_as", "as_strided", "transpose", "transpose_", "t", "permute",
    "expand", "expand_as", "broadcast_to", "broadcast_tensors", "select", "slice", "narrow", "unsqueeze", "unsqueeze_",
    "squeeze", "squeeze_", "flatten", "unflatten", "split", "split_with_sizes", "chunk", "unbind", "movedim",
    "swapaxes", "cat", "stack", "fill_", "zero_", "_local_scalar_dense", "type_as", "unfold",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",  # chunk / split, the outputs unmarked as views
    "as_strided_", "t_",
    "constant_pad_nd",  # a fill and a copy (Note [Constant padding])
}
# Complex math with complex kernels (CPU through NumPy's complex ufuncs). ``polar``, ``complex`` and
# ``view_as_complex`` take real tensors; they are listed so that a complex argument reaches their Meta
# checks and torch's words ("Expected both inputs to be Half, Float or Double tensors ...").
_MATH = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "neg_", "eq", "ne", "eq_", "ne_",
    "real", "imag", "view_as_real", "view_as_complex", "conj", "conj_physical", "conj_physical_", "resolve_conj",
    "resolve_neg", "abs", "angle", "sgn", "sgn_", "exp", "exp_", "sum", "mean", "polar", "complex",
    "_fft_r2c", "_fft_c2r", "_fft_c2c",  # Note [FFT ops]; Note [CUDA FFT] (backends/cuda/kernels/fft_ops.py)
    "linalg_eig", "linalg_eigvals", "_linalg_eigvals",  # geev (backends/cpu/linalg_eig.py)
    "linalg_ldl_factor_ex", "linalg_ldl_solve",  # Note [Bunch-Kaufman LDL]
}

# The common math (Note [Complex math ops] in backends/cpu/complex_math.py), the matrix products (NumPy on the
# CPU, cuBLASLt's complex types on CUDA: Note [Complex GEMM]) and the accumulating scatters of index_select's
# and gather's gradients (np.add.at; on CUDA the real atomics over the pairs, Note [Complex gathers]), on every
# backend.
_COMMON_MATH = {
    "sqrt", "sqrt_", "rsqrt", "rsqrt_", "log", "log_", "log1p", "log1p_", "sin", "sin_", "cos", "cos_", "tan",
    "tan_", "sinh", "sinh_", "cosh", "cosh_", "tanh", "tanh_", "sigmoid", "sigmoid_", "reciprocal", "reciprocal_",
    "square", "square_", "pow", "pow_", "isnan", "isinf", "isfinite", "where", "masked_fill", "masked_fill_",
    "prod", "cumsum", "cumsum_", "flip", "roll", "index_select", "gather",
    "matmul", "mm", "bmm", "index_add", "scatter_add", "index_add_", "scatter_add_",
    # composites over the ops above (Note [Complex operators]: listed once their callees are)
    "diagonal", "repeat", "einsum", "tensordot", "dot", "vdot", "inner", "outer", "trace", "diag",
    "count_nonzero", "masked_select", "index", "index_put", "index_put_", "nonzero",
    "rand_like", "randn_like",  # each part sampled through the real view (ops/composite/factories.py)
    "log2", "log10", "exp2", "expm1", "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "cumprod",
    "log2_", "log10_", "exp2_", "expm1_", "cumprod_",
    # each part apart, through real / imag
    "nan_to_num", "nan_to_num_",
    # torch's aliases of the ops above
    "true_divide", "true_divide_", "divide", "divide_", "multiply", "multiply_", "subtract", "subtract_", "rsub",
    "absolute", "absolute_", "negative", "negative_", "positive", "arccos", "arccos_", "arcsin", "arcsin_",
    "arctan", "arctan_", "arcsinh", "arcsinh_", "arccosh", "arccosh_", "arctanh", "arctanh_",
    # inverse trigonometry (CUDA: Note [Complex inverse trigonometry] in complex_inverse_trig.cuh)
    "asin", "asin_", "acos", "acos_", "atan", "atan_", "asinh", "asinh_", "acosh", "acosh_", "atanh", "atanh_",
    # composites over listed ops: layout, stacking, gathers (values and gradients compared with torch)
    "fliplr", "flipud", "rot90", "tile", "block_diag", "adjoint", "tensor_split", "hsplit", "vsplit", "dsplit",
    "hstack", "vstack", "dstack", "column_stack", "row_stack", "atleast_1d", "atleast_2d", "atleast_3d", "moveaxis",
    "swapdims", "ravel", "diag_embed", "diagflat", "kron", "diff", "take", "take_along_dim", "index_fill",
    "index_fill_", "index_copy", "index_copy_", "masked_scatter", "masked_scatter_", "trapezoid", "cross",
    "linalg_cross", "dist", "isreal", "sinc", "sinc_", "vander", "chain_matmul", "trapz",
    # truth values, "either part nonzero" (CUDA: ne(z, 0) first, the bool kernels having no complex loads)
    "any", "all", "logical_not", "logical_and", "logical_or", "logical_xor",
    # the GEMMs with a C operand (cuBLASLt's complex alpha and beta, no bias epilogue: Note [CUDA GEMM lowering])
    # and their composites
    "addmm", "addmm_", "baddbmm", "baddbmm_", "linear", "mv", "addmv", "addmv_", "addr", "addr_", "addbmm",
    "addbmm_", "ger",
}

# Real results: the norm of the moduli, E|z - mean|^2 (CUDA: Note [Complex var]); the triangles (CUDA: the real
# kernel over the pairs)
_SPREADS_AND_TRIANGLES = {"norm", "var", "std", "var_mean", "std_mean", "tril", "triu", "tril_", "triu_"}

# scatter (CUDA: whole elements through an int64 scatter of positions, Note [Complex scatter] in
# backends/cuda/kernels/complex_ops.py) and float_power (a composite over complex128 pow)
_SCATTER_AND_FLOAT_POWER = {"scatter", "scatter_", "float_power", "float_power_"}

# the log-sum-exps (Note [Complex log-sum-exp]; CUDA: Note [Complex log-sum-exp on CUDA], through the ops above)
_LOG_SUM_EXP = {"logsumexp", "logcumsumexp"}
# scatter_reduce (the CPU: sum, prod and mean through NumPy's ufunc.at; CUDA: sum, as torch's; the functional form has
# no complex gradient, as in torch, and the in-place one torch's formula) and put (a composite over index_put)
_SCATTER_REDUCE_AND_PUT = {"scatter_reduce", "scatter_reduce_", "_scatter_reduce_backward", "put", "put_"}
# compositions of layout ops, gathers and cumsum (values and gradients compared with torch)
_GRIDS_AND_REPEATS = {"meshgrid", "cartesian_prod", "repeat_interleave", "fill_diagonal_", "cumulative_trapezoid",
                      "combinations"}

# c10's complex log-add-exp (CPU: backends/cpu/complex_math.py; CUDA: complex.cuh) and silu's x / (1 + exp(-x))
_LOGADDEXP_AND_SILU = {"logaddexp", "silu"}
# the covariance's conjugated product and the correlation's real-part deviations (torch's Correlation.cpp),
# ldexp (self * 2 ** other), renorm (slices scaled by their real norms) and embedding (rows gathered; no complex
# gradient, as torch); compositions of listed ops on every backend (CUDA: tests/cuda/test_complex_cov_norms_cuda.py)
_COVARIANCES_AND_GATHERS = {"cov", "corrcoef", "ldexp", "ldexp_", "renorm", "renorm_", "embedding"}

# torch's aliases (ops/composite/aliases_more.py) call their op, which takes complex or refuses it in its own words,
# as torch's aliases do (``greater_equal`` of complex: "ge_cpu" not implemented); the *_scatter ops write ``src``
# into a clone through a view (select, slice, diagonal: index_put; as_strided: index_put at linear positions)
_ALIAS_TARGETS = {"absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "negative", "fix",
                  "arctan2", "greater", "greater_equal", "less", "less_equal", "not_equal", "multiply"}
_ALIASES_AND_SCATTER_VIEWS = _ALIAS_TARGETS | {a + "_" for a in _ALIAS_TARGETS} | {
    "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter"}

# F.unfold / F.fold's columns: a window view copied, strided adds (their composites in ops/composite/im2col.py;
# the CUDA kernels take the real floating dtypes and hand complex to the composites); the convolution op, columns
# times the weight (ops/composite/convolution.py; its gradient conjugates: Note [Convolution backward])
_COLUMNS = {"im2col", "col2im", "convolution"}

# the factorization ops (Note [Complex linear algebra on the CPU] in linalg/_common.py): the LU, triangular-solve and
# Cholesky composites on complex values, NumPy's zheevd, zgesdd and zgeqrf / zungqr (Householder QR, geqrf); on
# CUDA the composites on the device and LAPACK on a host copy (Note [Complex linear algebra on CUDA])
_FACTORIZATIONS = {"_linalg_tri_solve", "_linalg_lu_factor", "_linalg_cholesky_lower", "_linalg_symmetric_jacobi",
                   "_linalg_onesided_jacobi", "_linalg_householder_qr", "geqrf"}

# the truth-value ops' in-place forms (the autogen kernel: the functional op, then its bools copied into the complex
# tensor, as torch's), on every backend (CUDA: tests/cuda/test_opinfo_sample_fixes_cuda.py)
_INPLACE_TRUTH = {"logical_and_", "logical_or_", "logical_xor_", "logical_not_"}

COMPLEX_OPS = frozenset(_LAYOUT | _MATH | _COMMON_MATH | _SPREADS_AND_TRIANGLES | _SCATTER_AND_FLOAT_POWER
                        | _LOG_SUM_EXP | _SCATTER_REDUCE_AND_PUT | _GRIDS_AND_REPEATS | _LOGADDEXP_AND_SILU
                        | _COVARIANCES_AND_GATHERS | _COLUMNS | _FACTORIZATIONS | _INPLACE_TRUTH
                        | _ALIASES_AND_SCATTER_VIEWS)
CUDA_COMPLEX_OPS = frozenset(_LAYOUT | {  # the ops whose CUDA kernels (complex.cuh) or composites take complex
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "neg_", "eq", "ne", "eq_", "ne_", "real",
    "imag",
    "view_as_real", "view_as_complex", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg",
    "abs", "angle", "sgn", "sgn_", "exp", "exp_", "sum", "mean", "polar", "complex",
    "linalg_eig", "linalg_eigvals", "_linalg_eigvals",  # Note [eig on the host]
    "linalg_ldl_factor_ex", "linalg_ldl_solve",  # on a host copy, as eig
    "_fft_r2c", "_fft_c2r", "_fft_c2c",  # Note [CUDA FFT]
} | _COMMON_MATH | _SPREADS_AND_TRIANGLES | _SCATTER_AND_FLOAT_POWER | _LOG_SUM_EXP | _SCATTER_REDUCE_AND_PUT
   | _GRIDS_AND_REPEATS | _LOGADDEXP_AND_SILU | _COVARIANCES_AND_GATHERS | _COLUMNS | _ALIASES_AND_SCATTER_VIEWS
   | _INPLACE_TRUTH | _FACTORIZATIONS)


def complex_supported(op, backend: DispatchKey) -> bool:
    """Whether ``op`` (an OpOverload) takes complex tensors on ``backend``."""
    names = CUDA_COMPLEX_OPS if backend is DispatchKey.CUDA else COMPLEX_OPS
    return op.schema.name in names


_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


# torch's AT_DISPATCH names where they are not "<op>_<backend>" (keys: op name, or "name.overload"; torch 2.14's CPU)
_DISPATCH_NAMES = {("index_reduce", "cpu"): "index_func_", ("index_reduce", "cuda"): "index_reduce",
                   ("index_reduce_", "cpu"): "index_func_", ("index_reduce_", "cuda"): "index_reduce"}
_DISPATCH_NAMES.update({(name, "cpu"): kernel for names, kernel in (
    (("round", "round_"), "round_vml_cpu"), (("erf", "erf_"), "erf_vml_cpu"), (("erfc", "erfc_"), "erfc_vml_cpu"),
    (("erfinv", "erfinv_"), "erfinv_vml_cpu"), (("lgamma", "lgamma_"), "lgamma_vml_cpu"), (("i0", "i0_"), "i0_vml_cpu"),
    (("digamma", "digamma_"), "digamma"), (("floor_divide", "floor_divide_"), "div_floor_cpu"),
    (("special_zeta",), "zeta_cpu"),
    (("nanmedian",), "median_cpu"), (("amax",), "max_values_cpu"), (("amin",), "min_values_cpu"), (("max",), "max_all"),
    (("min",), "min_all"), (("gelu", "gelu_"), "GeluKernelImpl"), (("_unique2", "unique_consecutive"), "unique"),
    (("histogram", "histogram.bin_ct", "histogramdd"), "histogramdd"),
    (("bitwise_left_shift", "bitwise_left_shift_", "__lshift__"), "lshift_cpu"),
    (("bitwise_right_shift", "bitwise_right_shift_", "__rshift__"), "rshift_cpu"),
    (("softmax.int", "_softmax"), "softmax_kernel_impl"),
    (("log_softmax.int", "_log_softmax"), "log_softmax_kernel_impl"),
    (("layer_norm", "native_layer_norm"), "LayerNormKernelImpl"), (("histc",), "aminmax_cpu"), (("unique",), "unique"),
    (("searchsorted", "bucketize"), "searchsorted_out_cpu"), (("dropout", "dropout_"), "bernoulli_scalar_cpu_"),
    (("cross_entropy_loss",), "log_softmax_kernel_impl"))
    for name in names})

_DISPATCH_NAMES.update({(name, "cuda"): kernel for names, kernel in (  # torch 2.11's CUDA, read on an H200
    (("gelu", "gelu_"), "GeluCUDAKernelImpl"), (("log_sigmoid", "log_sigmoid_forward"), "log_sigmoid_forward_cuda"),
    (("softmax.int", "_softmax", "log_softmax.int", "_log_softmax", "cross_entropy_loss"), "host_softmax"),
    (("layer_norm", "native_layer_norm"), "LayerNormKernelImpl"), (("dropout", "dropout_"), "fused_dropout"),
    (("max",), "max_all_cuda"), (("amax",), "max_values_cuda"), (("amin",), "min_values_cuda"),
    (("lt", "le", "gt", "ge", "lt_", "le_", "gt_", "ge_"), "compare_cuda"), (("histc",), "histc"),
    (("floor_divide", "floor_divide_"), "div_floor_cuda"), (("binary_cross_entropy",), "binary_cross_entropy_out_cuda"))
    for name in names})

# torch's own checks where they come before AT_DISPATCH, as (exception type, words); every backend unless the key
# names one ("{dtype}": torch's name of the complex dtype)
_CLAMP = (NotImplementedError, "clamp is not supported for complex types")
_TORCH_WORDS = {
    **dict.fromkeys(("clamp", "clamp_", "clamp.Tensor", "clamp_.Tensor", "clamp_min", "clamp_min_", "clamp_max",
                     "clamp_max_", "clip", "clip_", "relu", "relu_", "hardtanh", "hardtanh_"), _CLAMP),
    "abs_": (RuntimeError, "In-place abs is not supported for complex tensors."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "frexp": (RuntimeError, "torch.frexp() only supports floating-point dtypes"),
    **{name: (NotImplementedError, f"{name.rstrip('_')} is not supported for complex inputs")
       for name in ("floor", "floor_", "ceil", "ceil_", "trunc", "trunc_")},
    "fix": (NotImplementedError, "trunc is not supported for complex inputs"),
    "fix_": (NotImplementedError, "trunc is not supported for complex inputs"),
    **dict.fromkeys(("sign", "sign_"), (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support "
                                                              "complex numbers. Please use torch.sgn instead.")),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    **{name: (RuntimeError, f"{name} not implemented for complex tensors.")
       for name in ("maximum", "minimum", "fmax", "fmin")},
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    "heaviside_": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
    **{name: (RuntimeError, f"{name.rstrip('_')} is not supported for complex tensors.")
       for name in ("rad2deg", "rad2deg_", "deg2rad", "deg2rad_")},
    "one_hot": (RuntimeError, "one_hot is only applicable to index tensor of type LongTensor."),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "max.dim": (RuntimeError, "max(): does not support complex input"),
    "max.other": (RuntimeError, "maximum not implemented for complex tensors."),  # max(a, b) is maximum
    "min.other": (RuntimeError, "minimum not implemented for complex tensors."),
    "min.dim": (RuntimeError, "min(): does not support complex input"),
    **{name: (RuntimeError, "quantile() input tensor must be either float or double dtype")
       for name in ("quantile", "nanquantile")},  # the overloads' dtype check, before any kernel
    **{name: (RuntimeError, "Unsupported input type encountered for isin(): {dtype}")
       for name in ("isin.Tensor_Tensor", "isin.Tensor_Scalar", "isin.Scalar_Tensor")},
    **{(name, "cpu"): (RuntimeError, " Sort does not support complex dtypes on CPU")
       for name in ("sort", "sort.stable", "argsort", "argsort.stable", "msort")},
    ("topk", "cpu"): (RuntimeError, " topk does not support complex dtypes on CPU"),
    # torch 2.11's CUDA words (its CUDA sort says "on CPU" too)
    **{(name, "cuda"): (RuntimeError, " Sort does not support complex dtypes on CPU")
       for name in ("sort", "sort.stable", "argsort", "argsort.stable", "msort", "median", "median.dim", "nanmedian",
                    "nanmedian.dim")},
    ("topk", "cuda"): (RuntimeError, " topk does not support complex dtypes on CPU"),
    ("nansum", "cpu"): (RuntimeError, "nansum on CPU does not support complex inputs"),
    ("nanmean", "cpu"): (RuntimeError, "nansum on CPU does not support complex inputs"),
}


def complex_refusal(op, backend: DispatchKey):
    """The kernel of an op that takes no complex tensors: torch's AT_DISPATCH error, naming the dtype."""
    name, b = op.schema.name, BACKEND_NAMES[backend]
    full = f"{name}.{op.schema.overload}" if op.schema.overload else name
    words = (_TORCH_WORDS.get((full, b)) or _TORCH_WORDS.get(full) or _TORCH_WORDS.get((name, b))
             or _TORCH_WORDS.get(name))
    # in-place ops print their functional kernel's name ("frac_cpu" for frac_)
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    kernel = _DISPATCH_NAMES.get((full, b)) or _DISPATCH_NAMES.get((name, b)) or _DISPATCH_NAMES.get((base, b),
                                                                                                     f"{base}_{b}")

    def refuse(*args, **kwargs):
        from ..tensor import Tensor

        values = (*args, *kwargs.values())
        tensors = [t for a in values for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, Tensor)]
        common = next(t.dtype for t in tensors if t.dtype.is_complex)
        if len(tensors) > 1:  # torch names the operands' common dtype (complex64 with float64: ComplexDouble)
            from ..dtypes import promote_types

            for t in tensors:
                common = promote_types(common, t.dtype)
        name_of_kernel = kernel
        if base in _SOFTMAXES:  # Note [Softmax refusals]
            x = args[0] if args else kwargs["self"]
            cast = (args[2] if len(args) > 2 else kwargs.get("dtype")) if op.schema.overload == "int" else None
            if cast is not None:
                from ..dtypes import to_dtype

                cast = to_dtype(cast)
                if not cast.is_complex:  # torch casts first (dropping the imaginary part), then computes
                    return op(x.to(cast), *args[1:2], **{k: v for k, v in kwargs.items() if k == "dim"})
                common = cast
            if b == "cpu":
                nd = x.dim()
                if base == "cross_entropy_loss":  # the class dim: 1, or 0 for one unbatched sample
                    dim = 1 if nd > 1 else 0
                else:
                    dim = args[1] if len(args) > 1 else kwargs["dim"]
                last = nd == 0 or dim % nd == nd - 1
                name_of_kernel = f"{_SOFTMAXES[base]}{'_lastdim' if last else ''}_kernel_impl"
        d = _COMPLEX_NAMES[common.name]
        if words is not None:
            raise words[0](words[1].format(dtype=d))
        raise NotImplementedError(f'"{name_of_kernel}" not implemented for \'{d}\'')

    return refuse


# Note [Softmax refusals]
# torch's CPU softmax kernels are two, named by whether the reduced dim is the last one (a 0-dim tensor's is):
# "softmax_lastdim_kernel_impl" and "softmax_kernel_impl" (log_softmax's too; cross_entropy reduces dim 1).
# With ``dtype=``, the input is cast first: to a real dtype it is then computed (the imaginary part dropped,
# with the cast's warning), to a complex one refused in that dtype's name.
_SOFTMAXES = {"softmax": "softmax", "_softmax": "softmax", "log_softmax": "log_softmax",
              "_log_softmax": "log_softmax", "cross_entropy_loss": "log_softmax"}


def refuse_complex(t, cpu: str, cuda: str) -> None:
    """Raise torch's AT_DISPATCH error (``"<cpu or cuda name>" not implemented for 'ComplexFloat'``) for a complex
    ``t``. For the Python compositions (losses, pooling, interpolation, group_norm) whose every op takes complex
    values, so that the dispatcher's guard never sees them: torch has no complex kernel there, and computing one
    anyway would answer where torch refuses."""
    d = t.dtype
    if d.is_complex:
        raise NotImplementedError(f'"{cuda if t.device.type == "cuda" else cpu}" not implemented for '
                                  f"'{_COMPLEX_NAMES[d.name]}'")
