"""batch_norm.cu (kernels/batch_norm_ops.py, Note [Batch-norm kernels]): every instantiation compiles with NVRTC to
sm_90 CUBIN without register spills, the parameter structs match the glue's formats, and the four batch-norm kernels,
run on the CPU block emulator (Note [CPU block emulator]) in three thread orders, give NumPy's batch norm and its
gradients, bit for bit the same in every order, without writing outside their buffers. Group norm's host glue
(kernels/group_norm_ops.py) runs here on CPU tensors with its launches sent to the emulator (Note [Group-norm
kernels]), against the composite."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from block_emulator import Buf, EmuKernel, build, emulator_source, ptxas_log  # noqa: E402

import strided as st  # noqa: E402
from strided.backends.cuda import compiler  # noqa: E402
from strided.backends.cuda.kernels import batch_norm_ops as bn  # noqa: E402

SOURCES = list(bn.batch_norm_sources())


@pytest.mark.parametrize("names,text", [pytest.param(n, t, id=t.splitlines()[0].split()[-1]) for _, n, t in SOURCES])
def test_kernels_compile_without_spills(names, text):
    for name in names:
        assert compiler._compile(text, name, "sm_90", ())[:4] == b"\x7fELF"
    log = ptxas_log(text, "batch_norm.cu")
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert len(spills) == 9 and all(s == ("0", "0") for s in spills), log


def test_parameter_formats_match_the_structs():
    """BnParams: 12 pointers, n, c, s, momentum, eps, training; GnParams: 11 pointers, n, c, s, groups, vec, eps
    (all 8-byte fields; the emulator checks the compiled structs' sizes against these)."""
    assert struct.calcsize(bn.BN_FMT) == 8 * 18
    assert struct.calcsize(bn.GN_FMT) == 8 * 17


KERNELS = {name: "BnParams" for name in ("bn_stats", "bn_apply", "bn_grad_stats", "bn_grad_apply")}
KERNELS.update({name: "GnParams" for name in ("gn_stats", "gn_apply", "gn_grad_stats", "gn_grad_sums",
                                               "gn_grad_apply")})


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    from strided.backends.cuda.kernels import HERE

    out = tmp_path_factory.mktemp("bn_emulator")
    text = "template <class D, class S> D convert(S v) { return static_cast<D>(v); }\n" + \
        (HERE / "batch_norm.cu").read_text()
    libs = {}
    for name, ctype in (("float32", "float"), ("float64", "double")):
        source, counts = emulator_source(text, {"IN_T": ctype, "P_T": ctype, "BN_BLOCK": str(bn.BN_BLOCK)}, KERNELS)
        assert counts == (0, 0, 9), "batch_norm.cu changed: update the emulator's rewrites"
        libs[name] = build(out, f"bn_{name}", source)
    return libs


def _ref(x, w, b, g, eps):
    dims = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    mean, var = x64.mean(dims), x64.var(dims)
    invstd = 1 / np.sqrt(var + eps)
    xhat = (x64 - mean.reshape(shape)) * invstd.reshape(shape)
    out = xhat * w.reshape(shape) + b.reshape(shape)
    count = x.size // x.shape[1]
    sg, sgx = g64.sum(dims), (g64 * xhat).sum(dims)
    gi = (w * invstd).reshape(shape) * (g64 - (sg / count).reshape(shape) - xhat * (sgx / count).reshape(shape))
    return out, mean, invstd, var * count / (count - 1), gi, sgx, sg


def _run(lib, x, w, b, g, order, eps=1e-5, momentum=0.1, grids=(2, 3)):
    name = x.dtype.name
    dtype = getattr(st, name)
    n, c = x.shape[:2]
    s = x.size // (n * c)
    bufs = {k: Buf(shape, x.dtype, dtype, 777.0) for k, shape in (
        ("x", x.shape), ("g", x.shape), ("out", x.shape), ("gi", x.shape), ("w", (c,)), ("b", (c,)), ("mean", (c,)),
        ("invstd", (c,)), ("rm", (c,)), ("rv", (c,)), ("gw", (c,)), ("gb", (c,)), ("sums", (2 * c,)))}
    for k, v in (("x", x), ("g", g), ("w", w), ("b", b), ("rm", np.zeros(c)), ("rv", np.ones(c))):
        bufs[k].array[...] = v
    p = {k: v.data_ptr() for k, v in bufs.items()}

    def fields(out, grad):
        return (p["x"], p["g"], p[out], p["w"], p["b"], p["mean"], p["invstd"], p["rm"], p["rv"],
                p["gw"] if grad else 0, p["gb"] if grad else 0, p["sums"], n, c, s, momentum, eps, 1)

    log = []
    for kname, grid, out, grad in (("bn_stats", grids[0], "out", False), ("bn_apply", grids[1], "out", False),
                                   ("bn_grad_stats", grids[0], "gi", True), ("bn_grad_apply", grids[1], "gi", True)):
        EmuKernel(lib, kname, bn.BN_FMT, order, log, threads=(bn.BN_BLOCK, bn.BN_BLOCK))(grid, bn.BN_BLOCK, 0,
                                                                                         *fields(out, grad))
    assert all(v.canaries_intact() for v in bufs.values()), "a kernel wrote out of bounds"
    return {k: v.array.copy() for k, v in bufs.items()}


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 3), (2, 5, 7), (3, 2, 300)])
def test_emulated_kernels_give_batch_norm_and_its_gradients(emulators, name, shape):
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 3 + 5).astype(name)
    g = rng.standard_normal(shape).astype(name)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(name), rng.standard_normal(c).astype(name)
    runs = [_run(emulators[name], x, w, b, g, order) for order in (0, 1, 2)]
    for later in runs[1:]:  # the same bits whatever order the threads ran in: no races
        for k in runs[0]:
            assert runs[0][k].tobytes() == later[k].tobytes(), k
    got = runs[0]
    out, mean, invstd, unbiased, gi, sgx, sg = _ref(x, w, b, g, 1e-5)
    tol = dict(rtol=2e-5, atol=2e-5) if name == "float32" else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["out"], out, **tol)
    np.testing.assert_allclose(got["mean"], mean, **tol)
    np.testing.assert_allclose(got["invstd"], invstd, **tol)
    np.testing.assert_allclose(got["rm"], 0.1 * mean, **tol)
    np.testing.assert_allclose(got["rv"], 0.9 + 0.1 * unbiased, **tol)
    np.testing.assert_allclose(got["gi"], gi, **tol)
    np.testing.assert_allclose(got["gw"], sgx, **tol)
    np.testing.assert_allclose(got["gb"], sg, **tol)


@pytest.fixture
def emulated_launches(emulators, monkeypatch):
    """batch_norm_ops' launches sent to the block emulator (CPU tensors' data pointers are host memory); returns a
    function setting the thread order and the dtype whose build runs."""
    state = {"order": 0, "name": "float32"}
    log = []

    def get_kernel(source, name, fmt, device):
        return EmuKernel(emulators[state["name"]], name, fmt, state["order"], log, threads=(bn.BN_BLOCK, bn.BN_BLOCK))

    monkeypatch.setattr(bn, "get_kernel", get_kernel)
    monkeypatch.setattr(bn, "current_stream_handle", lambda device: 0)
    monkeypatch.setattr(bn, "sm_count", lambda device: 2)

    def configure(name, order):
        state.update(name=name, order=order)
        return log

    return configure


@pytest.mark.parametrize("name", ["float64", "float32"])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("shape,group", [((3, 6, 5, 4), 3), ((4, 8), 8), ((2, 4, 300), 2), ((2, 6, 3, 3), 3)])
def test_emulated_group_norm_kernels_give_the_composites_values_and_gradients(emulated_launches, shape, group, affine,
                                                                                name):
    """The host glue of kernels/group_norm_ops.py and the kernels of Note [Group-norm kernels], run on the emulator
    in two thread orders (the same bits in each), against the composite (ops/composite/group_norm.py); the vector
    path where HxW is a multiple of the 16-byte vector's elements (20 and 300 here), the scalar one elsewhere."""
    from strided.backends.cuda.kernels import group_norm_ops as gn
    from strided.ops.composite import group_norm as composite

    rng = np.random.default_rng(len(shape) + group)
    n, c = shape[:2]
    hxw = int(np.prod(shape[2:]))
    d = getattr(st, name)
    tol = 1e-10 if name == "float64" else 2e-5
    x = st.tensor(rng.standard_normal(shape) * 2 + 3, dtype=d)
    g = st.tensor(rng.standard_normal(shape), dtype=d)
    w = st.tensor(rng.standard_normal(c), dtype=d) if affine != "none" else None
    b = st.tensor(rng.standard_normal(c), dtype=d) if affine == "both" else None
    want = composite.native_group_norm(x, w, b, n, c, hxw, group, 1e-5)
    mask = [True, w is not None, b is not None]
    ref = composite.native_group_norm_backward(g, x, want[1], want[2], w, n, c, hxw, group, mask)
    bits = []
    for order in (0, 2):  # forward and shuffled
        log = emulated_launches(name, order)
        got = gn.native_group_norm(x, w, b, n, c, hxw, group, 1e-5)
        grads = gn.native_group_norm_backward(g, x, got[1], got[2], w, n, c, hxw, group, mask)
        assert [entry[0] for entry in log[-5:]] == ["gn_stats", "gn_apply", "gn_grad_stats", "gn_grad_sums",
                                                    "gn_grad_apply"]
        assert all(entry[4][-2] == int(hxw % (16 // x.dtype.itemsize) == 0) for entry in log[-5:])
        bits.append(b"".join(t.numpy().tobytes() for t in (*got, *grads)))
    assert bits[0] == bits[1], "results depend on the thread order"
    for u, v in zip(got, want):
        assert u.shape == v.shape and u.dtype is v.dtype
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=tol, atol=tol)
    # rounding of terms that rstd scales (1 / sqrt(eps) where a group has one element)
    gtol = tol * max(1.0, float(want[2].max()))
    for u, v in zip(grads, ref):
        assert u.shape == v.shape and u.dtype is v.dtype
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=tol, atol=gtol)
