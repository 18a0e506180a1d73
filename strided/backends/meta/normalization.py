"""Meta functions: softmax, log_softmax, layer_norm, cross_entropy_loss.

Note [cross_entropy_loss paths]
As torch's ``cross_entropy_loss``: a target with the input's shape holds class *probabilities*
(floating, no ignore_index); any other target holds class *indices* and goes through
``nll_loss_nd``: 1-D/2-D inputs as ``nll_loss``, 4-D as ``nll_loss2d``, 3-D and >4-D reshaped to
4-D. Each path raises the checks of the torch function it mirrors, in torch's order (some are
ValueError, as torch's ``TORCH_CHECK_VALUE``). The class dim is 0 for a 1-D input, else 1.
"""

from __future__ import annotations

from ... import dtypes as dt
from ...dispatch.library import kernel
from .common import check, new_output, wrap_dim
from .reductions import type_name

__all__ = ["softmax_dtype", "softmax_backward_output", "layer_norm_dims", "layer_norm_backward_outputs",
           "cross_entropy_meta"]

_NO_REDUCTION, _MEAN, _SUM = 0, 1, 2


def softmax_dtype(self, dim, dtype, name: str) -> dt.dtype:
    """Validate softmax/log_softmax; the result dtype (``dtype`` or the input's)."""
    d = wrap_dim(dim, self.dim())
    out = dt.to_dtype(dtype) if dtype is not None else self.dtype
    if not out.is_floating_point:
        kind = "lastdim_kernel_impl" if d == max(self.dim() - 1, 0) else "kernel_impl"
        kernel = "host_softmax" if self.device.type == "cuda" else f"{name}_{kind}"  # torch 2.11's CUDA kernel
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(out)}\'')
    return out


@kernel("Meta")
def softmax(self, dim, dtype=None):
    return new_output(self._sizes, softmax_dtype(self, dim, dtype, "softmax"), self.device)


@kernel("Meta")
def log_softmax(self, dim, dtype=None):
    return new_output(self._sizes, softmax_dtype(self, dim, dtype, "log_softmax"), self.device)


def softmax_backward_output(grad_output, output, dim, input_dtype, name: str):
    """``_softmax_backward_data`` / ``_log_softmax_backward_data``: the gradient of the forward's input, shaped like
    ``output``, in ``grad_output``'s dtype -- float16 for a float32 gradient of a float16 input (autocast's case),
    as torch's meta function (a bfloat16 ``input_dtype`` keeps float32 there too)."""
    check(list(grad_output._sizes) == list(output._sizes),
          lambda: f"{name}: grad_output of size {list(grad_output._sizes)} does not match output of size "
                  f"{list(output._sizes)}")
    check(grad_output.dtype is output.dtype,
          lambda: f"{name}: {_expected_scalar_type(output.dtype, grad_output.dtype)} for grad_output")
    check(output.dtype.is_floating_point and dt.to_dtype(input_dtype).is_floating_point,
          lambda: f"{name}: expected floating point output and input_dtype, got {output.dtype} and {input_dtype}")
    wrap_dim(dim, output.dim())
    d = dt.float16 if grad_output.dtype is dt.float32 and dt.to_dtype(input_dtype) is dt.float16 else grad_output.dtype
    return new_output(output._sizes, d, output.device)


@kernel("Meta")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    return softmax_backward_output(grad_output, output, dim, input_dtype, "_softmax_backward_data")


@kernel("Meta")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return softmax_backward_output(grad_output, output, dim, input_dtype, "_log_softmax_backward_data")


# Note [layer_norm check memo]
# layer_norm's checks read only metadata (sizes and dtypes of input, weight and bias, the normalized
# shape), and a model normalizes the same shapes every step, forward and backward: the number of
# normalized dims is kept per key once the checks passed. Bounded: cleared past 1024 keys.
_DIMS_MEMO: dict = {}


def layer_norm_dims(input, normalized_shape, weight, bias) -> int:
    """torch's CPU dtype rules and ``_check_layer_norm_inputs``; the number of normalized dims
    (Note [layer_norm check memo])."""
    ns = tuple(normalized_shape) if normalized_shape.__class__ is list else normalized_shape
    key = None
    if ns.__class__ is tuple or ns.__class__ is int:
        key = (input._sizes, input.dtype, ns, None if weight is None else (weight._sizes, weight.dtype),
               None if bias is None else (bias._sizes, bias.dtype))
        n = _DIMS_MEMO.get(key)
        if n is not None:
            return n
    n = _check_layer_norm(input, normalized_shape, weight, bias)
    if key is not None:
        if len(_DIMS_MEMO) > 1024:
            _DIMS_MEMO.clear()
        _DIMS_MEMO[key] = n
    return n


def _check_layer_norm(input, normalized_shape, weight, bias) -> int:
    params = [t for t in (weight, bias) if t is not None]
    if params and params[0].dtype is not input.dtype:
        # CPU mixed dtype (torch's is_mixed_type): a half/bfloat16 input with float32 parameters.
        for t in params:
            check(t.dtype is dt.float32, "mixed dtype (CPU): expect parameter to have scalar type of Float")
        check(input.dtype in (dt.float16, dt.bfloat16),
              "mixed dtype (CPU): all inputs must share same datatype.")
    shape = [normalized_shape] if isinstance(normalized_shape, int) else [int(s) for s in normalized_shape]
    n = len(shape)
    check(n >= 1, lambda: "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                          f"one element, but got normalized_shape = {shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        check(t is None or list(t._sizes) == shape,
              lambda name=name, t=t: f"Expected {name} to be of same shape as normalized_shape, but got "
                                     f"{name} of shape {list(t._sizes)} and normalized_shape = {shape}")
    sizes = list(input._sizes)
    if len(sizes) < n or sizes[len(sizes) - n:] != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*{''.join(f', {s}' for s in shape)}], but got input of size{sizes}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for '{type_name(input.dtype)}'")
    if params and params[0].dtype is input.dtype:
        for t in params:
            check(t.dtype is input.dtype, lambda t=t: _expected_scalar_type(input.dtype, t.dtype))
    return n


def layer_norm_backward_outputs(grad_out, input, normalized_shape, weight, output_mask):
    """Checks of ``_layer_norm_backward`` and its three outputs (Note [Fused layer_norm backward]).

    grad_input is shaped and typed like ``input``; grad_weight and grad_bias like ``weight`` (like
    ``normalized_shape`` in ``input``'s dtype without one). An output ``output_mask`` does not ask
    for is an empty 1-D tensor (torch returns an undefined tensor there).
    """
    n = layer_norm_dims(input, normalized_shape, weight, None)
    check(list(grad_out._sizes) == list(input._sizes),
          lambda: f"_layer_norm_backward: grad_out of size {list(grad_out._sizes)} does not match input of size "
                  f"{list(input._sizes)}")
    check(grad_out.dtype is input.dtype,
          lambda: f"_layer_norm_backward: {_expected_scalar_type(input.dtype, grad_out.dtype)} for grad_out")
    check(len(output_mask) == 3, lambda: f"_layer_norm_backward: output_mask must have 3 entries, got {output_mask}")
    pshape = input._sizes[input.dim() - n:]
    pdtype = weight.dtype if weight is not None else input.dtype
    dev = input.device
    dx = new_output(input._sizes if output_mask[0] else (0,), input.dtype, dev)
    dw = new_output(pshape if output_mask[1] else (0,), pdtype, dev)
    db = new_output(pshape if output_mask[2] else (0,), pdtype, dev)
    return n, dx, dw, db


@kernel("Meta")
def layer_norm_backward(grad_out, input, normalized_shape, weight, eps, output_mask):
    _, dx, dw, db = layer_norm_backward_outputs(grad_out, input, normalized_shape, weight, output_mask)
    return dx, dw, db


def _expected_scalar_type(want, got) -> str:
    return f"expected scalar type {type_name(want)} but found {type_name(got)}"


@kernel("Meta")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    layer_norm_dims(input, normalized_shape, weight, bias)
    return new_output(input._sizes, input.dtype, input.device)


def _check_weight(weight, n_classes, prefix="") -> None:
    check(weight is None or (weight.dim() == 1 and weight.numel() == n_classes),
          lambda: f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes "
                  f"but got weight tensor of shape: {list(weight._sizes)}")


def _check_label_smoothing(label_smoothing) -> None:
    check(not label_smoothing > 1.0,
          lambda: f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")


def _check_log_softmax(self, class_dim) -> None:
    wrap_dim(class_dim, self.dim())
    if not self.dtype.is_floating_point:
        kind = "lastdim_kernel_impl" if class_dim == self.dim() - 1 else "kernel_impl"
        kernel = "host_softmax" if self.device.type == "cuda" else f"log_softmax_{kind}"  # torch 2.11's CUDA kernel
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(self.dtype)}'")


def _nll_loss_nd(self, target, weight) -> tuple:
    """The checks of nll_loss_nd -> nll_loss / nll_loss2d, in order; returns the unreduced shape."""
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    batch = target._sizes[0] if target._sizes else 0
    if self.dim() != 1 and self._sizes[0] != batch:
        raise ValueError(f"Expected input batch_size ({self._sizes[0]}) to match target batch_size "
                         f"({batch}).")
    sizes = list(self._sizes)
    if self.dim() == 3 or self.dim() > 4:
        check(list(target._sizes[1:]) == sizes[2:],
              lambda: f"Expected target size {[sizes[0]] + sizes[2:]}, got {list(target._sizes)}")
    if self.dim() <= 2:  # torch checks the target's dims before its dtype here
        check(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported")
    check(target.dtype in (dt.int64, dt.uint8),
          lambda: f"expected target dtype to be Long or Byte, but got {type_name(target.dtype)}")
    if self.dim() <= 2:
        if self.dim() == 1 and target.dim() == 1:
            if target._sizes[0] != 1:
                raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                                 f"{target._sizes[0]}")
        else:
            check((self.dim() == 1 and target.dim() == 0) or sizes[0] == target._sizes[0],
                  lambda: f"size mismatch (got input: {sizes}, target: {list(target._sizes)})")
        _check_weight(weight, sizes[-1])
        unreduced = (sizes[0],) if self.dim() == 2 else ()
    else:
        if self.dim() == 4:
            check(target.dim() == 3, lambda: "only batches of spatial targets supported (3D tensors) but got "
                                             f"targets of dimension: {target.dim()}")
        check(weight is None or weight.numel() == sizes[1],
              "weight tensor should be defined either for all or no classes")
        if self.dim() == 4:
            check(list(target._sizes) == [sizes[0]] + sizes[2:],
                  lambda: f"size mismatch (got input: {sizes} , target: {list(target._sizes)}")
        unreduced = tuple([sizes[0]] + sizes[2:])
    if weight is not None:
        check(weight.dtype is self.dtype, lambda: _expected_scalar_type(self.dtype, weight.dtype))
    return unreduced


def cross_entropy_meta(self, target, weight, reduction, ignore_index, label_smoothing):
    """Validate cross_entropy_loss (Note [cross_entropy_loss paths]).

    Returns (probability target?, output shape, output dtype).
    """
    if reduction not in (_NO_REDUCTION, _MEAN, _SUM):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    class_dim = 0 if self.dim() == 1 else 1
    if self._sizes == target._sizes:
        check(target.dtype.is_floating_point, lambda: "Expected floating point type for target with class "
                                                      f"probabilities, got {type_name(target.dtype)}")
        check(ignore_index < 0, "ignore_index is not supported for floating point target")
        if self.dim() == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        _check_weight(weight, self._sizes[class_dim], "cross_entropy: ")
        _check_log_softmax(self, class_dim)
        _check_label_smoothing(label_smoothing)
        d = dt.promote_types(self.dtype, target.dtype)
        if weight is not None:
            d = dt.promote_types(d, weight.dtype)
        unreduced = tuple(s for i, s in enumerate(self._sizes) if i != class_dim)
    else:
        if label_smoothing > 0.0:
            _check_label_smoothing(label_smoothing)
        _check_log_softmax(self, class_dim)
        unreduced = _nll_loss_nd(self, target, weight)
        d = self.dtype
    return self._sizes == target._sizes, (unreduced if reduction == _NO_REDUCTION else ()), d


@kernel("Meta")
def cross_entropy_loss(self, target, weight=None, reduction=_MEAN, ignore_index=-100, label_smoothing=0.0):
    _, shape, d = cross_entropy_meta(self, target, weight, reduction, ignore_index, label_smoothing)
    return new_output(shape, d, self.device)
