"""strided: PyTorch's device-backend system rebuilt in Python.

A strided tensor, an operator schema file and a dispatcher keyed by backend, CPU / Meta / CUDA
backends, and a CUDA caching allocator. Importing strided never initializes CUDA.
"""

from __future__ import annotations

from . import dtypes as _dtypes
from .device import device, get_default_device, get_device_module, set_default_device
from .dtypes import (
    bfloat16, bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int, int8,
    int16, int32, int64, long, promote_types, result_type, set_default_dtype, short, uint8, can_cast,
    cdouble, cfloat, complex64, complex128,
)
from .tensor import Size, Tensor
from .storage import UntypedStorage
from .typed_storage import TypedStorage  # noqa: F401 - torch.TypedStorage
from .ops import registry as _registry
from .ops import bound as _bound
from .ops.registry import as_tuple_function as _as_tuple_function, returns_tensor_list as _returns_tensor_list  # noqa: I001
from .ops.registry import returning_self as _returning_self, updates_a_list as _updates_a_list

_registry.load()

from . import ops  # noqa: E402
from .dispatch import library  # noqa: E402
import sys as _sys  # noqa: E402

_sys.modules[f"{__name__}.library"] = library  # `import strided.library` / `from strided.library import custom_op`
from .factories import (  # noqa: E402
    arange, as_tensor, bernoulli, empty, empty_like, empty_strided, eye, from_numpy, full, full_like,
    linspace, ones, ones_like, rand, rand_like, randint, randn, randn_like, tensor, zeros, zeros_like,
)
from .random import Generator, initial_seed, manual_seed, seed, get_rng_state, set_rng_state  # noqa: E402
from .backends.cpu.threads import (  # noqa: E402
    get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads,
)
from .warn_once import is_warn_always_enabled, set_warn_always  # noqa: E402
from .denormals import set_flush_denormal  # noqa: E402
from .sym_numbers import (  # noqa: E402
    sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt, sym_sum,
)
from .random import default_generator  # noqa: E402
from .legacy_tensor_types import CPU_TYPES as _CPU_TYPES, set_default_tensor_type  # noqa: E402

globals().update(_CPU_TYPES)  # strided.FloatTensor ... (Note [Legacy constructors])
from .segment_reduction import segment_reduce  # noqa: E402
from .lobpcg import lobpcg  # noqa: E402
from .device_streams import Event, Stream  # noqa: E402
from .mapped_files import from_file  # noqa: E402
from .control_flow import cond, while_loop  # noqa: E402
from . import return_types  # noqa: E402
from .interop import from_dlpack, to_dlpack  # noqa: E402
from .comparison import allclose, equal, isclose  # noqa: E402
from .predicates import *  # noqa: E402, F403
from .functional import (  # noqa: E402
    argwhere,
    block_diag,
    broadcast_tensors,
    cartesian_prod,
    chain_matmul,
    round,
    cdist,
    einsum,
    meshgrid,
    nonzero,
    tensordot,
    unique,
    unique_consecutive,
    where,
)
from .type_info import finfo, iinfo  # noqa: E402
from .serialization import load, save  # noqa: E402
from ._tensor_str import set_printoptions  # noqa: E402
from . import autograd  # noqa: E402
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402
from .backends.cuda.matmul import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from .backends import cudnn as _cudnn  # noqa: E402, F401 - strided.backends.cudnn, as torch.backends.cudnn
from .backends import mkl as _mkl, mkldnn as _mkldnn, mps as _mps, openmp as _openmp  # noqa: E402, F401 - as torch's
from .backends.determinism import (  # noqa: E402
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, use_deterministic_algorithms,
)
from . import optim  # noqa: E402
from . import func  # noqa: E402
from .func import vmap  # noqa: E402 - torch.vmap is torch.func.vmap
from . import fft  # noqa: E402
from . import masked  # noqa: E402 - strided.masked, as torch.masked (its dense-tensor functions)
from . import profiler  # noqa: E402 - strided.profiler, as torch.profiler
from .stft import istft, stft  # noqa: E402
from . import amp, nn  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402
from . import compiler  # noqa: E402 - strided.compiler, as torch.compiler
from .compiler import compile  # noqa: E402, A004 - torch.compile (Note [No compiler])
from .toplevel_functions import *  # noqa: E402, F403
from .toplevel_aten_forms import *  # noqa: E402, F403
from .lowrank import pca_lowrank, svd_lowrank  # noqa: E402, F401 - torch.pca_lowrank, torch.svd_lowrank
from .factories_more import *  # noqa: E402, F403
from .view_copies import *  # noqa: E402, F403
from .finite_differences import gradient  # noqa: E402
from .histogramdd import histogramdd  # noqa: E402
from .memory.errors import OutOfMemoryError  # noqa: E402

_HAND_WRITTEN = set(globals())
for _name in _bound.FUNCTIONS:
    if _name not in _HAND_WRITTEN:
        _packet = getattr(_bound, _name)
        if _returns_tensor_list(_packet):
            _packet = _as_tuple_function(_packet)
        elif _updates_a_list(_packet):
            _packet = _returning_self(_packet)
        globals()[_name] = _packet
from .memory_formats import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format  # noqa: E402, F401
from .layouts import layout, strided  # noqa: E402, F401 - torch.layout, torch.strided
from .autograd import is_inference_mode_enabled  # noqa: E402, F401
from .autograd.anomaly_mode import (  # noqa: E402, F401 - torch.is_anomaly_enabled and friends
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .amp.autocast_mode import (  # noqa: E402, F401
    get_autocast_dtype, is_autocast_enabled, set_autocast_dtype, set_autocast_enabled,
)
from .amp.cast_cache import (  # noqa: E402, F401
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, is_autocast_cache_enabled,
    set_autocast_cache_enabled,
)
from .amp.autocast_mode import DEPRECATED_FUNCTIONS as _DEPRECATED_AUTOCAST  # noqa: E402

globals().update(_DEPRECATED_AUTOCAST)
from math import e, inf, nan, pi  # noqa: E402, F401 - torch.e, torch.inf, torch.nan, torch.pi

newaxis = None  # torch.newaxis (NumPy's): ``x[:, strided.newaxis]`` adds a dim
from . import foreach_more as _foreach_more  # noqa: E402 - Note [Composite foreach]: only the names the YAML lacks

for _name in _foreach_more.__all__:
    if _name in _bound.FUNCTIONS:  # the YAML's fused op for its forms, the loop for the rest
        globals()[_name] = _foreach_more.with_fused(getattr(_bound, _name), getattr(_foreach_more, _name),
                                                    _name.endswith("_"))
    elif _name not in globals():
        globals()[_name] = getattr(_foreach_more, _name)
del _name, _packet

__version__ = "0.1.0"

# Note [Lazy submodules]
# ``st.cuda.memory_allocated()`` works right after ``import strided``, as ``torch.cuda`` does after
# ``import torch``. These submodules are imported on first attribute access instead of here: they
# cost import time (strided.cuda ~35 ms) and most CPU-only programs never touch them. Importing
# strided.cuda does not initialize CUDA either way (Note [Lazy driver] in backends/cuda/driver.py).
_LAZY_SUBMODULES = frozenset({"cuda", "utils", "testing", "linalg", "special", "distributions", "accelerator",
                               "signal", "cpu", "distributed"})
# torch.*'s linear-algebra functions live in strided.linalg.legacy, loaded (and bound here) on first use
_LAZY_FUNCTIONS = frozenset({"inverse", "det", "logdet", "slogdet", "svd", "cholesky_solve", "cholesky_inverse",
                             "pinverse", "matrix_power", "matrix_exp", "lu_unpack", "triangular_solve", "lu",
                             "lu_solve", "nuclear_norm", "frobenius_norm", "norm_except_dim", "qr",
                             "cholesky", "orgqr", "ormqr", "solve", "lstsq", "eig", "symeig", "matrix_rank"})


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")  # the import binds it as an attribute
    if name in _LAZY_FUNCTIONS:
        fn = getattr(importlib.import_module(f"{__name__}.linalg.legacy"), name)
        globals()[name] = fn
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
