"""The CPU generator is torch's (Note [CPU random streams]): after the same seed, strided's CPU fills give torch's
values -- bit for bit for uniforms, integers, permutations and Bernoulli draws, to an ulp for normals and float64
inverse-CDF fills (a few for float32 normals: torch's AVX2 log / sin / cos approximations) -- and leave the stream
where torch leaves it, so a sequence of calls stays in step; states are torch's bytes. Without torch: determinism,
state round trips (the Box-Muller cache included, a checkpointed state) and the seeding."""

from __future__ import annotations

import numpy as np
import pytest

import strided as st

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8", "bool"]
SEEDS = [0, 7, 2**40 + 5, 67280421310721]
# float64 draws that go through log / sin / cos: NumPy's float64 versions are its own SIMD routines on a CPU with
# AVX-512F (an AMD EPYC here), not libm's, and round an ulp from torch's now and then (seen: 2 values in 58)
FLOAT64_ULP = 1e-15


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    version = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    if version < (2, 14):  # Note [CPU random streams]: found against 2.14; older torch transforms some draws apart
        pytest.skip(f"strided's CPU streams follow torch 2.14's kernels; this is torch {torch.__version__}")
    return torch


def _np(t) -> np.ndarray:
    return t.detach().double().numpy() if t.is_floating_point() else t.detach().long().numpy()


def _same(torch, seed, make_t, make_s, rtol=0.0):
    """torch's and strided's values of the calls after ``seed``, and the next words of both streams."""
    torch.manual_seed(seed)
    st.manual_seed(seed)
    a, b = _np(make_t(torch)), _np(make_s(st))
    assert a.shape == b.shape
    if rtol:
        np.testing.assert_allclose(b, a, rtol=0, atol=rtol * max(1.0, float(np.abs(a).max())))
    else:
        np.testing.assert_array_equal(b, a)
    # both streams are at the same word afterwards
    np.testing.assert_array_equal(st.randint(0, 1 << 20, (4,)).numpy(), torch.randint(0, 1 << 20, (4,)).numpy())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_is_torchs(torch, seed, dtype):
    _same(torch, seed, lambda m: m.rand(37, dtype=getattr(m, dtype)), lambda m: m.rand(37, dtype=getattr(m, dtype)))
    for lo, hi in ((-2.0, 5.0), (1e-3, 2.5), (-7.1, -3.3)):
        _same(torch, seed, lambda m, lo=lo, hi=hi: m.empty(40, dtype=getattr(m, dtype)).uniform_(lo, hi),
              lambda m, lo=lo, hi=hi: m.empty(40, dtype=getattr(m, dtype)).uniform_(lo, hi))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [3, 15, 16, 17, 33, 100])
def test_normal_is_torchs(torch, seed, dtype, n):
    # NumPy's log / sin / cos and long double's FMA emulation round an ulp from torch's now and then (float32: its
    # AVX2 fill's own approximations, a few ulps): a half type's value can land on the next half
    rtol = {"float32": 2e-6, "float64": 1e-15, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    _same(torch, seed, lambda m: m.randn(n, dtype=getattr(m, dtype)), lambda m: m.randn(n, dtype=getattr(m, dtype)),
          rtol)
    _same(torch, seed, lambda m: m.empty(n, dtype=getattr(m, dtype)).normal_(0.3, 1.7),
          lambda m: m.empty(n, dtype=getattr(m, dtype)).normal_(0.3, 1.7), rtol)


@pytest.mark.parametrize("seed", SEEDS)
def test_normals_cache_and_memory_order_are_torchs(torch, seed):
    def calls(m):  # odd-sized serial draws leave Box-Muller's second value cached for the next call
        a = m.randn(3, dtype=m.float64)
        b = m.randn(5, dtype=m.float64)
        c = m.empty(6, 5, dtype=m.float64).t().normal_(1.0, 2.0)  # non-contiguous: serial, in memory order
        d = m.empty(5, 8, dtype=m.float64)[:, ::2].uniform_()
        return m.cat([a, b, c.reshape(-1), d.reshape(-1)])
    _same(torch, seed, calls, calls, FLOAT64_ULP)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("high", [2, 10, 1 << 20, (1 << 28) - 1, 1 << 28, 1 << 40])
def test_randint_is_torchs(torch, seed, high):
    _same(torch, seed, lambda m: m.randint(0, high, (7,)), lambda m: m.randint(0, high, (7,)))
    if high < 1 << 31:
        _same(torch, seed, lambda m: m.randint(-3, high, (2, 5), dtype=m.int32),
              lambda m: m.randint(-3, high, (2, 5), dtype=m.int32))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_random_is_torchs(torch, dtype):
    for seed in SEEDS[:2]:
        _same(torch, seed, lambda m: m.empty(40, dtype=getattr(m, dtype)).random_(),
              lambda m: m.empty(40, dtype=getattr(m, dtype)).random_())
        _same(torch, seed, lambda m: m.empty(40, dtype=getattr(m, dtype)).random_(0, 2),
              lambda m: m.empty(40, dtype=getattr(m, dtype)).random_(0, 2))
        if dtype not in ("bool", "uint8"):
            _same(torch, seed, lambda m: m.empty(40, dtype=getattr(m, dtype)).random_(-5, None),
                  lambda m: m.empty(40, dtype=getattr(m, dtype)).random_(-5, None))
    _same(torch, 3, lambda m: m.empty(40, dtype=m.int64).random_(-2**63, None),
          lambda m: m.empty(40, dtype=m.int64).random_(-2**63, None))


@pytest.mark.parametrize("seed", SEEDS)
def test_randperm_is_torchs(torch, seed):
    for n in (0, 1, 2, 8, 1000, 300_000):
        _same(torch, seed, lambda m, n=n: m.randperm(n), lambda m, n=n: m.randperm(n))
    _same(torch, seed, lambda m: m.randperm(50, dtype=m.int32), lambda m: m.randperm(50, dtype=m.int32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_of_probabilities_is_torchs(torch, dtype):
    p = np.random.default_rng(1).random((6, 7))
    for seed in SEEDS:
        _same(torch, seed, lambda m: m.bernoulli(m.tensor(p, dtype=getattr(m, dtype))),
              lambda m: m.bernoulli(m.tensor(p, dtype=getattr(m, dtype))))
        _same(torch, seed, lambda m: m.bernoulli(m.tensor(p, dtype=getattr(m, dtype)).t()),
              lambda m: m.bernoulli(m.tensor(p, dtype=getattr(m, dtype)).t()))


def _mkl_bernoulli(torch) -> bool:
    """torch's bernoulli_(p) takes MKL's own generator on an Intel CPU of an MKL build (not a portable stream)."""
    try:
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read()
    except OSError:
        return True  # unknown CPU: cannot tell which path torch takes
    return intel and torch.backends.mkl.is_available()


@pytest.mark.parametrize("seed", SEEDS)
def test_bernoulli_and_dropout_are_torchs(torch, seed):
    if _mkl_bernoulli(torch):
        pytest.skip("torch's bernoulli_(p) uses MKL's generator on Intel CPUs: no portable stream to match")
    _same(torch, seed, lambda m: m.empty(30, dtype=m.float32).bernoulli_(0.3),
          lambda m: m.empty(30, dtype=m.float32).bernoulli_(0.3))
    _same(torch, seed, lambda m: m.nn.functional.dropout(m.ones(4, 8), 0.4),
          lambda m: m.nn.functional.dropout(m.ones(4, 8), 0.4))


@pytest.mark.parametrize("dtype", FLOATS)
def test_inverse_cdf_fills_are_torchs(torch, dtype):
    for seed in SEEDS[:2]:
        for fill in (lambda t: t.exponential_(3.0), lambda t: t.cauchy_(0.7, 3.0), lambda t: t.log_normal_(0.5, 0.7),
                     lambda t: t.geometric_(0.3)):
            _same(torch, seed, lambda m, fill=fill: fill(m.empty(50, dtype=getattr(m, dtype))),
                  lambda m, fill=fill: fill(m.empty(50, dtype=getattr(m, dtype))),
                  FLOAT64_ULP if dtype == "float64" else 0.0)


def test_module_initialization_is_torchs(torch):
    def init(m):
        layers = [m.nn.Linear(7, 5), m.nn.Conv2d(3, 4, 3), m.nn.Embedding(10, 4), m.nn.LayerNorm(6)]
        return m.cat([p.detach().reshape(-1) for layer in layers for p in layer.parameters()])
    _same(torch, 0, init, init, rtol=2e-6)  # Embedding's float32 normal fill: a few ulps
    _same(torch, 3, lambda m: m.nn.init.kaiming_uniform_(m.empty(20, 30)),
          lambda m: m.nn.init.kaiming_uniform_(m.empty(20, 30)))


def test_generator_objects_are_torchs(torch):
    for seed in SEEDS:
        g_t, g_s = torch.Generator().manual_seed(seed), st.Generator().manual_seed(seed)
        np.testing.assert_array_equal(st.rand(5, generator=g_s).numpy(), torch.rand(5, generator=g_t).numpy())
        np.testing.assert_array_equal(st.randperm(9, generator=g_s).numpy(), torch.randperm(9, generator=g_t).numpy())
        assert g_s.initial_seed() == g_t.initial_seed()


def test_state_round_trip_keeps_the_cached_normal():
    import io

    g = st.Generator().manual_seed(5)
    st.randn(3, dtype=st.float64, generator=g)  # odd: a sine cached
    state = g.get_state()
    assert state.dtype is st.uint8 and state.shape == (5056,)
    first = st.randn(4, dtype=st.float64, generator=g).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(st.randn(4, dtype=st.float64, generator=g).numpy(), first)
    buf = io.BytesIO()  # a state is a tensor: it goes into a checkpoint
    st.save({"rng": state}, buf)
    buf.seek(0)
    g.set_state(st.load(buf)["rng"])
    np.testing.assert_array_equal(st.randn(4, dtype=st.float64, generator=g).numpy(), first)
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(state.to(st.int64))
    with pytest.raises(RuntimeError, match="CPUGeneratorImplState of size 5056 but found the input RNG state size "
                                           "to be 5055"):
        g.set_state(state[1:])


def test_states_are_torchs_bytes(torch):
    for seed in SEEDS:
        torch.manual_seed(seed)
        st.manual_seed(seed)
        np.testing.assert_array_equal(st.get_rng_state().numpy(), torch.get_rng_state().numpy())
        torch.randn(3, dtype=torch.float64), st.randn(3, dtype=st.float64)  # a cached sine
        torch.rand(700), st.rand(700)  # past a block of 624 words
        mine, theirs = st.get_rng_state(), torch.get_rng_state()
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        # each takes the other's state
        torch.set_rng_state(torch.from_numpy(mine.numpy().copy()))
        st.set_rng_state(st.from_numpy(theirs.numpy().copy()))
        np.testing.assert_array_equal(st.randn(5, dtype=st.float64).numpy(),
                                      torch.randn(5, dtype=torch.float64).numpy())


def test_seeding_is_mt19937s_init_genrand():
    """The first word after seed 5489 is mt19937's reference output 3499211612 (std::mt19937's default seed)."""
    from strided.backends.cpu.random_streams import words32

    g = st.Generator().manual_seed(5489)
    assert int(words32(g, 1)[0]) == 3499211612
    g.manual_seed(5489 + (1 << 32))  # the engine sees the low 32 bits; the seed is kept whole
    assert int(words32(g, 1)[0]) == 3499211612 and g.initial_seed() == 5489 + (1 << 32)
    a = st.rand(10, generator=st.Generator().manual_seed(1)).numpy()
    np.testing.assert_array_equal(a, st.rand(10, generator=st.Generator().manual_seed(1)).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,replacement", [(1, False), (3, False), (1, True), (20, True)])
def test_multinomial_is_torchs(torch, dtype, n, replacement):
    rng = np.random.default_rng(3)
    for p in (rng.random(6), rng.random((4, 9)), np.array([0.1, 0.0, 0.5, 0.4])):
        for seed in SEEDS[:2]:
            _same(torch, seed, lambda m, p=p: m.multinomial(m.tensor(p, dtype=getattr(m, dtype)), n, replacement),
                  lambda m, p=p: m.multinomial(m.tensor(p, dtype=getattr(m, dtype)), n, replacement))


def test_data_loading_order_is_torchs(torch):
    from torch.utils.data import DataLoader as TorchLoader

    from strided.utils.data import DataLoader, random_split

    def batches(loader):
        return np.array([b.tolist() for epoch in range(2) for b in loader])
    for seed in SEEDS[:2]:
        torch.manual_seed(seed)
        st.manual_seed(seed)
        np.testing.assert_array_equal(batches(DataLoader(list(range(20)), batch_size=5, shuffle=True)),
                                      batches(TorchLoader(list(range(20)), batch_size=5, shuffle=True)))
        parts = random_split(range(10), [0.3, 0.7]), torch.utils.data.random_split(range(10), [0.3, 0.7])
        assert [list(p.indices) for p in parts[0]] == [list(p.indices) for p in parts[1]]


def test_a_cuda_generator_on_a_cpu_op_is_refused():
    g = st.Generator("cuda")  # no GPU needed: a CUDA generator is its (seed, offset)
    assert g.get_state().shape == (16,)
    for draw in (lambda: st.rand(3, generator=g), lambda: st.randperm(4, generator=g),
                 lambda: st.empty(3).exponential_(generator=g), lambda: st.poisson(st.ones(3), generator=g)):
        with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
            draw()


def test_cuda_generator_state_is_seed_and_offset():
    """A CUDA generator's state (no GPU needed to make one): torch's 16 bytes, (seed, Philox offset) little-endian;
    the 8-byte seed-only form loads with offset 0; other sizes are refused in torch's words."""
    g = st.Generator("cuda").manual_seed(7)
    g.philox_offset = 12
    state = g.get_state()
    assert state.numpy().tobytes() == (7).to_bytes(8, "little") + (12).to_bytes(8, "little")
    h = st.Generator("cuda").set_state(state)
    assert (h.initial_seed(), h.philox_offset) == (7, 12)
    h.set_state(state[:8])
    assert (h.initial_seed(), h.philox_offset) == (7, 0)
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        h.set_state(state[:5])


def _fisher_yates_loop(n, targets):
    r = list(range(n))
    for i, j in enumerate(targets.tolist()):
        r[i], r[j] = r[j], r[i]
    return r


def test_fisher_yates_without_a_loop_is_the_loop():
    from strided.backends.cpu.random_streams import fisher_yates

    rng = np.random.default_rng(11)
    for n in [*range(2, 30), 257, 5000]:
        cases = [rng.integers(np.arange(n - 1), n) for _ in range(20 if n < 30 else 3)]
        cases += [np.arange(n - 1), np.full(n - 1, n - 1), np.arange(1, n)]  # no-ops, all to the end, neighbours
        for targets in cases:
            targets = targets.astype(np.int64)
            assert fisher_yates(targets, n).tolist() == _fisher_yates_loop(n, targets), (n, targets)


def test_long_permutations_sort_keys(monkeypatch):
    from strided.backends.cpu import random_streams

    monkeypatch.setattr(random_streams, "FISHER_YATES_MAX", 100)
    st.manual_seed(3)
    p = st.randperm(1000).numpy()
    assert sorted(p.tolist()) == list(range(1000))
    st.manual_seed(3)
    np.testing.assert_array_equal(st.randperm(1000).numpy(), p)
