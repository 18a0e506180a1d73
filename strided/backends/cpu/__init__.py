"""The CPU backend: NumPy kernels over host storage (see common.py for the array views)."""

from ...dispatch.dispatcher import BACKEND_KERNEL_WRAPPERS  # noqa: E402
from ...dispatch.keys import DispatchKey  # noqa: E402
from . import (  # noqa: F401
    bitwise,
    complex_ops,
    factories,
    fft,
    indexing,
    linalg,
    linalg_eig,
    linalg_factorizations,
    linalg_ldl,
    math_more,
    normalization,
    optim,
    pointwise,
    pointwise_binary_math,
    pointwise_unary,
    pooling,
    random_fills,
    random_samplers,
    recurrent,
    reductions,
    threads,
)
from .common import quiet_kernel  # noqa: E402
from .host_malloc import tune_host_malloc  # noqa: E402
from .inplace import register_inplace  # noqa: E402

BACKEND_KERNEL_WRAPPERS[DispatchKey.CPU] = quiet_kernel  # Note [Backend kernel wrappers]
register_inplace()  # Note [CPU direct in-place kernels]
tune_host_malloc()  # Note [Host malloc thresholds]
