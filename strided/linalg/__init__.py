"""``strided.linalg``: torch.linalg on every backend.

The factorizations are ops of their own (Note [Linear-algebra kernels] in ops/composite/linalg_solvers.py):
LAPACK through NumPy on the CPU where NumPy exposes the routine (Note [LAPACK on the CPU]), fused kernels on
CUDA, and a composition of strided's ops everywhere else (Meta). Everything around them -- argument checks,
sorting, scaling, the gradients -- is composed of ops here.

One module per family: ``norms`` (vector / matrix norms, cross, vecdot), ``triangular`` (triangular
solves, Cholesky), ``lu`` (LU with partial pivoting, solve, inv, det), ``qr`` (Householder QR, lstsq),
``eigh`` (symmetric eigendecomposition), ``eig`` (eig, eigvals: general
square matrices, complex results), ``ldl`` (LDL with Bunch-Kaufman pivoting, symmetric indefinite solves),
``svd`` (singular values, pinv, rank), ``polar`` (the polar decomposition over the SVD) and ``derived``
(multi_dot, vander, matrix_exp, householder_product, tensorinv, tensorsolve); ``legacy`` holds the
torch.* forms (``strided.det``, ``strided.svd``, ...) and the Tensor methods call into it.
"""

from __future__ import annotations

from . import derived as _derived
from . import eig as _eig
from . import eigh as _eigh
from . import ldl as _ldl
from . import lu as _lu
from . import norms as _norms
from . import polar as _polar
from . import qr as _qr
from . import svd as _svd
from . import triangular as _triangular
from .derived import *  # noqa: F403
from .eig import *  # noqa: F403
from .eigh import *  # noqa: F403
from .ldl import *  # noqa: F403
from .lu import *  # noqa: F403
from .norms import *  # noqa: F403
from .polar import *  # noqa: F403
from .qr import *  # noqa: F403
from .svd import *  # noqa: F403
from .triangular import *  # noqa: F403

__all__ = [*_norms.__all__, *_triangular.__all__, *_lu.__all__, *_qr.__all__, *_eigh.__all__, *_svd.__all__,
           *_polar.__all__, *_derived.__all__, *_eig.__all__, *_ldl.__all__]

from ..dispatch.out_arguments import accepting_out as _accepting_out  # noqa: E402

# torch.linalg's out= (Note [Out arguments]): the result written into the given tensors
_accepting_out(globals(), (
    "cholesky", "cholesky_ex", "cond", "cross", "det", "eigh", "eigvalsh", "householder_product", "inv", "inv_ex", "lu",
    "lu_factor", "lu_factor_ex", "lu_solve", "lstsq", "ldl_factor", "ldl_factor_ex", "ldl_solve", "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "polar",
    "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vecdot",
    "vector_norm"), prefix="linalg.")

from ..amp.composed_functions import wrap_native as _wrap_native  # noqa: E402

# functions torch implements natively: autocast casts their inputs by torch's lists and nothing inside them
# (Note [Autocast around composed functions]); pinv, norms, matrix_power, multi_dot ... torch composes too
_wrap_native(globals(), (
    "solve_triangular", "cholesky", "cholesky_ex", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve", "solve_ex",
    "inv", "inv_ex", "det", "slogdet", "qr", "lstsq", "eigh", "eigvalsh", "svd", "svdvals", "matrix_rank", "cond",
    "matrix_exp", "householder_product", "tensorinv", "tensorsolve", "eig", "eigvals", "vecdot", "matrix_sqrth",
    "ldl_factor", "ldl_factor_ex", "ldl_solve", "polar"), low=("vecdot",),
    cpu_fp32=(
    "cholesky", "cholesky_ex", "solve", "inv", "inv_ex", "qr", "lstsq", "eigh", "eigvalsh", "svd", "svdvals",
    "matrix_rank", "cond", "householder_product", "tensorinv", "tensorsolve", "eig", "eigvals"))
