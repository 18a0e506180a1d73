"""Layout and indexing kernels on a real GPU: tiled transposed copies, sort, advanced indexing,
out-of-range indices (Note [Transposed copy], Note [CUDA sort], Note [CUDA index bounds])."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st
import strided.cuda as cuda

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU / driver on this machine")]

DTYPES = ["float32", "float16", "bfloat16", "int64", "bool", "uint8", "float64"]


def _host(shape, dtype, rng):
    a = rng.standard_normal(shape) * 20
    if dtype == "bool":
        return a > 0
    return a.astype(getattr(st, dtype).numpy_dtype)


def _poisoned(shape, dtype):
    out = st.empty(shape, dtype=getattr(st, dtype), device="cuda")
    out.fill_(True if dtype == "bool" else 7)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [
    ((33, 65), (1, 0)), ((1, 9), (1, 0)), ((128, 256), (1, 0)), ((7, 1000), (1, 0)),
    ((3, 37, 45), (0, 2, 1)), ((5, 9, 40, 17), (2, 0, 3, 1)), ((2, 3, 4, 64, 3), (4, 3, 2, 1, 0)),
    ((16, 16, 16), (2, 1, 0)),
])
def test_transposed_copy(shape, perm, dtype):
    rng = np.random.default_rng(hash((shape, perm)) & 0xffff)
    a = _host(shape, dtype, rng)
    x = st.from_numpy(a).cuda().permute(*perm)
    out = _poisoned(x.shape, dtype)
    out.copy_(x)
    np.testing.assert_array_equal(out.cpu().numpy(), np.transpose(a, perm))
    np.testing.assert_array_equal(x.contiguous().cpu().numpy(), np.transpose(a, perm))


@pytest.mark.parametrize("src,dst", [("bfloat16", "float32"), ("float32", "float16"), ("int64", "float32")])
def test_transposed_copy_with_cast(src, dst):
    rng = np.random.default_rng(3)
    a = _host((70, 130), src, rng)
    x = st.from_numpy(a).cuda().t()
    out = _poisoned((130, 70), dst)
    out.copy_(x)
    expected = a.T.astype(np.float64).astype(getattr(st, dst).numpy_dtype)
    np.testing.assert_array_equal(out.cpu().numpy(), expected)


def test_transpose_into_strided_destination_and_offsets():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((50, 60)).astype(np.float16)
    big = st.zeros((61, 52), dtype=st.float16, device="cuda")
    dst = big[1:, 1:51]  # odd offset: the 4-byte path must not be taken
    dst.copy_(st.from_numpy(a).cuda().t())
    np.testing.assert_array_equal(dst.cpu().numpy(), a.T)
    assert (big.cpu().numpy()[0] == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "float64"])
@pytest.mark.parametrize("n", [1, 5, 33, 2048, 2049, 5000, 70000])
def test_sort_matches_cpu_stable(n, dtype):
    rng = np.random.default_rng(n)
    a = rng.integers(-20, 20, size=(3, n)).astype(getattr(st, dtype).numpy_dtype)
    if dtype.startswith("float") and n > 4:
        a[0, ::5] = np.nan
        a[1, 1::3] = -0.0
    x = st.from_numpy(a)
    for desc in (False, True):
        v, i = st.sort(x.cuda(), stable=True, descending=desc)
        ev, ei = st.sort(x, stable=True, descending=desc)
        np.testing.assert_array_equal(i.cpu().numpy(), ei.numpy())
        np.testing.assert_array_equal(v.cpu().numpy(), ev.numpy())
    k = min(n, 7)
    v, i = st.topk(x.cuda(), k)
    ev, ei = st.topk(x, k)
    np.testing.assert_array_equal(i.cpu().numpy(), ei.numpy())


def test_sort_dim0_long_column():
    a = np.random.default_rng(5).standard_normal((4100, 3)).astype(np.float32)
    v, i = st.from_numpy(a).cuda().sort(dim=0)
    np.testing.assert_array_equal(i.cpu().numpy(), np.argsort(a, axis=0, kind="stable"))
    np.testing.assert_array_equal(v.cpu().numpy(), np.sort(a, axis=0))


def test_getitem_setitem_tensor_indices():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((6, 7, 8)).astype(np.float32)
    x, xc = st.from_numpy(a.copy()), st.from_numpy(a.copy()).cuda()
    i = np.array([[0, 5, -1], [2, 2, 3]])
    j = np.array([1, -7, 6])
    m = a[:, 0, 0] > 0
    for key_np in [(i,), (slice(None), j), (i, slice(None), j), (m,), (slice(1, 4), j, j[::-1])]:
        key_cpu = tuple(st.from_numpy(k.copy()) if isinstance(k, np.ndarray) else k for k in key_np)
        key_cuda = tuple(k.cuda() if isinstance(k, st.Tensor) else k for k in key_cpu)
        np.testing.assert_array_equal(xc[key_cuda].cpu().numpy(), x[key_cpu].numpy())
        np.testing.assert_array_equal(xc[key_cpu].cpu().numpy(), x[key_cpu].numpy())  # CPU indices too
    xc[st.tensor([0, 3]).cuda(), 1:3] = st.from_numpy(np.full((2, 2, 8), 5, np.float32)).cuda()
    x[st.tensor([0, 3]), 1:3] = st.from_numpy(np.full((2, 2, 8), 5, np.float32))
    np.testing.assert_array_equal(xc.cpu().numpy(), x.numpy())
    y, yc = st.zeros(5), st.zeros(5, device="cuda")
    idx = st.tensor([1, 1, 3, 1])
    y.index_put_((idx,), st.ones(4), accumulate=True)
    yc.index_put_((idx.cuda(),), st.ones(4, device="cuda"), accumulate=True)
    np.testing.assert_array_equal(yc.cpu().numpy(), y.numpy())


@pytest.mark.parametrize("call,error,match", [
    (lambda x: x[st.tensor([0, 9]).cuda()], IndexError, "index 9 is out of bounds for dimension 0 with size 6"),
    (lambda x: x.index_select(1, st.tensor([7]).cuda()), IndexError, "index out of range in self"),
    (lambda x: x.gather(0, st.tensor([[6]]).cuda()), RuntimeError,
     "index 6 is out of bounds for dimension 0 with size 6"),
    (lambda x: x.scatter_add(1, st.tensor([[-1]]).cuda(), x), RuntimeError,
     "index -1 is out of bounds for dimension 1 with size 7"),
    (lambda x: x.index_add(0, st.tensor([100]).cuda(), x[:1]), RuntimeError,
     "index 100 is out of bounds for dimension 0 with size 6"),
    (lambda x: st.embedding(x, st.tensor([6]).cuda()), IndexError, "index out of range in self"),
])
def test_out_of_range_indices_raise_and_context_survives(call, error, match):
    x = st.from_numpy(np.arange(42, dtype=np.float32).reshape(6, 7)).cuda()
    with pytest.raises(error, match=match):
        call(x)
        cuda.synchronize()  # a kernel-found bad index is reported here (Note [Deferred index errors])
    cuda.synchronize()  # reported once
    # the context is still usable: x reads back intact
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(42, dtype=np.float32).reshape(6, 7))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_many_inputs_one_launch_and_promotion(dim):
    rng = np.random.default_rng(7)
    parts = [rng.standard_normal((4, 3, 5)).astype(np.float32) for _ in range(70)]
    xs = [st.from_numpy(p).cuda() for p in parts]
    xs[3] = xs[3].permute(2, 1, 0).contiguous().permute(2, 1, 0)  # non-contiguous input
    xs[5] = st.from_numpy(parts[5].astype(np.float16)).cuda()    # promotes: its own copy kernel
    expected = np.concatenate([p.astype(np.float16).astype(np.float32) if k == 5 else p
                               for k, p in enumerate(parts)], axis=dim)
    np.testing.assert_array_equal(st.cat(xs, dim).cpu().numpy(), expected)
    np.testing.assert_array_equal(st.stack(xs[:4], 1).cpu().numpy(), np.stack(parts[:4], 1))


@pytest.mark.skipif(not hasattr(st, "use_deterministic_algorithms"), reason="no determinism switch")
def test_deterministic_mode_rejects_float_atomics():
    x = st.zeros((4, 3), device="cuda")
    idx = st.tensor([[0, 1, 0]]).cuda()
    st.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match="scatter_add_cuda_kernel does not have a deterministic"):
            x.scatter_add(0, idx, st.ones((1, 3), device="cuda"))
        with pytest.raises(RuntimeError, match="index_add_cuda_ does not have a deterministic"):
            x.index_add(0, st.tensor([1]).cuda(), st.ones((1, 3), device="cuda"))
        xi = st.zeros((4, 3), dtype=st.int64, device="cuda")  # integer atomics are exact: allowed
        out = xi.scatter_add(0, idx, st.ones((1, 3), dtype=st.int64, device="cuda"))
        np.testing.assert_array_equal(out.cpu().numpy()[0], [1, 0, 1])
    finally:
        st.use_deterministic_algorithms(False)
