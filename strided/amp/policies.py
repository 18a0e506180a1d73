"""Autocast kernels: torch's per-device op lists and the four cast policies.

Note [Autocast policies]
torch (aten/src/ATen/autocast_mode.cpp) sorts ops into policies, separately for CPU and CUDA:
  * lower_precision_fp: cast floating inputs to the autocast dtype (matmul-like ops);
  * fp32: cast floating inputs to float32 (ops that need range: exp, log, pow, layer_norm, losses);
  * fp32_set_opt_dtype: when the first input is eligible, run with ``dtype=float32`` unless the
    caller passed a dtype (softmax, log_softmax, sum, prod, cumsum);
  * promote: cast every floating input to the widest floating type among them (cat, stack ...);
  * banned: refuse (binary_cross_entropy on CUDA, in torch's words: use the with-logits form);
  * native (strided's own): no cast, but run below Autocast -- for a composite of strided's (mv: mm) where
    torch's kernel calls nothing on the list (mv: addmv, not on the CPU lists).
An input is *eligible* when it is a floating tensor on the autocast device and not float64.
The lists below are torch's, restricted to the ops strided's schema file has; the functions strided composes
above the dispatcher where torch has native kernels (``strided.linalg``) are guarded in
``composed_functions.py`` (Note [Autocast around composed functions]). strided's
``cross_entropy_loss`` is one backend op; torch's CUDA autocast runs its parts (log_softmax,
nll_loss) in float32, so it is listed as fp32 for CUDA too. The losses that are operators here (nll_loss_forward /
nll_loss2d_forward -- torch lists nll_loss / nll_loss2d, which call them --, binary_cross_entropy(_with_logits),
mse_loss, smooth_l1_loss, huber_loss) are on torch's fp32 lists.

Each Autocast kernel casts, then calls the op again with this device's Autocast bit cleared
(torch's ExcludeDispatchKeyGuard), so the op resolves to Autograd or the backend below it, and
nested ops inside a composite run uncast.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch.dispatcher import autocast_state
from ..dispatch.keys import AUTOCAST_BIT, DispatchKey
from ..ops import registry as _registry
from ..tensor import Tensor
from .autocast_mode import _DEVICE_BITS, _local
from .cast_cache import cached_cast

__all__ = ["POLICIES", "register_autocast_kernels"]

_MATMUL = ["mm", "bmm", "addmm", "baddbmm", "matmul", "linear"]
_CELLS = ["_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]

# device type -> policy -> op names ("name" or "name.overload"; a bare name covers every overload)
POLICIES: dict[str, dict[str, list[str]]] = {
    "cpu": {
        # torch's CPU LSTM layer is one oneDNN op on its lower-precision list (mkldnn_rnn_layer); its cells and GRU
        # are composites whose float32 state promotes the low gates (Note [Cells under autocast])
        "lower_precision_fp": [*_MATMUL, "addbmm", "_addmm_activation", "lstm"],
        "fp32": ["cross_entropy_loss", "prod", "polar", "quantile", "nanquantile", "cdist", "trace", "view_as_complex",
                 "geqrf", "linalg_eig", "linalg_eigvals", "nll_loss_forward", "nll_loss2d_forward", "mse_loss",
                 "binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss"],
        "fp32_set_opt_dtype": [],
        "promote": ["cat", "stack", "index_copy"],
        "native": ["mv"],
    },
    "cuda": {
        "lower_precision_fp": [*_MATMUL, *_CELLS, "addbmm", "addmv", "addr", "mv", "einsum", "chain_matmul"],
        "fp32": ["pow", "exp", "log", "log1p", "expm1", "rsqrt", "reciprocal", "softplus", "norm", "acos", "asin",
                 "cosh", "erfinv", "log10", "log2", "sinh", "tan",
                 "logsumexp", "layer_norm", "cross_entropy_loss", "dist", "cdist", "renorm", "nll_loss_forward",
                 "nll_loss2d_forward", "binary_cross_entropy_with_logits", "mse_loss", "smooth_l1_loss", "huber_loss"],
        "fp32_set_opt_dtype": ["softmax", "log_softmax", "sum", "prod", "cumsum", "cumprod"],
        "promote": ["addcmul", "addcdiv", "scatter_add", "index_put", "atan2", "cross", "dot", "vdot", "tensordot"],
        "banned": ["binary_cross_entropy"],
    },
}

_BANNED = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
           "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
           "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
           "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
           "safe to autocast.")


def _eligible(x, device_type: str) -> bool:
    return (isinstance(x, Tensor) and x.dtype.category == _dt.FLOATING and x.dtype is not _dt.float64
            and x.device.type == device_type)


def _cast(x, dtype, device_type: str):
    """``x`` cast to ``dtype`` when eligible; lists and tuples element-wise; others unchanged. A cast to the
    autocast dtype may come from the region's cache (Note [Autocast cast cache])."""
    if isinstance(x, Tensor):
        if x.dtype is dtype or not _eligible(x, device_type):
            return x
        return cached_cast(x, dtype) if dtype is _local.dtype[device_type] else x.to(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype, device_type) for v in x)
    return x


def _device_type(args, kwargs) -> str | None:
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            return a.device.type
        if isinstance(a, (list, tuple)):
            for v in a:
                if isinstance(v, Tensor):
                    return v.device.type
    return None


def _widest(args, kwargs, device_type: str):
    """torch's ``promote_type``: float32 if any eligible input is float32, else the autocast dtype."""
    for a in (*args, *kwargs.values()):
        for v in (a if isinstance(a, (list, tuple)) else (a,)):
            if _eligible(v, device_type) and v.dtype is _dt.float32:
                return _dt.float32
    return _local.dtype[device_type]


def _make_kernel(op, policies: dict[str, str]):
    """The Autocast kernel of ``op``: ``policies`` maps a device type to a policy name."""
    dtype_pos = next((i for i, a in enumerate(op.schema.arguments) if a.name == "dtype"), None)
    dtype_kw_only = dtype_pos is not None and op.schema.arguments[dtype_pos].kwarg_only
    tls = autocast_state.tls

    def autocast_kernel(*args, **kwargs):
        device_type = _device_type(args, kwargs)
        policy = policies.get(device_type)
        if policy is None:  # listed for another device only: below Autocast, inner ops still autocast (a fallthrough)
            return op.redispatch(op._keyset(args, kwargs) & ~AUTOCAST_BIT, *args, **kwargs)
        if policy == "banned":  # torch's binary_cross_entropy_banned: a sigmoid's saturated bf16 / fp16 output
            raise RuntimeError(_BANNED)
        if policy == "lower_precision_fp":
            target = _local.dtype[device_type]
            args = _cast(args, target, device_type)
            kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
        elif policy == "fp32":
            args = _cast(args, _dt.float32, device_type)
            kwargs = {k: _cast(v, _dt.float32, device_type) for k, v in kwargs.items()}
        elif policy == "promote":
            target = _widest(args, kwargs, device_type)
            args = _cast(args, target, device_type)
            kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
        elif policy == "fp32_set_opt_dtype" and args and _eligible(args[0], device_type):
            if not dtype_kw_only and len(args) > dtype_pos:
                if args[dtype_pos] is None:
                    args = (*args[:dtype_pos], _dt.float32, *args[dtype_pos + 1:])
            elif kwargs.get("dtype") is None:
                kwargs = {**kwargs, "dtype": _dt.float32}
        mask = tls.mask
        tls.mask = mask & ~_DEVICE_BITS.get(device_type, 0)
        try:
            return op(*args, **kwargs)
        finally:
            tls.mask = mask

    autocast_kernel.__name__ = f"autocast_{op.schema.name}"
    return autocast_kernel


def register_autocast_kernels() -> None:
    """Register an Autocast kernel on every overload named in ``POLICIES`` (once, at import)."""
    per_op: dict = {}
    for device_type, table in POLICIES.items():
        for policy, names in table.items():
            for name in names:
                base, _, overload = name.partition(".")
                packet = getattr(_registry.namespace("aten"), base)
                ops = [getattr(packet, overload)] if overload else packet._ordered
                for op in ops:
                    per_op.setdefault(op, {})[device_type] = policy
    for op, policies in per_op.items():
        op.register(DispatchKey.Autocast, _make_kernel(op, policies))
