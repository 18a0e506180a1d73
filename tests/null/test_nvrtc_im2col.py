"""im2col.cu (Note [Column kernels' index math]): the parameter struct matches the glue's format, the launch shape
covers every tile, and im2col / col2im run on the CPU block emulator (Note [CPU block emulator]) in three thread
orders give NumPy's unfold and fold, bit for bit the same in every order, without writing outside their buffers --
through F.unfold / F.fold's CUDA kernels (kernels/im2col_ops.py) and the direct convolution's column launches
(kernels/convolution_ops.py: a batch slice, the (C * K, N, L) layout of the weight's gradient) on CPU tensors; and
the direct convolution's whole host code (plain and transposed, forward and gradients, in batch slices) with its
launches on the emulator and its GEMMs by NumPy, against the CPU composite."""

from __future__ import annotations

import struct

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings is not installed")

from block_emulator import EmuKernel, build, emulator_source  # noqa: E402

import strided as st  # noqa: E402
from strided.backends.cuda.kernels import im2col_ops  # noqa: E402

# (C, H, W, kernel, dilation, padding, stride)
GEOMETRIES = [
    (3, 7, 9, (3, 3), (1, 1), (1, 1), (1, 1)),
    (2, 11, 10, (7, 7), (1, 1), (3, 3), (2, 2)),
    (4, 6, 13, (2, 3), (2, 1), (0, 2), (1, 3)),
    (1, 5, 40, (1, 1), (1, 1), (0, 0), (2, 2)),
    (2, 3, 300, (1, 5), (1, 2), (0, 4), (1, 1)),  # long rows: several tiles per row, a partial last one
]


def test_parameter_format_matches_the_struct():
    """Im2colArgs / Col2imArgs: two pointers and 16 8-byte geometry fields (the emulator checks the compiled
    structs' sizes against this)."""
    assert struct.calcsize(im2col_ops.FMT) == 8 * 18


@pytest.mark.parametrize("rows,length", [(1, 1), (7, 3136), (5, 50176), (1 << 20, 49), (3, 200)])
def test_launch_shapes_cover_every_row_and_tile(rows, length):
    grid, block = im2col_ops.launch_shape(rows, length, im2col_ops.COL_ILP)  # im2col: a block per row
    assert grid == min(rows, 1 << 16) and block % 32 == 0 and 32 <= block <= 256
    assert block == 256 or block * im2col_ops.COL_ILP >= length  # narrower only when one step covers the row
    grid, block = im2col_ops.launch_shape(rows, length, 1)  # col2im: a block per tile of a plane
    assert block in (64, 128, 256)
    assert grid == min(rows * -(-length // block), 1 << 18)  # the kernel grid-strides past the cap


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    from strided.backends.cuda.kernels import HERE

    out = tmp_path_factory.mktemp("im2col_emulator")
    text = "template <class D, class S> D convert(S v) { return static_cast<D>(v); }\n" + \
        (HERE / "im2col.cu").read_text()
    libs = {}
    for name, ctype in (("float32", "float"), ("float64", "double")):
        source, counts = emulator_source(text, {"COL_T": ctype, "ACC_T": ctype},
                                         {"im2col_kernel": "Im2colArgs", "col2im_kernel": "Col2imArgs"})
        assert counts == (0, 0, 2), "im2col.cu changed: update the emulator's rewrites"
        libs[name] = build(out, f"im2col_{name}", source)
    return libs


@pytest.fixture
def emulated(emulators, monkeypatch):
    """im2col_ops' launches sent to the emulator; returns a function setting the thread order and dtype."""
    state = {"order": 0, "name": "float64"}
    log = []

    def get_kernel(source, name, fmt, device):
        return EmuKernel(emulators[state["name"]], name, fmt, state["order"], log, threads=(32, 256))

    monkeypatch.setattr(im2col_ops, "get_kernel", get_kernel)
    monkeypatch.setattr(im2col_ops, "current_stream_handle", lambda device: 0)
    # small grids (the grid-stride loops run) and a 32-thread im2col block (a row takes several steps)
    monkeypatch.setattr(im2col_ops, "launch_shape", lambda rows, length, per: (
        (min(rows, 5), 32) if per > 1 else (min(rows * -(-length // 64), 5), 64)))

    def configure(name, order):
        state.update(name=name, order=order)
        return log

    return configure


def _unfold_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    lh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    lw = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], lh, lw), x.dtype)
    for a in range(k[0]):
        for b in range(k[1]):
            cols[:, :, a, b] = xp[:, :, a * d[0]:a * d[0] + (lh - 1) * s[0] + 1:s[0],
                                  b * d[1]:b * d[1] + (lw - 1) * s[1] + 1:s[1]]
    return cols.reshape(n, c * k[0] * k[1], lh * lw), (lh, lw)


def _fold_ref(cols, c, h, w, k, d, p, s, lh, lw):
    n = cols.shape[0]
    out = np.zeros((n, c, h + 2 * p[0], w + 2 * p[1]), cols.dtype)
    blocks = cols.reshape(n, c, k[0], k[1], lh, lw)
    for a in range(k[0]):
        for b in range(k[1]):
            out[:, :, a * d[0]:a * d[0] + (lh - 1) * s[0] + 1:s[0],
                b * d[1]:b * d[1] + (lw - 1) * s[1] + 1:s[1]] += blocks[:, :, a, b]
    return out[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


@pytest.mark.parametrize("name", ["float64", "float32"])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_emulated_unfold_and_fold_match_numpy(emulated, name, geometry):
    c, h, w, k, d, p, s = geometry
    rng = np.random.default_rng(c * h + w)
    x = rng.standard_normal((3, c, h, w)).astype(name)
    want, (lh, lw) = _unfold_ref(x, k, d, p, s)
    cols_in = rng.standard_normal(want.shape).astype(name)
    want_fold = _fold_ref(cols_in.astype(np.float64), c, h, w, k, d, p, s, lh, lw)
    bits = []
    for order in (0, 1, 2):
        log = emulated(name, order)
        got = im2col_ops.im2col(st.tensor(x), k, d, p, s).numpy()
        folded = im2col_ops.col2im(st.tensor(cols_in), (h, w), k, d, p, s).numpy()
        assert [entry[0] for entry in log[-2:]] == ["im2col_kernel", "col2im_kernel"]
        bits.append(got.tobytes() + folded.tobytes())
    assert bits[0] == bits[1] == bits[2], "results depend on the thread order"
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(folded, want_fold, rtol=1e-5 if name == "float32" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_emulated_convolution_columns_of_a_slice(emulated, geometry):
    """The direct convolution's launches: samples [1, 3) of 4 into (2, C*K, L) columns and into (C*K, 2, L) rows,
    and columns summed back into those samples of an image, the others untouched."""
    from strided.backends.cuda.kernels import convolution_ops as conv

    c, h, w, k, d, p, s = geometry
    rng = np.random.default_rng(h * w)
    x = rng.standard_normal((4, c, h, w))
    want, (lh, lw) = _unfold_ref(x[1:3], k, d, p, s)
    rows, length = want.shape[1:]
    weight = st.zeros(5, c, *k, dtype=st.float64)
    g = conv._Geometry(x.shape, tuple(weight.shape), s, p, d, lh, lw)
    emulated("float64", 2)
    cols = st.full((2, rows, length), 7.0, dtype=st.float64)
    g.im2col(st.tensor(x), 1, 2, cols)
    np.testing.assert_array_equal(cols.numpy(), want)
    by_row = st.full((rows, 2, length), 7.0, dtype=st.float64)
    g.im2col(st.tensor(x), 1, 2, by_row, by_row=True)
    np.testing.assert_array_equal(by_row.numpy(), want.transpose(1, 0, 2))
    image = st.full((4, c, h, w), 7.0, dtype=st.float64)
    g.col2im(st.tensor(want), 2, image, 1)
    got = image.numpy()
    np.testing.assert_allclose(got[1:3], _fold_ref(want, c, h, w, k, d, p, s, lh, lw), rtol=1e-12, atol=1e-12)
    assert (got[0] == 7.0).all() and (got[3] == 7.0).all()


class _NumpyGemm:
    """blas.gemm's contract on CPU tensors: ``out = alpha * a @ b + beta * c`` over their strided views."""

    @staticmethod
    def gemm(name, out, a, b, *, alpha=1.0, beta=0.0, c=None, bias=None, act=None):
        from strided.backends.cpu.common import as_numpy

        assert bias is None and act is None
        got = alpha * np.matmul(as_numpy(a), as_numpy(b))
        if c is not None:
            got = got + beta * as_numpy(c)
        as_numpy(out)[...] = got


# (input, weight, stride, padding, dilation, output padding or None): the weight gradient's per-sample and one-GEMM
# forms, the column-free 1x1 case, asymmetric stride / dilation, 1-d; then transposed ones (output padding below
# the stride)
DIRECT_CASES = [
    ((3, 4, 7, 6), (5, 4, 3, 3), (1, 1), (1, 1), (1, 1), None),
    ((2, 8, 3, 2), (6, 8, 3, 3), (1, 1), (1, 1), (1, 1), None),
    ((3, 4, 5, 6), (6, 4, 1, 1), (1, 1), (0, 0), (1, 1), None),
    ((2, 3, 9, 8), (4, 3, 2, 3), (2, 1), (0, 2), (2, 1), None),
    ((3, 4, 17), (5, 4, 3), (2,), (1,), (2,), None),
    ((3, 4, 5, 6), (4, 3, 4, 4), (2, 2), (1, 1), (1, 1), (0, 0)),
    ((2, 6, 4, 5), (6, 3, 3, 3), (2, 2), (1, 1), (2, 1), (1, 1)),
    ((2, 16, 2, 2), (16, 8, 3, 3), (2, 2), (0, 0), (1, 1), (0, 0)),
    ((3, 5, 4, 4), (5, 6, 1, 1), (1, 1), (0, 0), (1, 1), (0, 0)),
    ((3, 4, 7), (4, 2, 5), (3,), (1,), (1,), (2,)),
]


@pytest.mark.parametrize("budget", ["whole", "slices"])
@pytest.mark.parametrize("case", DIRECT_CASES, ids=str)
def test_emulated_direct_convolution_matches_the_composite(emulated, monkeypatch, budget, case):
    """The direct CUDA convolution's host code (Note [Direct CUDA convolution]) -- forward, both gradients, plain
    and transposed, whole batch and one sample per slice -- on CPU tensors: its column launches on the emulator, its
    GEMMs by NumPy, against the CPU composite's forward and autograd in float64."""
    import strided.nn.functional as F
    import strided.ops.composite.convolution_chunks as chunks
    from strided.backends import allocate
    from strided.backends.cuda.kernels import convolution_ops as conv

    xs, ws, s, p, d, q = case
    emulated("float64", 0)
    monkeypatch.setattr(conv, "_gemm", _NumpyGemm)
    monkeypatch.setattr(conv, "allocate_storage", allocate)
    if budget == "slices":
        monkeypatch.setattr(chunks, "COLUMN_BUDGET", 1)
    rng = np.random.default_rng(len(xs) * 100 + xs[1])
    x, w = st.tensor(rng.standard_normal(xs)), st.tensor(rng.standard_normal(ws))
    b = st.tensor(rng.standard_normal(ws[0] if q is None else ws[1]))
    ref_in = [t.clone().requires_grad_() for t in (x, w, b)]
    if q is None:
        ref = (F.conv1d if len(xs) == 3 else F.conv2d)(*ref_in, stride=s, padding=p, dilation=d)
        out = conv.convolution_forward(x, w, b, s, p, d)
    else:
        fn = F.conv_transpose1d if len(xs) == 3 else F.conv_transpose2d
        ref = fn(*ref_in, stride=s, padding=p, output_padding=q, dilation=d)
        out = conv.transposed_forward(x, w, b, s, p, d, q)
    gy = st.tensor(rng.standard_normal(tuple(ref.shape)))
    ref.backward(gy)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    backward = conv.convolution_backward if q is None else conv.transposed_backward
    gi, gw = backward(gy, x, w, s, p, d, True, True)
    assert gi.shape == x.shape and gw.shape == w.shape
    np.testing.assert_allclose(gi.numpy(), ref_in[0].grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), ref_in[1].grad.numpy(), rtol=1e-12, atol=1e-12)
    only_input, none = backward(gy, x, w, s, p, d, True, False)
    none2, only_weight = backward(gy, x, w, s, p, d, False, True)
    assert none is None and none2 is None
    np.testing.assert_array_equal(only_input.numpy(), gi.numpy())
    np.testing.assert_array_equal(only_weight.numpy(), gw.numpy())
