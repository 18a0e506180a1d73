"""im2col.cu (Note [Column kernels' index math]): the parameter struct matches the glue's format, the launch shape
covers every tile, and im2col / col2im run on the CPU block emulator (Note [CPU block emulator]) in three thread
orders give NumPy's unfold and fold, bit for bit the same in every order, without writing outside their buffers --
through F.unfold / F.fold's CUDA kernels (kernels/im2col_ops.py) and the direct convolution's column launches
(kernels/convolution_ops.py: a batch slice, the (C * K, N, L) layout of the weight's gradient) on CPU tensors."""

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
    g = conv._Geometry(st.tensor(x), weight, s, p, d, lh, lw)
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
