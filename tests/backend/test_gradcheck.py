"""Gradient checks: every differentiable OpInfo against finite differences (float64, CPU).

An op is differentiable when derivatives.yaml has its formulas (it then has an Autograd kernel)
or when it is CompositeImplicitAutograd (its parts record the graph). A few samples of each
OpInfo keep the run short; every overload of the YAML without formulas must be listed below as
non-differentiable or be a decomposition.
"""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
from strided.autograd import gradcheck
from strided.autograd.kernels import DERIVATIVES
from strided.dispatch.keys import DispatchKey
from strided.ops.complex_support import COMPLEX_OPS
from strided.ops.registry import load
from strided.tensor import Tensor
from strided.testing import available_devices, to_device
from strided.testing.opdb import op_db

# Overloads with no derivative, as in torch: integer/bool results, factories, random fills, metadata.
NON_DIFFERENTIABLE = {
    "empty.memory_format", "empty_strided", "zeros", "ones", "full", "arange.start_step", "linspace",
    "eye.m", "rand", "randn", "randint.low", "randperm", "argsort", "argsort.stable", "nonzero", "empty_like",
    "zeros_like", "ones_like", "full_like", "tril_indices", "triu_indices", "repeat_interleave.Tensor",
    "searchsorted.Tensor",
    "rand_like", "randn_like", "resize_", "set_.source_Storage_storage_offset", "set_.source_Storage",
    "set_.source_Tensor", "set_", "_local_scalar_dense",
    "_check_index_range",
    "detach", "eq.Tensor", "eq.Scalar", "ne.Tensor", "ne.Scalar", "lt.Tensor", "lt.Scalar", "le.Tensor",
    "le.Scalar", "gt.Tensor", "gt.Scalar", "ge.Tensor", "ge.Scalar", "logical_and", "logical_or",
    "logical_xor", "logical_not", "where.Scalar", "isnan", "isinf", "isfinite", "argmax", "argmin", "all",
    "all.dim", "all.dims", "any", "any.dim", "any.dims", "one_hot",
    "bitwise_and.Tensor", "bitwise_and.Scalar", "bitwise_or.Tensor", "bitwise_or.Scalar", "bitwise_xor.Tensor",
    "bitwise_xor.Scalar", "bitwise_not", "bitwise_left_shift.Tensor", "bitwise_left_shift.Tensor_Scalar",
    "bitwise_right_shift.Tensor", "bitwise_right_shift.Tensor_Scalar",
    "bitwise_and_.Tensor", "bitwise_and_.Scalar", "bitwise_or_.Tensor", "bitwise_or_.Scalar", "bitwise_xor_.Tensor",
    "bitwise_xor_.Scalar", "bitwise_not_", "bitwise_left_shift_.Tensor", "bitwise_left_shift_.Tensor_Scalar",
    "bitwise_right_shift_.Tensor", "bitwise_right_shift_.Tensor_Scalar",
    # optimizer kernels: they update parameters under no_grad
    "_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_",
    # a backward kernel: create_graph=True differentiates layer_norm's decomposed formula instead
    "_layer_norm_backward", "native_batch_norm_backward", "native_group_norm_backward",
    "_thnn_fused_lstm_cell_backward_impl", "_thnn_fused_gru_cell_backward",
    # strided.linalg's factorization kernels (Note [Linear-algebra kernels]): its autograd.Functions differentiate
    "_linalg_tri_solve", "_linalg_cholesky_lower", "_linalg_lu_factor", "_linalg_symmetric_jacobi",
    "_linalg_onesided_jacobi", "_linalg_householder_qr",
    "_linalg_eigvals",  # eigvals without gradients (Note [eigvals through eig]), as torch's
    "linalg_ldl_factor_ex", "linalg_ldl_solve",  # no derivative in torch either (a NotImplemented node)
    "geqrf",  # torch's formula is not_implemented("geqrf") (RAISING_FORMULAS)
    # samplers' gradient helpers and samplers without a gradient (as torch's)
    "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad", "binomial",
}
# Formulas that raise torch's "the derivative for '<op>' is not implemented." (tested in their own files)
RAISING_FORMULAS = {"geqrf"}
# Random ops: gradients are defined (zero, or through the sampled mask) but not finite-differenceable.
RANDOM = {"bernoulli", "bernoulli_.float", "uniform_", "normal_", "random_.from", "random_.to", "random_", "dropout",
          "multinomial", "_standard_gamma", "poisson"}
# Ops whose output length depends on ties between values: a finite-difference step breaks the ties the
# samples are made of, so the output changes shape (their gradient, where defined, is index_select's).
TIE_DEPENDENT = {"_unique2", "unique_dim", "unique_consecutive", "mode"}
# Samples whose gradient differs from the derivative by definition, as in torch: embedding's
# padding_idx row gets no gradient although the forward reads it.
# Samples at points where the op has no derivative: a finite-difference step picks a side. cummax / cummin's
# tied samples flip which index holds the running extreme; NaN and inf have no finite differences.
BY_DEFINITION = {("embedding", "0-dim, padding_idx")} | {(op, name) for op in ("cummax", "cummin") for name in (
    "ties", "long rows (the CUDA block scan)", "rows over one block chunk (the carry)", "a strided dim", "nan, inf")}
# Samples outside the domain of torch's formula: polar's gradient (torch's polar_backward, through sgn(result))
# holds for abs >= 0, the domain of torch's polar samples (low=0); its gradcheck takes |abs|.
NONNEGATIVE_FIRST = {"polar"}
# complex128 samples left out, as torch's gradcheck fails them too: a cast to complex64 is differenced at
# float32 precision; where's real ``other`` under a complex ``self`` gets a complex gradient, and torch's
# formula (no handle_r_to_c) raises its validate_outputs error, as strided's does.
COMPLEX_BY_DEFINITION = {("_to_copy", "to complex64"), ("where.self", "complex, real")}
MAX_NUMEL = 30
SAMPLES_PER_OP = 3


def _overloads():
    aten = load()
    return {op.schema.qualified_name: op for packet in aten for op in packet._ordered}


OVERLOADS = _overloads()


def _differentiable(op) -> bool:
    if op.has_kernel(DispatchKey.Autograd) and getattr(op.kernel(DispatchKey.Autograd), "not_implemented", False):
        return False  # Note [Not-implemented derivatives]
    return op in DERIVATIVES or op.has_kernel(DispatchKey.Autograd) or (
        op.has_kernel(DispatchKey.CompositeImplicitAutograd))


def _leaf(x, differentiable=True, dtypes=(st.float64,)):
    if not differentiable:
        return x
    if isinstance(x, Tensor) and x.dtype in dtypes:
        return x.detach().clone().requires_grad_(True) if x.is_contiguous() else _noncontig_leaf(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_leaf(v, True, dtypes) for v in x)
    return x


def _noncontig_leaf(x):
    """A leaf with the same values and (stride-2) layout as ``x``."""
    wide = st.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device)
    wide.copy_(x)
    return wide.requires_grad_(True)


def _numel(args) -> int:
    total = 0
    for a in args:
        if isinstance(a, Tensor):
            total += a.numel()
        elif isinstance(a, (list, tuple)):
            total += _numel(a)
    return total


def _cases():
    for info in op_db():
        op = OVERLOADS.get(info.name)
        if op is None or info.name in RANDOM or info.name in TIE_DEPENDENT or st.float64 not in info.dtypes:
            continue
        if op._mutated is not None or not _differentiable(op) or info.name in RAISING_FORMULAS:
            continue
        yield pytest.param(info, id=info.name)


def _samples(info, accept=None, dtype=st.float64):
    """A few small samples of ``dtype`` (the smallest one when none is small enough)."""
    rng = np.random.default_rng(0)
    picked, smallest = [], None
    skipped = BY_DEFINITION | (COMPLEX_BY_DEFINITION if dtype.is_complex else set())
    for s in info.samples(dtype, rng):
        if (info.name, s.name) in skipped or (accept is not None and not accept(s)):
            continue
        n = _numel(s.args) + _numel(list(s.kwargs.values()))
        if n == 0:
            continue
        if n <= MAX_NUMEL:
            picked.append(s)
        elif smallest is None or n < smallest[0]:
            smallest = (n, s)
        if len(picked) == SAMPLES_PER_OP:
            break
    return picked or ([smallest[1]] if smallest else [])


@pytest.mark.parametrize("info", list(_cases()))
def test_gradcheck(info):
    _check_op(info, st.float64, (st.float64,))


def _complex_cases():
    for info in op_db():
        op = OVERLOADS.get(info.name)
        if op is None or st.complex128 not in info.dtypes or op.schema.name not in COMPLEX_OPS:
            continue
        if op._mutated is not None or not _differentiable(op) or info.name in RAISING_FORMULAS:
            continue
        yield pytest.param(info, id=info.name)


@pytest.mark.parametrize("info", list(_complex_cases()))
def test_gradcheck_complex(info):
    """complex128 samples of the ops that take complex tensors on the CPU (Note [Complex gradcheck])."""
    _check_op(info, st.complex128, (st.float64, st.complex128))


def _check_op(info, dtype, leaf_dtypes):
    fn = info.get_op()
    samples = _samples(info, dtype=dtype)
    assert samples, f"{info.name}: no {dtype} sample"
    op = OVERLOADS[info.name]
    wrt = _formula_inputs(op)
    names = [a.name for a in op.schema.arguments]
    info_d = DERIVATIVES.get(op)
    differentiable = None
    if info_d is not None and info_d.num_outputs > 1 and not all(info_d.output_differentiability):
        differentiable = info_d.output_differentiability
    for s in samples:
        s_args = (st.abs(s.args[0]), *s.args[1:]) if info.name in NONNEGATIVE_FIRST else s.args
        sample_wrt = _sample_wrt(info, wrt, s_args)
        args = tuple(_leaf(a, sample_wrt is None or i >= len(names) or names[i] in sample_wrt, leaf_dtypes)
                     for i, a in enumerate(s_args))
        kwargs = {k: _leaf(v, sample_wrt is None or k in sample_wrt, leaf_dtypes) for k, v in s.kwargs.items()}
        kw_names = [k for k, v in kwargs.items() if isinstance(v, Tensor) and v.requires_grad]
        n_args = len(args)

        def call(*xs, _kwargs=kwargs, _names=kw_names, _n=n_args):
            kw = dict(_kwargs)
            kw.update(zip(_names, xs[_n:]))
            out = fn(*xs[:_n], **kw)
            if differentiable is None:
                return out
            # outputs the formulas declare non-differentiable (a fused cell's workspace) are left out
            return tuple(o for o, d in zip(out, differentiable) if d)

        inputs = args + tuple(kwargs[k] for k in kw_names)
        if not any(isinstance(x, Tensor) and x.requires_grad for x in _flat(inputs)):
            continue
        assert gradcheck(call, inputs), f"{info.name}: {s}"


def _inplace_cases():
    for info in op_db():
        op = OVERLOADS.get(info.name)
        if op is None or st.float64 not in info.dtypes or info.name in RANDOM:
            continue
        if op._mutated is not None and op._mutated[0] == 0 and _differentiable(op):
            yield pytest.param(info, op, id=info.name)


def _inplace_ok(op):
    def accept(s):
        try:
            with st.no_grad():
                op(*(_clone(a) for a in s.args), **s.kwargs)
            return s.args and isinstance(s.args[0], Tensor) and s.args[0].dtype is st.float64
        except (RuntimeError, TypeError, ValueError, IndexError):
            return False

    return accept


def _clone(x):
    return x.clone() if isinstance(x, Tensor) else x


@pytest.mark.parametrize("info, op", list(_inplace_cases()))
def test_gradcheck_inplace(info, op):
    """In-place overloads (autogen ones included) on a non-leaf: the history of ``self`` is rebased."""
    fn = info.get_op()
    samples = _samples(info, _inplace_ok(fn))
    assert samples, f"{op}: no float64 sample valid in place"
    for s in samples:
        args = tuple(_leaf(a) for a in s.args)

        def call(*xs, _kwargs=s.kwargs):
            target = xs[0].clone()
            fn(target, *xs[1:], **_kwargs)
            assert target.grad_fn is not None or not target.requires_grad
            return target

        assert gradcheck(call, args), f"{op}: {s}"


def _sample_wrt(info, wrt, args):
    """``wrt`` for one sample: cross_entropy's weight has a formula for probability targets only (class targets:
    torch's nll_loss refuses a weight that requires grad, Note [Arguments without a formula])."""
    if info.name == "cross_entropy_loss" and not args[1].dtype.is_floating_point:
        return set(wrt) - {"weight"}
    return wrt


def _formula_inputs(op):
    """Names of the inputs derivatives.yaml differentiates (None: a decomposition, all of them)."""
    info = DERIVATIVES.get(op)
    return None if info is None else {name for name, _, _ in info.inputs}


def _flat(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def test_every_overload_is_differentiable_or_listed():
    """Each overload has formulas, decomposes, derives from one that does, or is non-differentiable."""
    missing = []
    for name, op in OVERLOADS.items():
        if name in NON_DIFFERENTIABLE or _differentiable(op):
            continue
        if name.startswith("_foreach_") and name.partition(".")[0].endswith("_"):
            continue  # in-place foreach updates: optimizer steps, run under no_grad
        missing.append(name)
    assert not missing, f"overloads with no derivative formula and not listed as non-differentiable: {missing}"


def test_out_overloads_refuse_grad():
    x = st.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        st.add(x, x, out=st.empty(3))


CUDA = "cuda" in available_devices()


def _runs_on_cuda(info):
    op = OVERLOADS[info.name]
    return any(op.has_kernel(k) for k in (DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd,
                                           DispatchKey.CompositeImplicitAutograd))


def test_every_differentiable_op_runs_on_cuda():
    """The CUDA gradient comparison below leaves nothing out: every op of the list has a CUDA (or composite) kernel."""
    assert [p.values[0].name for p in _cases() if not _runs_on_cuda(p.values[0])] == []


@pytest.mark.skipif(not CUDA, reason="no CUDA GPU / driver on this machine")
@pytest.mark.parametrize("info", [p for p in _cases() if _runs_on_cuda(p.values[0])])
def test_cuda_gradients_equal_cpu(info):
    """The same vector-Jacobian product on CUDA and on CPU (float64 samples)."""
    fn = info.get_op()
    op = OVERLOADS[info.name]
    wrt = _formula_inputs(op)
    names = [a.name for a in op.schema.arguments]
    for s in _samples(info):
        grads = {}
        for device in ("cpu", "cuda"):
            moved = to_device(s.args, device)
            sample_wrt = _sample_wrt(info, wrt, moved)
            args = tuple(_leaf(a, sample_wrt is None or i >= len(names) or names[i] in sample_wrt)
                         for i, a in enumerate(moved))
            kwargs = to_device(s.kwargs, device)
            leaves = [x for x in _flat(args) if isinstance(x, Tensor) and x.requires_grad]
            outs = [o for o in _flat([fn(*args, **kwargs)]) if isinstance(o, Tensor) and o.requires_grad]
            if not outs or not leaves:
                break
            rng = np.random.default_rng(1)
            seeds = [st.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=device) for o in outs]
            got = st.autograd.grad(outs, leaves, seeds, allow_unused=True)
            grads[device] = [None if g is None else g.numpy(force=True) for g in got]
        for a, b in zip(grads.get("cuda", ()), grads.get("cpu", ()), strict=True):
            assert (a is None) == (b is None), info.name
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"{info.name}: {s}")
