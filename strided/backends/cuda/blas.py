"""cuBLASLt GEMM over ``nvmath.bindings.cublasLt`` with raw pointers: the only nvmath importer.

:func:`gemm` computes ``out = act(alpha * a @ b + beta * c + bias)`` for row-major 2-D or 3-D
(strided-batched) operands of one floating dtype; ``out`` is a fresh contiguous tensor.  The
kernels in ``kernels/blas_ops.py`` (mm, addmm, bmm, baddbmm, _addmm_activation) call it.

Operands are read in place where their strides allow (Note [Row-major GEMM on cuBLASLt] in
``gemm_operands.py``).

Note [GEMM plan cache]
Descriptors, layouts and heuristic results are created once per problem key: (device, dtype,
compute type, reduction mask, epilogue, transposes, sizes, leading dims, batch strides, pointer
alignments).  Alignment matters because cuBLASLt's heuristic assumes 256-byte aligned
operands unless told otherwise (torch sets ``MIN_ALIGNMENT_*_BYTES`` the same way).  A call is
then a dict lookup, scalar writes into a per-thread buffer and one ``lt.matmul`` on the
current stream.  Handles and workspaces are per (device, stream); the workspace is a block of
the caching allocator (so ``memory_stats`` counts it), ``STRIDED_CUBLASLT_WORKSPACE_SIZE`` KiB
(torch: ``CUBLASLT_WORKSPACE_SIZE``), default 32 MiB on sm_90+ and 8320 KiB before — torch
2.11's default, where the cuBLASLt workspace is unified with cuBLAS's (``CUBLAS_WORKSPACE_CONFIG``
``:4096:8`` on Hopper, ``:4096:2:16:8`` otherwise).
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings

import numpy as np
from nvmath import CudaDataType as _DT
from nvmath.bindings import cublas as _cublas
from nvmath.bindings import cublasLt as lt

from ... import dtypes as dt
from .. import determinism
from . import driver, gemm_tuning
from . import matmul as _flags
from .allocator import allocate_storage
from .gemm_operands import OP_N, OP_T, dims, geometry, operand, ptr
from .gemm_operands import align as _align
from .launch import get_kernel
from .streams import current_stream_handle

__all__ = ["gemm", "NoAlgorithm", "SUPPORTED_DTYPES", "workspace_size", "clear_workspaces", "version"]

_N, _T = int(_cublas.Operation.N), int(_cublas.Operation.T)
assert (_N, _T) == (OP_N, OP_T), "cuBLAS's operation codes moved"
_DA, _LA, _PA = lt.MatmulDescAttribute, lt.MatrixLayoutAttribute, lt.MatmulPreferenceAttribute
_E = lt.Epilogue
_EPILOGUES = {(None, False): int(_E.DEFAULT), (None, True): int(_E.BIAS), ("relu", False): int(_E.RELU),
              ("relu", True): int(_E.RELU_BIAS), ("gelu", False): int(_E.GELU), ("gelu", True): int(_E.GELU_BIAS)}
_TYPES = {  # dtype -> (data type, compute type, scale type, host scalar dtype)
    dt.float32: (int(_DT.CUDA_R_32F), int(_cublas.ComputeType.COMPUTE_32F), int(_DT.CUDA_R_32F), np.float32),
    dt.float16: (int(_DT.CUDA_R_16F), int(_cublas.ComputeType.COMPUTE_32F), int(_DT.CUDA_R_32F), np.float32),
    dt.bfloat16: (int(_DT.CUDA_R_16BF), int(_cublas.ComputeType.COMPUTE_32F), int(_DT.CUDA_R_32F), np.float32),
    dt.float64: (int(_DT.CUDA_R_64F), int(_cublas.ComputeType.COMPUTE_64F), int(_DT.CUDA_R_64F), np.float64),
    # complex64 / complex128 (Note [Complex GEMM])
    dt.complex64: (int(_DT.CUDA_C_32F), int(_cublas.ComputeType.COMPUTE_32F), int(_DT.CUDA_C_32F), np.complex64),
    dt.complex128: (int(_DT.CUDA_C_64F), int(_cublas.ComputeType.COMPUTE_64F), int(_DT.CUDA_C_64F),
                    np.complex128),
}
# Note [Complex GEMM]
# complex64 / complex128 products are cuBLASLt's C_32F / C_64F with complex alpha and beta (this thread's scalar
# buffers hold them). strided has no conjugate bit (Note [No conjugate bit]), so an operand is never read
# conjugated: a transposed operand is cuBLAS's plain T, as for real dtypes, and a conjugate was materialized by
# the caller. complex64 keeps full float32 precision even where TF32 is allowed (strided applies TF32 to float32
# only; torch's handle math mode would let cublasCgemm use it). No epilogues.
# Note [Float32 out of half GEMMs]
# A float16 / bfloat16 product can be written as float32 (cuBLASLt's 16F/16BF A and B with 32F C and D, the same
# 32F compute): the tensor-core speed of the half GEMM without rounding its result to half. A convolution's
# columns are such a result when col2im sums them next (Note [Half columns] in kernels/convolution_ops.py).
_TF32 = int(_cublas.ComputeType.COMPUTE_32F_FAST_TF32)
SUPPORTED_DTYPES = frozenset(_TYPES)
_RS = lt.ReductionScheme
_ALL_REDUCTIONS = int(_RS.MASK)
_CANDIDATES = 8
_flag_state = _flags._state
_float32_scope = _flags.float32_scope


class NoAlgorithm(RuntimeError):
    """cuBLASLt's heuristic found no algorithm (e.g. an epilogue unsupported for a dtype)."""


def version() -> int:
    return int(lt.get_version())


def _set(setter, dtype_of, obj, attr, value) -> None:
    a = np.array([value], dtype=dtype_of(attr))
    setter(obj, attr, a.ctypes.data, a.nbytes)


def _desc_set(desc, attr, value) -> None:
    _set(lt.matmul_desc_set_attribute, lt.get_matmul_desc_attribute_dtype, desc, attr, value)


def _layout_set(layout, attr, value) -> None:
    _set(lt.matrix_layout_set_attribute, lt.get_matrix_layout_attribute_dtype, layout, attr, value)


def _pref_set(pref, attr, value) -> None:
    _set(lt.matmul_preference_set_attribute, lt.get_matmul_preference_attribute_dtype, pref, attr, value)


# ---------------------------------------------------------------------------- handles, workspaces
_handles: dict[tuple[int, int], int] = {}
_workspaces: dict[tuple[int, int], tuple] = {}  # (device, stream) -> (storage, ptr, nbytes)
_ws_sizes: dict[int, int] = {}


def workspace_size(device_index: int) -> int:
    """Workspace bytes per (device, stream): ``STRIDED_CUBLASLT_WORKSPACE_SIZE`` KiB or torch's default."""
    n = _ws_sizes.get(device_index)
    if n is not None:
        return n
    from .device import get_device_capability

    kib = 32 * 1024 if get_device_capability(device_index)[0] >= 9 else 4096 * 2 + 16 * 8
    env = os.environ.get("STRIDED_CUBLASLT_WORKSPACE_SIZE")
    if env is not None:
        try:
            kib = int(env)
            if kib < 0:
                raise ValueError(env)
        except ValueError:
            warnings.warn(f"invalid STRIDED_CUBLASLT_WORKSPACE_SIZE={env!r}, using the default workspace size "
                          f"of {kib} KiB.", UserWarning, stacklevel=2)
    n = _ws_sizes[device_index] = kib * 1024
    return n


_context_tls = driver._tls  # this thread's current context (ensure_context's record)


# Note [Library calls need the context]
# cuBLASLt launches its kernels through the CUDA runtime, onto the stream it is given in the context that
# is current in the calling thread; stream 0 (a device's default stream here) means that context's own.
# strided's kernels make their device's context current before each launch, but a thread's current
# context is whatever its last call on any device left, so a GEMM on device 1 after work on device 0 --
# or a replica thread whose first op is a GEMM (DataParallel) -- ran on device 0 with device 1's
# pointers: an illegal address. Every GEMM therefore makes its output's device current first.
def _handle(dev: int, stream: int) -> int:
    h = _handles.get((dev, stream))
    if h is None:
        driver.ensure_context(dev)
        h = _handles[(dev, stream)] = int(lt.create())
    return h


def _workspace(dev: int, stream: int, device) -> tuple:
    ws = _workspaces.get((dev, stream))
    if ws is None:
        n = workspace_size(dev)
        storage = allocate_storage(n, device) if n else None  # a block of the current (= this) stream
        ws = _workspaces[(dev, stream)] = (storage, storage.data_ptr() if n else 0, n)
    return ws


def clear_workspaces() -> None:
    """Return every cached workspace to the caching allocator (``torch._C._cuda_clearCublasWorkspaces``)."""
    _workspaces.clear()


class _Plan:
    __slots__ = ("desc", "la", "lb", "ld", "results", "count", "algo", "tuned_algo", "op", "params", "tuned",
                 "bias_arg", "bias_addr", "keep", "dtype")

    def __del__(self):
        try:
            for lay in (self.la, self.lb, self.ld):
                lt.matrix_layout_destroy(lay)
            lt.matmul_desc_destroy(self.desc)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_plans: dict[tuple, _Plan | None] = {}
_MISSING = object()
MAX_PLANS = 4096  # cached plans (a few descriptors each); all are dropped when the cache is full


def _make_plan(key, h: int, ws_bytes: int) -> _Plan:
    (_dev, dtype, in_dtype, compute, mask, epi, ta, tb, m, n, k, batch, lda, ldb, sa, sb, al_a, al_b, al_c,
     al_d) = key
    data, _c, scale, _np = _TYPES[in_dtype]
    p = _Plan()
    p.la = p.lb = p.ld = p.desc = 0
    p.dtype = dtype
    p.desc = lt.matmul_desc_create(compute, scale)
    _desc_set(p.desc, _DA.TRANSA, ta)
    _desc_set(p.desc, _DA.TRANSB, tb)
    if epi != _EPILOGUES[(None, False)]:
        _desc_set(p.desc, _DA.EPILOGUE, epi)
    p.la = lt.matrix_layout_create(data, *((m, k) if ta == _N else (k, m)), lda)
    p.lb = lt.matrix_layout_create(data, *((k, n) if tb == _N else (n, k)), ldb)
    p.ld = lt.matrix_layout_create(_TYPES[dtype][0], m, n, m)
    if batch > 1:
        for lay, stride in ((p.la, sa), (p.lb, sb), (p.ld, m * n)):
            _layout_set(lay, _LA.BATCH_COUNT, batch)
            _layout_set(lay, _LA.STRIDED_BATCH_OFFSET, stride)
    pref = lt.matmul_preference_create()
    try:
        _pref_set(pref, _PA.MAX_WORKSPACE_BYTES, ws_bytes)
        if mask != _ALL_REDUCTIONS:
            _pref_set(pref, _PA.REDUCTION_SCHEME_MASK, mask)
        for attr, al in ((_PA.MIN_ALIGNMENT_A_BYTES, al_a), (_PA.MIN_ALIGNMENT_B_BYTES, al_b),
                         (_PA.MIN_ALIGNMENT_C_BYTES, al_c), (_PA.MIN_ALIGNMENT_D_BYTES, al_d)):
            _pref_set(pref, attr, al)
        p.results = lt.MatmulHeuristicResult(_CANDIDATES)
        cnt = np.zeros(1, np.int32)
        lt.matmul_algo_get_heuristic(h, p.desc, p.la, p.lb, p.ld, p.ld, pref, _CANDIDATES, p.results.ptr,
                                     cnt.ctypes.data)
    finally:
        lt.matmul_preference_destroy(pref)
    p.count = int(cnt[0])
    if p.count == 0:
        raise NoAlgorithm(f"cuBLASLt found no algorithm for {key}")
    p.algo = p.tuned_algo = p.results[0].ptr
    p.keep = None
    p.tuned = False
    p.bias_arg = np.zeros(1, np.int64)
    p.bias_addr = p.bias_arg.ctypes.data
    tname = {dt.float32: "tf32" if compute == _TF32 else "float", dt.float16: "half", dt.bfloat16: "bf16",
             dt.float64: "double", dt.complex64: "c10::complex<float>", dt.complex128: "c10::complex<double>"}[in_dtype]
    if in_dtype is not dtype:
        tname += "_float_out"
    p.op = f"GemmTunableOp_{tname}_{'NT'[ta == _T]}{'NT'[tb == _T]}_e{epi}"
    p.params = "_".join(str(v) for v in key[4:])
    return p


class _ScalarTLS(threading.local):
    bufs = None  # this thread's alpha/beta buffers (Note [Thread-local defaults] in streams.py)


_tls = _ScalarTLS()


def _scalars(np_dtype):
    """This thread's (alpha, beta) buffer of ``np_dtype`` and its address (read once: ``.ctypes.data``
    costs about a microsecond)."""
    bufs = _tls.bufs
    if bufs is None:
        bufs = _tls.bufs = {}
        for d in (np.float32, np.float64, np.complex64, np.complex128):
            a = np.zeros(2, d)
            bufs[d] = (a, a.ctypes.data)
    return bufs[np_dtype]


def _reduction_mask(dtype) -> int:
    mask = _ALL_REDUCTIONS
    if ((dtype is dt.float16 and not _flag_state["fp16_reduction"])
            or (dtype is dt.bfloat16 and not _flag_state["bf16_reduction"])):
        mask = int(_RS.NONE) | int(_RS.COMPUTE_TYPE)
    if determinism.are_deterministic_algorithms_enabled():
        mask &= ~int(_RS.INPLACE)  # Note [Deterministic GEMM]
    return mask


def gemm(name: str, out, a, b, *, alpha=1.0, beta=0.0, c=None, bias=None, act=None) -> None:
    """``out = act(alpha * a @ b + beta * c + bias)`` on the current stream.

    ``out``: contiguous (M, N) or (B, M, N); ``a``: (…, M, K); ``b``: (…, K, N) with any strides
    (batch stride 0 = broadcast); ``c``: None (``beta`` ignored), ``out`` itself (in place) or a
    contiguous tensor shaped like ``out``; ``bias``: contiguous (N,) (2-D only); ``act``: None,
    ``"relu"`` or ``"gelu"`` (tanh approximation).  ``a`` and ``b`` share ``out``'s dtype, or are
    float16 / bfloat16 with a float32 ``out`` (and ``c``): Note [Float32 out of half GEMMs].  Raises
    :class:`NoAlgorithm` when cuBLASLt has none for this combination, ``RuntimeError`` naming the op,
    shapes and dtypes on failure.
    """
    dtype = out.dtype
    in_dtype = a.dtype
    device = out.device
    dev = device.index
    stream = current_stream_handle(dev)
    sizes = out._sizes
    geo = geometry(a, b, sizes)  # Note [GEMM geometry memo]
    if geo is not None:
        M, N, K, batch, ta, lda, tb, ldb, sa, sb = geo
        b_t, a_t = b, a
    else:  # an operand cuBLASLt cannot read in place: a contiguous copy
        M, N, K, batch = dims(a, sizes)
        b_t, (ta, _r, _c, lda) = operand(b, K, N)
        a_t, (tb, _r2, _c2, ldb) = operand(a, M, K)
        sa = b_t._strides[0] if batch > 1 else 0
        sb = a_t._strides[0] if batch > 1 else 0
    compute = _TYPES[in_dtype][1]
    if in_dtype is dt.float32:  # Note [Full float32 scopes]
        tf32 = _float32_scope.tf32
        if tf32 if tf32 is not None else _flag_state["precision"] != "highest":
            compute = _TF32
    epi = _EPILOGUES[(act, bias is not None)]
    isz, in_isz = dtype.itemsize, in_dtype.itemsize
    pa, pb, pd = ptr(b_t, in_isz), ptr(a_t, in_isz), ptr(out, isz)
    pc = pd if c is None else ptr(c, isz)
    key = (dev, dtype, in_dtype, compute, _reduction_mask(in_dtype), epi, ta, tb, N, M, K, batch, lda, ldb, sa, sb,
           _align(pa), _align(pb), _align(pc), _align(pd))
    h = _handle(dev, stream)
    _storage, ws_ptr, ws_n = _workspace(dev, stream, device)
    plan = _plans.get(key, _MISSING)
    if plan is _MISSING:
        if len(_plans) >= MAX_PLANS:  # bounded: a blocked factorization makes a shape per step
            _plans.clear()
        try:
            plan = _plans[key] = _make_plan(key, h, ws_n)
        except NoAlgorithm:
            _plans[key] = None
            raise
    if plan is None:
        raise NoAlgorithm(f"cuBLASLt found no algorithm for {key}")
    scal, sp = _scalars(_TYPES[dtype][3])
    scal[0] = alpha
    scal[1] = beta if c is not None else 0.0
    if bias is not None:
        plan.bias_arg[0] = bias.data_ptr()
        lt.matmul_desc_set_attribute(plan.desc, _DA.BIAS_POINTER, plan.bias_addr, 8)
    if _context_tls.ctx_device != dev:  # Note [Library calls need the context]
        driver.ensure_context(dev)
    try:
        algo = plan.algo
        if gemm_tuning.STATE.enabled:  # Note [TunableOp]: tuned choices apply only while enabled
            if not plan.tuned:
                _tune(plan, h, sp, pa, pb, pc, pd, c is out, ws_ptr, ws_n, stream, dev, out)
            algo = plan.tuned_algo
        lt.matmul(h, plan.desc, sp, pa, plan.la, pb, plan.lb, sp + scal.itemsize, pc, plan.ld, pd, plan.ld,
                  algo, ws_ptr, ws_n, stream)
    except lt.cuBLASLtError as e:
        shapes = f"mat1 {list(a._sizes)} @ mat2 {list(b._sizes)} -> {list(sizes)}"
        raise RuntimeError(f"{name}: cuBLASLt matmul failed ({e}) for {shapes}, dtype {dtype.name}, "
                           f"epilogue {act or 'none'}{' + bias' if bias is not None else ''}") from None


# ---------------------------------------------------------------------------- TunableOp
_timing_events: dict[int, tuple[int, int]] = {}


def _timer(dev: int, stream: int):
    d = driver.cu()
    ev = _timing_events.get(dev)
    if ev is None:
        driver.ensure_context(dev)
        ev = _timing_events[dev] = (int(driver.check(d.cuEventCreate(0))), int(driver.check(d.cuEventCreate(0))))
    e0, e1 = ev

    spin = get_kernel(gemm_tuning.SPIN_SOURCE, "strided_spin", "q", dev)

    def timer(fn, n: int) -> float:
        spin(1, 1, stream, 300_000 + 25_000 * n)  # ns: longer than queueing n GEMMs takes the host
        driver.check(d.cuEventRecord(e0, stream))
        for _ in range(n):
            fn()
        driver.check(d.cuEventRecord(e1, stream))
        driver.check(d.cuEventSynchronize(e1))
        return float(driver.check(d.cuEventElapsedTime(e0, e1))) / n

    return timer


def _validators(dev: int) -> dict:
    from ... import __version__
    from .device import get_device_name

    return {"GPU": get_device_name(dev), "CUBLASLT_VERSION": str(version()), "STRIDED_VERSION": __version__,
            "DEVICE": str(dev)}


def _tune(plan, h, sp, pa, pb, pc, pd, c_is_d, ws_ptr, ws_n, stream, dev, out) -> None:
    """Pick the plan's algorithm from the results table, timing candidates for a new problem."""
    state = gemm_tuning.STATE
    if state.validators is None:
        state.validators = _validators(dev)
    plan.tuned = True
    solution = gemm_tuning.lookup(plan.op, plan.params, dev)
    if solution is None:
        if not state.tuning:
            return
        scratch = allocate_storage(max(out.numel(), 1) * out.dtype.itemsize, out.device)
        d = scratch.data_ptr()
        c = d if c_is_d else pc
        res = plan.results

        def run(i: int) -> None:
            lt.matmul(h, plan.desc, sp, pa, plan.la, pb, plan.lb, sp + _TYPES[plan.dtype][3]().itemsize,
                      c, plan.ld, d, plan.ld, res[i].ptr, ws_ptr, ws_n, stream)

        best, ms = gemm_tuning.tune(run, plan.count, _timer(dev, stream))
        solution = "Default" if best == 0 else (ctypes.string_at(res[best].ptr, 64).hex()
                                                + f":{int(res[best].workspace_size)}")
        gemm_tuning.record(plan.op, plan.params, solution, ms)
        del scratch
    if solution == "Default":
        return
    algo_hex, _, _ws = solution.partition(":")
    algo = np.frombuffer(bytes.fromhex(algo_hex), dtype=np.uint64).copy()
    check = lt.MatmulHeuristicResult(1)
    try:
        lt.matmul_algo_check(h, plan.desc, plan.la, plan.lb, plan.ld, plan.ld, algo.ctypes.data, check.ptr)
    except lt.cuBLASLtError as e:
        warnings.warn(f"TunableOp: recorded algorithm for {plan.op} {plan.params} is not usable here ({e}); "
                      "using the heuristic's choice", UserWarning, stacklevel=3)
        return
    if int(check[0].workspace_size) > ws_n:
        return
    plan.keep = algo
    plan.tuned_algo = algo.ctypes.data
