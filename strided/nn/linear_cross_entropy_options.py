"""``LinearCrossEntropyOptions``: how ``F.linear_cross_entropy`` chunks the batch (torch 2.14's options).

Passing an instance to ``F.linear_cross_entropy`` (or ``nn.LinearCrossEntropyLoss``) selects the chunked
path (Note [Chunked linear cross entropy] in ``linear_cross_entropy.py``); ``None`` selects the reference
``cross_entropy(linear(x, W, b), target)``. The fields and the chunk-size rules are torch's.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from .. import dtypes as dt

__all__ = ["LinearCrossEntropyOptions"]

_VALID_ACC_POLICIES = ("auto", "accurate", "compact")
_ACC_DTYPES = (dt.float16, dt.bfloat16, dt.float32, dt.float64)


def _auto_acc_policy(device_type: str | None, dtype) -> str:
    """``"accurate"`` for fp16 / bf16 on the CPU (its weight-gradient GEMM then runs in float32), else
    ``"compact"`` (no (num_classes, in_features) float32 scratch)."""
    if device_type == "cpu" and dtype in (dt.float16, dt.bfloat16):
        return "accurate"
    return "compact"


@dataclasses.dataclass(frozen=True, slots=True)
class LinearCrossEntropyOptions:
    """Settings of the chunked ``linear_cross_entropy``: the full (num_batches, num_classes) logits are
    never made, only (batch_chunk_size, num_classes) at a time.

    allow_retain_graph: keep the gradients precomputed in forward so backward can run twice (one more
        gradient-sized buffer); without it a second backward raises. ``reduction="none"`` recomputes in
        backward and ignores this.
    batch_chunk_size: rows per chunk (``None``: one chunk, or as ``chunking_method`` says).
    chunking_method: ``"auto"`` / ``"aspect_ratio"`` / ``"aspect_ratio:N"``: chunks whose logits are
        about the size of the input, ``next_pow2(ceil(N / ceil(C / D)))`` rows (divided by N), capped so the
        peak stays below the unchunked path's; ``None``: use ``batch_chunk_size``.
    acc_policy: ``"accurate"`` (logits, their gradient and the weight gradient accumulated in ``acc_dtype``),
        ``"compact"`` (the weight gradient accumulated in the input dtype, chunk by chunk) or ``"auto"``.
    acc_dtype: accumulation dtype; ``None``: float32 for fp16 / bf16 inputs, else the input dtype.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "compact", "auto"] = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _VALID_ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}; expected one of "
                             f"{', '.join(map(repr, _VALID_ACC_POLICIES))}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = str(self.chunking_method).partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and not isinstance(size, bool) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, strided.float16, strided.bfloat16, strided.float32, "
                f"strided.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for fp16 / bf16 inputs where a mixed-precision GEMM exists (CUDA sm_70+ for fp16,
        sm_80+ for bf16, and the CPU); None otherwise (the input dtype is used)."""
        if device is None or dtype not in (dt.float16, dt.bfloat16):
            return None
        if device.type == "cuda":
            from .. import cuda

            major = cuda.get_device_capability(device)[0]
            if (dtype is dt.bfloat16 and major < 8) or (dtype is dt.float16 and major < 7):
                return None
            return dt.float32
        return dt.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches: int, in_features: int, num_classes: int,
                                  method: str | None = None) -> int:
        """Rows per chunk for ``method`` (``"aspect_ratio[:N]"``)."""
        method = str(method if method is not None else self.chunking_method)
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = self._ceil_div(num_batches, self._ceil_div(num_classes, in_features))
        chunk = 1 << (target - 1).bit_length()  # the next power of two >= target
        return min(chunk // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype, device=None,
                prob_target: bool = False) -> LinearCrossEntropyOptions:
        """These options with every ``"auto"`` and ``None`` resolved for one call (torch's ``_adjust``)."""
        acc_policy = self.acc_policy
        method = self.chunking_method
        was_auto = method == "auto"
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic one
        if acc_policy == "auto":
            acc_policy = _auto_acc_policy(device.type if device is not None else None, dtype)
        if method == "auto":
            method = "aspect_ratio"
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if was_auto and acc_policy == "compact":  # never above the unchunked path's peak
                cap = num_batches // 2 if prob_target else num_batches * num_classes // (4 * in_features)
                cap = 1 << (cap.bit_length() - 1) if cap >= 1 else 1
                size = max(1, min(size, cap))
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{method}') give different "
                    f"chunk sizes ({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            auto = self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            acc_dtype = auto if auto is not None else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)
