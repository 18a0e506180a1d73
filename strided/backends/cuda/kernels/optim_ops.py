"""Multi-tensor CUDA kernels: the launch machinery (multi_tensor_apply) and fused Adam / AdamW / SGD.
The ``_foreach_*`` fast path on the same kernels is in ``foreach_ops.py``.

Note [Multi-tensor metadata]
torch's multi_tensor_apply packs tensor addresses and a block -> (tensor, chunk) map into the
kernel's by-value argument (4 KiB then). Here one ``MTArgs`` struct (``multi_tensor.cu``) carries,
for up to ``MT_MAX`` tensors of one dtype, the pointers of every list, the numels, the step
pointers, per-tensor scalars and the prefix sums of each tensor's chunk count; a block finds its
tensor by binary search over those sums. With ``MT_MAX = 192`` the struct is about 13 KiB, which
Hopper accepts as a kernel parameter since CUDA 12.1 (up to 32 KiB): GPT-2-small's 148 tensors go
in one launch per step, with no metadata upload and no host sync (found_inf and the steps are read
on the device). Should a driver refuse the large parameter, the first launch falls back to
``MT_MAX = 32`` (under the classic 4 KiB limit) for the rest of the process.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
from functools import cache
from math import prod
from pathlib import Path

from .... import dtypes as dt
from ....dispatch.library import kernel
from ....tensor import contiguous_strides
from ...meta import optim as meta
from .. import driver
from ..driver import cu
from ..launch import check_launch, get_kernel
from ..streams import current_stream_handle

__all__ = ["mt_source", "mt_format", "MT_SIZES", "MT_CTYPES", "plan_launches", "pack", "mt_launch", "data_ptrs",
           "contig_strides", "run_in_batches", "fused_adam_launches"]

HERE = Path(__file__).parent
MT_SIZES = (192, 32)  # tensors per launch: large kernel parameter first, 4 KiB-safe fallback
BLOCK = 128  # threads per block; Note [Multi-tensor tuning]
# 16-byte vectors in flight per list and thread: 8 elements of 16- and 32-bit types, 4 of 64-bit ones
# (Note [Multi-tensor tuning]: more registers than the cap allows spill)
ILP = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 2}
MIN_THREADS = 1024  # resident threads per SM the kernels' register use must allow (__launch_bounds__)
STREAM = True  # evict-first (.cs) loads and stores (H200, GPT-2 AdamW: 0.882 vs 0.933 ms)
_ACC = {"float16": "float", "bfloat16": "float", "float32": "float", "float64": "double"}
_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
MT_CTYPES = {"float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double"}
ALIGNED, AMSGRAD, MAXIMIZE, NESTEROV, FIRST_STEP, ADAMW = 1, 2, 4, 8, 16, 32
_state = {"max": MT_SIZES[0]}

# Note [Multi-tensor tuning]
# Swept on one H200 (2026-11-22, fused AdamW over GPT-2-small's 148 tensors, CUDA-event time per
# step, torch's fused AdamW 1.039 ms and a 124M-float copy 0.239 ms = 4171 GB/s in the same process):
# CHUNK 16384..131072 x ILP 1/2/4 x BLOCK 256/512 spans 0.885..0.963 ms. 16-32 Ki elements per
# block with ILP 2 and 512 threads is best (0.885-0.888 ms; 65536 gave 0.901): smaller chunks shrink
# the last, partly filled wave of blocks. 0.888 ms moves 28 B x 124.4M = 3.48 GB at 3.92 TB/s, 94% of
# the copy's bandwidth, so little is left to gain in the kernel. Smaller chunks were swept later
# (2026-11-22, fifth session): 4096 x 256 threads x ILP 2 ties (0.882 ms), and below that each block's
# prologue dominates (1024 x 256 x ILP 1: 1.252 ms). The pattern's ceiling, a bare float4 kernel over
# one 124M-float array (4 reads, 3 writes, one vector a thread, 256 threads), ran 0.821 ms (4.24 TB/s).
# Issuing the first loads before the step count's read and the pow()s gained 1% at 4096 x 256 x ILP 1
# (0.872 ms) and cost 7-50% at 512 threads (register pressure under the 512-thread bound): not kept.
# Persistent blocks were tried too (2026-11-25, H200; torch fused 1.022 ms GPU time, this kernel 0.909
# ms): a grid of the device's resident blocks, each streaming a contiguous run of chunks and paying
# the prologue once per tensor, gave 0.914-1.043 ms over CHUNK 4096/16384/65536 x BLOCK 256/512 x
# ILP 1/2. Neither the per-block prologue nor the last wave is where the time goes: not kept.
# Sixth sweep (2026-11-27, H200, interleaved A/B in one process, torch's fused kernel 1.02-1.04 ms):
# the old layout (32768 elements x 512 threads x ILP 2, every thread running the prologue) 0.868 ms;
# the same access pattern with thread 0 alone finding the chunk and computing the bias corrections
# (Note [Shared chunk prologue] in multi_tensor.cu), one block per BLOCK x ILP 16-byte vectors, and
# amsgrad / the grad scale compiled out of the common kernel (Note [Plain Adam kernel]): 128 threads x
# ILP 2 0.831 ms (0.80x torch's kernel, 4.19 TB/s), 256 x 2 0.839, 256 x 1 0.886-1.11 (depending on
# the register cap: 40 registers allow 6 blocks an SM, 74 only 3), 512 x 1 0.907. The register cap
# matters: ``MIN_THREADS`` bounds registers so that 1024 threads stay resident; capping at 2048
# (32 registers) spills and ran 1.65 ms at 128 x 2. Under the 64-register cap the 16-bit types take
# ILP 1 (their 16-byte vector holds 8 elements, as float32's two): at ILP 2 ptxas spilled 340-450
# bytes per thread of fused Adam (NVRTC's -v report), at ILP 1 nothing in the common kernel. Timed
# the same way (H200, GPT-2's shapes, torch's `_fused_adamw_` of the same dtype = 1.00): bfloat16 old
# layout 1.41x, 128 x 1 0.98x, 128 x 2 1.17x, 256 x 2 1.45x; float64 old 1.42x, 128 x 2 1.08x,
# 128 x 1 1.14x, 256 x 2 1.71x.


def chunk_elements(dtype_name: str) -> int:
    """Elements of a tensor per block (``MT_CHUNK``): one 16-byte vector per thread and ILP step."""
    return BLOCK * ILP[dtype_name] * (16 // _ITEMSIZE[dtype_name])


@cache
def mt_source(dtype_name: str, max_tensors: int) -> str:
    """``multi_tensor.cu`` instantiated for one element type and launch capacity."""
    head = (f"#define DST_T {MT_CTYPES[dtype_name]}\n#define ACC_T {_ACC[dtype_name]}\n"
            f"#define MT_MAX {max_tensors}\n#define MT_BYTES {struct.calcsize(mt_format(max_tensors))}\n"
            f"#define MT_BLOCK {BLOCK}\n#define MT_MIN_BLOCKS {max(1, MIN_THREADS // BLOCK)}\n"
            f"#define MT_CHUNK {chunk_elements(dtype_name)}\n#define MT_ILP {ILP[dtype_name]}\n"
            f"#define MT_STREAM {int(STREAM)}\n")
    return head + (HERE / "common.cuh").read_text() + "\n" + (HERE / "multi_tensor.cu").read_text()


@cache
def mt_format(max_tensors: int) -> str:
    """The ``struct`` format of ``MTArgs`` (no padding: 8-byte fields first, ints last)."""
    m = max_tensors
    return f"<{5 * m}Q{m}Q{m}d{m}qQQ8d{m + 1}i3i"


def plan_launches(numels, max_tensors: int):
    """Split tensor indices into launches of at most ``max_tensors`` non-empty tensors."""
    group: list[int] = []
    for i, n in enumerate(numels):
        if n == 0:
            continue
        group.append(i)
        if len(group) == max_tensors:
            yield group
            group = []
    if group:
        yield group


def pack(idx, ptrs, numels, max_tensors, chunk, *, steps=None, scalars=None, grad_scale=0, found_inf=0,
         hyper=(0.0,) * 8, op=0, flags=0):
    """(grid, values) of one launch over tensors ``idx`` split in blocks of ``chunk`` elements;
    ``ptrs`` is a list of 1..5 pointer lists."""
    m = max_tensors
    pad = [0] * (m - len(idx))
    values: list = []
    aligned = True
    for lst in range(5):
        if lst < len(ptrs):
            col = [ptrs[lst][i] for i in idx]
            if any(p & 15 for p in col):
                aligned = False
            values += col
        else:
            values += [0] * len(idx)
        values += pad
    values += ([steps[i] for i in idx] if steps is not None else [0] * len(idx)) + pad
    values += ([float(scalars[i]) for i in idx] if scalars is not None else [0.0] * len(idx)) + [0.0] * len(pad)
    values += [numels[i] for i in idx] + pad
    values += [grad_scale, found_inf]
    values += [float(h) for h in hyper]
    starts = [0]
    for i in idx:
        starts.append(starts[-1] + (numels[i] + chunk - 1) // chunk)
    values += starts + [starts[-1]] * (m + 1 - len(starts))
    values += [len(idx), op, flags | (ALIGNED if aligned else 0)]
    return starts[-1], values


class _Prepacked:
    """One launch's packed ``MTArgs`` (Note [Prepacked launches])."""

    __slots__ = ("grid", "buf", "params")

    def __init__(self, grid, raw: bytes):
        self.grid = grid
        self.buf = ctypes.create_string_buffer(raw, len(raw))
        self.params = (ctypes.c_void_p * 1)(ctypes.addressof(self.buf))


# Note [Prepacked launches]
# An optimizer step launches over the same tensors every time, so the packed struct of each launch
# is cached, keyed by everything it holds except the values that change between steps: the
# hyperparameters, grad_scale / found_inf pointers and per-tensor scalars are written into the
# cached buffer with ``pack_into`` at their fixed offsets. The key holds the data pointers and
# numels themselves, so a cached entry is exactly what packing would produce. The driver copies
# kernel parameters at launch, so one buffer serves back-to-back launches.
_prepacked: dict = {}
_PREPACKED_MAX = 256


@cache
def _offsets(m: int) -> tuple[int, int]:
    """Byte offsets of ``scalar[]`` and of ``grad_scale`` (followed by found_inf and 8 doubles)."""
    return 6 * m * 8, 8 * m * 8


def mt_launch(dtype, name, dev, stream, numels, ptrs, *, steps=None, scalars=None, grad_scale=0, found_inf=0,
            hyper=(0.0,) * 8, op=0, flags=0, cached=True) -> None:
    """Launch ``name`` over every non-empty tensor, falling back to the 4 KiB struct if refused."""
    key_base = (name, dtype, dev, op, flags, tuple(numels), tuple(itertools.chain.from_iterable(ptrs)),
                tuple(steps) if steps is not None else None)
    while True:
        m = _state["max"]
        k = get_kernel(mt_source(dtype.name, m), name, mt_format(m), dev)
        key = key_base + (m,)
        launches = _prepacked.get(key)
        if launches is None:
            fmt = struct.Struct(mt_format(m))
            launches = []
            chunk = chunk_elements(dtype.name)
            for idx in plan_launches(numels, m):
                grid, values = pack(idx, ptrs, numels, m, chunk, steps=steps, flags=flags, op=op)
                launches.append((idx, _Prepacked(grid, fmt.pack(*values))))
            if cached:
                if len(_prepacked) >= _PREPACKED_MAX:
                    _prepacked.clear()
                _prepacked[key] = launches
        s_off, h_off = _offsets(m)
        tail = struct.Struct("<QQ8d")
        try:
            for idx, pre in launches:
                tail.pack_into(pre.buf, h_off, grad_scale, found_inf, *hyper)
                if scalars is not None:
                    vals = [float(scalars[i]) for i in idx]
                    struct.pack_into(f"<{len(vals)}d", pre.buf, s_off, *vals)
                _raw_launch(k, pre, stream)
            return
        except driver.CudaError as e:
            if m == MT_SIZES[-1] or "INVALID_VALUE" not in str(e):
                raise
            _state["max"] = MT_SIZES[-1]


def _raw_launch(k, pre: _Prepacked, stream: int) -> None:
    """``Kernel.__call__`` without repacking: launch ``k`` with a prepacked parameter buffer."""
    d = cu()
    driver.ensure_context(k.device_index)
    err = d.cuLaunchKernel(k.func, pre.grid, 1, 1, BLOCK, 1, 1, 0, stream, ctypes.addressof(pre.params), 0)[0]
    if err != 0 or driver.LAUNCH_BLOCKING:
        check_launch(k.name, err, stream)


contig_strides = cache(contiguous_strides)


BATCH_BYTES = 64 << 20


def run_in_batches(lists, written, launch) -> None:
    """Call ``launch(sublists, indices or None, cached)`` over the tensors of ``lists``.

    Note [Non-contiguous members]: the kernels walk every tensor by linear index, so each member of
    a launch must be contiguous. Indices whose members all are go in one cached launch; the others
    are launched on contiguous copies, in batches of at most ``BATCH_BYTES`` of copies (so the extra
    memory stays small), and the copies of the lists in ``written`` are copied back.
    """
    expected = [contig_strides(t._sizes) for t in lists[0]]
    bad: set = set()
    for lst in lists:
        if [t._strides for t in lst] != expected:
            bad.update(i for i, t in enumerate(lst) if t._strides != expected[i] and not t.is_contiguous())
    if not bad:
        launch(lists, None, True)
        return
    good = [i for i in range(len(lists[0])) if i not in bad]
    if good:
        launch([[lst[i] for i in good] for lst in lists], good, True)
    order = sorted(bad)
    batch: list[int] = []
    size = 0
    for k, i in enumerate(order):
        batch.append(i)
        size += sum(lst[i].numel() * lst[i].dtype.itemsize for lst in lists if not lst[i].is_contiguous())
        if size < BATCH_BYTES and k + 1 < len(order):
            continue
        copies = [[lst[j] if lst[j].is_contiguous() else lst[j].contiguous() for j in batch] for lst in lists]
        launch(copies, batch, False)
        for li in written:
            for j, c in zip(batch, copies[li]):
                if c is not lists[li][j]:
                    lists[li][j].copy_(c)
        del copies
        batch, size = [], 0


def numels(lst) -> list[int]:
    """Element counts of tensors (no method calls)."""
    return [prod(t._sizes) for t in lst]


def data_ptrs(lst) -> list[int]:
    """Data pointers of CUDA tensors (storage address + offset; no method calls)."""
    isz = lst[0].dtype.itemsize
    return [(t._storage._data_ptr or 0) + t._offset * isz for t in lst]


def _device_scalar(t, dev):
    if t is None:
        return 0, None
    if t.dtype is not dt.float32 or t.device != dev:
        t = t.to(device=dev, dtype=dt.float32)
    return t.data_ptr(), t


def _by_dtype(params):
    """[(dtype, indices or None for all)]: one group per param dtype."""
    dtypes = {p.dtype for p in params}
    if len(dtypes) == 1:
        return [(params[0].dtype, None)]
    groups: dict = {}
    for i, p in enumerate(params):
        groups.setdefault(p.dtype, []).append(i)
    return list(groups.items())


def fused_adam_launches(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
                        weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, adamw) -> None:
    dev = self[0].device
    f32 = dt.float32
    for s in state_steps:  # devices are interned: ``is`` first, __eq__ (a Python call) only when that fails
        if (s.device is not dev and s.device != dev) or s.dtype is not f32:
            raise RuntimeError("fused Adam on CUDA: state_steps must be float32 tensors on the params' device "
                               f"({dev}), got {s.dtype} on {s.device}")
    lists = [self, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    gs_ptr, keep_gs = _device_scalar(grad_scale, dev)
    fi_ptr, keep_fi = _device_scalar(found_inf, dev)
    flags = (AMSGRAD if amsgrad else 0) | (MAXIMIZE if maximize else 0) | (ADAMW if adamw else 0)
    stream = current_stream_handle(dev.index)
    hyper = (lr, beta1, beta2, weight_decay, eps, 0.0, 0.0, 0.0)
    name = "fused_adam" if amsgrad or grad_scale is not None else "fused_adam_plain"  # Note [Plain Adam kernel]

    def launch(sub, sel, cached):
        steps = state_steps if sel is None else [state_steps[i] for i in sel]
        for dtype, dsel in _by_dtype(sub[0]):
            part = sub if dsel is None else [[lst[i] for i in dsel] for lst in sub]
            psteps = steps if dsel is None else [steps[i] for i in dsel]
            mt_launch(dtype, name, dev.index, stream, numels(part[0]),
                      [data_ptrs(lst) for lst in part], steps=data_ptrs(psteps), grad_scale=gs_ptr, found_inf=fi_ptr,
                      hyper=hyper, flags=flags, cached=cached)

    written = [0, 2, 3] + ([4] if amsgrad else []) + ([1] if grad_scale is not None else [])
    run_in_batches(lists, written, launch)
    del keep_gs, keep_fi


@kernel("CUDA")
def _fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                 weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    meta._fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr=lr, beta1=beta1,
                      beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                      grad_scale=grad_scale, found_inf=found_inf)
    fused_adam_launches(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
                        weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, False)


@kernel("CUDA")
def _fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                  weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    meta._fused_adamw_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr=lr, beta1=beta1,
                       beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                       grad_scale=grad_scale, found_inf=found_inf)
    fused_adam_launches(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
                        weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, True)


@kernel("CUDA")
def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
                maximize, is_first_step, grad_scale=None, found_inf=None):
    meta._fused_sgd_(self, grads, momentum_buffer_list, weight_decay=weight_decay, momentum=momentum, lr=lr,
                     dampening=dampening, nesterov=nesterov, maximize=maximize, is_first_step=is_first_step,
                     grad_scale=grad_scale, found_inf=found_inf)
    dev = self[0].device
    lists = [self, grads] + ([momentum_buffer_list] if momentum != 0 else [])
    gs_ptr, keep_gs = _device_scalar(grad_scale, dev)
    fi_ptr, keep_fi = _device_scalar(found_inf, dev)
    flags = ((MAXIMIZE if maximize else 0) | (NESTEROV if nesterov else 0)
             | (FIRST_STEP if is_first_step else 0))
    stream = current_stream_handle(dev.index)
    hyper = (lr, 0.0, 0.0, weight_decay, 0.0, momentum, dampening, 0.0)

    def launch(sub, sel, cached):
        for dtype, dsel in _by_dtype(sub[0]):
            part = sub if dsel is None else [[lst[i] for i in dsel] for lst in sub]
            mt_launch(dtype, "fused_sgd", dev.index, stream, numels(part[0]),
                      [data_ptrs(lst) for lst in part], grad_scale=gs_ptr, found_inf=fi_ptr, hyper=hyper, flags=flags,
                      cached=cached)

    written = [0] + ([2] if momentum != 0 else []) + ([1] if grad_scale is not None else [])
    run_in_batches(lists, written, launch)
    del keep_gs, keep_fi
