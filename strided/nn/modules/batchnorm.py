"""``BatchNorm1d``, ``BatchNorm2d`` and ``BatchNorm3d``: per-channel normalization with running statistics (torch's
buffers, momentum rule, ``num_batches_tracked`` and repr); ``SyncBatchNorm`` as torch's runs it in one process."""

from __future__ import annotations

from ... import dtypes as dt
from ... import factories
from ...tensor import Tensor
from ..batch_norm import batch_norm
from ..module import Module
from ..parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _BatchNorm(Module):
    _dims: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(factories.empty((num_features,), device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(factories.empty((num_features,), device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", factories.zeros((num_features,), device=device, dtype=dtype))
            self.register_buffer("running_var", factories.ones((num_features,), device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", factories.tensor(0, dtype=dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            self.weight.detach().fill_(1)
        if self.bias is not None:
            self.bias.detach().zero_()

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._dims:
            expected = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {expected} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs."""

    _dims = (5,)


# Note [SyncBatchNorm in one process]
# torch's SyncBatchNorm all-reduces the batch statistics over a process group only when
# torch.distributed is initialized with more than one rank; otherwise its forward is F.batch_norm,
# as BatchNorm's but for any input of two or more dims. strided has no torch.distributed, so that
# fallback is the whole forward here: a training script that calls convert_sync_batchnorm runs
# unchanged in one process. A ``process_group`` is kept (torch keeps it) and never used.
class SyncBatchNorm(_BatchNorm):
    """Batch normalization of inputs with two or more dims; across processes in torch, here over the one
    process's batch (Note [SyncBatchNorm in one process])."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every BatchNorm layer in it replaced by a SyncBatchNorm that shares its parameters and
        buffers (a BatchNorm ``module`` itself is returned as a new SyncBatchNorm), as torch's."""
        if not isinstance(module, Module):
            raise TypeError(f"convert_sync_batchnorm(): module must be an nn.Module, not {type(module).__name__}")
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
