"""OpInfos: random factories and fills.

They have no NumPy reference: each ``check`` asserts the range, rough moments on a few thousand
draws, and that a seeded ``Generator`` reproduces the same values on the result's device.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as dt
from ...ops import bound
from ...random import Generator
from ..opinfo import ALL_DTYPES, FLOATING, INTEGRAL, OpInfo, SampleInput, make_arg, to_device
from .helpers import err, on_probe_device, probe

__all__ = ["OPS"]

NO_BOOL = FLOATING + INTEGRAL

# ---------------------------------------------------------------------------- random
_N = 4000  # draws per moment check: the sample mean's standard error is std / 63


def _random_check(op, low=None, high=None, mean=None, std=None, integral=False, inplace=False):
    """Range [low, high), rough moments on large samples, and reproducibility with a seeded generator."""

    def check(result, sample):
        v = result.numpy(force=True).astype(np.float64)
        if low is not None and v.size:
            assert v.min() >= low and v.max() < high, f"values outside [{low}, {high}): {v.min()}..{v.max()}"
        if integral:
            assert np.array_equal(v, np.round(v)), "values must be integral"
        if mean is not None and v.size >= _N:
            assert abs(v.mean() - mean) < 0.1 * std, f"mean {v.mean():.4f}, expected about {mean}"
            assert abs(v.std() - std) < 0.1 * std, f"std {v.std():.4f}, expected about {std}"
        runs = []
        for _ in range(2):
            args = to_device(sample.args, result.device.type)
            if inplace:
                args = (args[0].clone(),) + tuple(args[1:])
            gen = Generator(result.device).manual_seed(1234)
            runs.append(op(*args, **{**sample.kwargs, "generator": gen}).numpy(force=True))
        np.testing.assert_array_equal(runs[0], runs[1], err_msg="a seeded generator must reproduce its draws")

    return check


_SIZES = ((_N,), (2, 3), (), (0, 2))


def _random_factory_samples(args_for=lambda d: ()):
    def samples(d, rng):
        for size in _SIZES:
            yield SampleInput((probe(), *args_for(d), size), {"dtype": d}, f"size {size}")

    return samples


def _int_range(d):
    return (0, 10) if d in (dt.uint8, dt.bool) else (-5, 5)


def _randint_check(result, sample):
    lo, hi = sample.args[1:3]
    _random_check(_RANDINT, lo, hi, (lo + hi - 1) / 2, ((hi - lo) ** 2 - 1) ** 0.5 / 12**0.5, True)(
        result, sample
    )


def _inplace_samples(args_for, dtype_low=None):
    def samples(d, rng):
        for size in _SIZES:
            yield SampleInput((make_arg(size, d, rng=rng, low=dtype_low), *args_for(d)), {}, f"size {size}")

    return samples


def _random_from_check(result, sample):
    lo, hi = sample.args[1:3]
    _random_check(
        bound.random_, lo, hi, (lo + hi - 1) / 2, ((hi - lo) ** 2 - 1) ** 0.5 / 12**0.5, True, inplace=True
    )(result, sample)


def _random_to_check(result, sample):
    hi = sample.args[1]
    _random_check(bound.random_, 0, hi, (hi - 1) / 2, ((hi**2 - 1) / 12) ** 0.5, True, inplace=True)(result, sample)


def _random_full_check(result, sample):
    """``random_()``: integers in [0, 2**mantissa_bits] for floats, the non-negative range for integers."""
    d = result.dtype
    if d is dt.bool:
        hi = 2
    elif d.is_floating_point:
        hi = 2 ** {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24, dt.float64: 53}[d] + 1
    else:
        hi = 2 ** (8 * d.itemsize - (1 if d.is_signed else 0))
    v = result.numpy(force=True).astype(np.float64)
    if v.size:
        assert v.min() >= 0 and v.max() < hi, f"random_() on {d.name} outside [0, {hi}): {v.min()}..{v.max()}"
        assert np.array_equal(v, np.round(v)), "random_() draws integers"
    _random_check(bound.random_, inplace=True)(result, sample)


def _bernoulli_samples(d, rng):
    yield SampleInput((bound.full((_N,), 0.3, dtype=d),), {}, "p = 0.3")
    p = make_arg((3, 4), d, rng=rng, low=0, high=1)
    yield SampleInput((p,), {}, "p in [0, 1)")
    yield SampleInput((bound.floor(make_arg((3, 4), d, rng=rng, low=0, high=2)),), {}, "p in {0, 1}: exact")
    yield SampleInput((make_arg((2, 3), d, rng=rng, low=0, high=1, noncontiguous=True),), {}, "noncontiguous")
    yield SampleInput((make_arg((0, 2), d, rng=rng),), {}, "zero-size")


def _multinomial_samples(d, rng):
    from ...factories import tensor

    w = tensor([1.0, 0.0, 3.0, 4.0], dtype=d)
    yield SampleInput((w, 20000, True), {}, "with replacement: frequencies")
    yield SampleInput((w, 3), {}, "without replacement: the 3 positive weights")
    rows = make_arg((3, 5), d, rng=rng, low=0.5, high=2)
    yield SampleInput((rows, 4), {}, "2-D rows, without replacement")
    yield SampleInput((make_arg((2, 5), d, rng=rng, low=0.5, high=2, noncontiguous=True), 6, True), {},
                      "noncontiguous, with replacement")
    yield SampleInput((make_arg((0, 5), d, rng=rng), 2), {}, "zero rows")


def _multinomial_check(result, sample):
    w = sample.args[0].numpy(force=True).astype(np.float64)
    n, replacement = sample.args[1], (sample.args[2] if len(sample.args) > 2 else False)
    v = result.numpy(force=True)
    assert result.dtype is dt.int64 and v.shape == w.shape[:-1] + (n,), "int64 draws, one row per weight row"
    rows_w, rows_v = w.reshape(-1, w.shape[-1]), v.reshape(-1, n)
    for rw, rv in zip(rows_w, rows_v):
        assert np.all((rv >= 0) & (rv < rw.size)), "draws are category indices"
        if replacement:
            assert np.all(rw[rv] > 0), "zero-weight categories are never drawn"
            if n >= 10000:
                freq = np.bincount(rv, minlength=rw.size) / n
                assert np.allclose(freq, rw / rw.sum(), atol=0.02), f"frequencies {freq} vs {rw / rw.sum()}"
        else:
            assert len(set(rv.tolist())) == n, "no category twice without replacement"
            if n <= np.count_nonzero(rw):
                assert np.all(rw[rv] > 0), "positive weights come before zero ones"


def _bernoulli_check(result, sample):
    p = sample.args[0].numpy(force=True).astype(np.float64)
    v = result.numpy(force=True).astype(np.float64)
    assert np.all((v == 0) | (v == 1)), "bernoulli draws are 0 or 1"
    assert np.all(v[p == 0] == 0) and np.all(v[p == 1] == 1), "p = 0 and p = 1 are certain"
    _random_check(bound.bernoulli, mean=0.3, std=0.21**0.5)(result, sample)


def _bernoulli_inplace_check(result, sample):
    p = sample.args[1]
    v = result.numpy(force=True).astype(np.float64)
    assert np.all((v == 0) | (v == 1)), "bernoulli_ draws are 0 or 1"
    if p in (0, 1):
        assert np.all(v == p), "p = 0 and p = 1 are certain"
    _random_check(bound.bernoulli_, mean=p, std=(p * (1 - p)) ** 0.5 or 1, inplace=True)(result, sample)


def _like_random_samples(d, rng):
    yield SampleInput((make_arg((_N,), d, rng=rng),), {}, "large")
    yield SampleInput((make_arg((3, 4), d, rng=rng).t(),), {}, "transposed: layout kept")
    yield SampleInput((make_arg((), d, rng=rng),), {"dtype": dt.float64}, "0-dim, dtype=")
    yield SampleInput((make_arg((0, 2), d, rng=rng),), {}, "zero-size")


def _like_layout(check):
    def wrapped(result, sample):
        x = sample.args[0]
        assert tuple(result.shape) == tuple(x.shape)
        assert result.dtype is sample.kwargs.get("dtype", x.dtype)
        if x._is_non_overlapping_and_dense():
            assert result.stride() == x.stride(), "*_like keeps a dense input's strides"
        if check is not None:
            check(result, sample)

    return wrapped


def _dtype_error(op_word, probe_first=True):
    def errors(rng):
        args = (probe(), (2,)) if probe_first else (make_arg((2,), dt.int64),)
        kwargs = {"dtype": dt.int64} if probe_first else {}
        yield err(args, RuntimeError, f'"{op_word}" not implemented for', kwargs)

    return errors


def _generator_error(op, message):
    def errors(rng):
        yield err((make_arg((2,), dt.float32), *op), RuntimeError, message)

    return errors


def _randperm_samples(d, rng):
    for n in (1000 if d is not dt.int8 else 128, 7, 1, 0):
        yield SampleInput((probe(), n), {"dtype": d}, f"n = {n}")


def _randperm_check(result, sample):
    n = sample.args[1]
    v = result.numpy(force=True).astype(np.int64)
    assert result.dtype is sample.kwargs["dtype"] and v.shape == (n,)
    assert np.array_equal(np.sort(v), np.arange(n)), "randperm must return a permutation of 0..n-1"
    if n >= 1000:
        assert not np.array_equal(v, np.arange(n)), "1000 elements left in order"
    _random_check(_RANDPERM)(result, sample)


_RANDINT = on_probe_device("randint.low")
_RANDPERM = on_probe_device("randperm")
_RAND, _RANDN = on_probe_device("rand"), on_probe_device("randn")

OPS = [
    OpInfo(
        "rand",
        _random_factory_samples(),
        op=_RAND,
        dtypes=FLOATING,
        check=_random_check(_RAND, 0, 1, 0.5, 12**-0.5),
        errors=_dtype_error("check_uniform_bounds"),
    ),
    OpInfo(
        "randn",
        _random_factory_samples(),
        op=_RANDN,
        dtypes=FLOATING,
        check=_random_check(_RANDN, mean=0, std=1),
        errors=_dtype_error("normal_kernel"),
    ),
    OpInfo(
        "randint.low",
        _random_factory_samples(_int_range),
        op=_RANDINT,
        dtypes=NO_BOOL,
        check=_randint_check,
        errors=lambda rng: iter(
            [
                err(
                    (probe(), 5, 5, (2,)),
                    RuntimeError,
                    "random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
                )
            ]
        ),
    ),
    OpInfo(
        "randperm",
        _randperm_samples,
        op=_RANDPERM,
        dtypes=tuple(d for d in NO_BOOL if d not in (dt.uint8, dt.bfloat16)),  # bf16: integers > 256 round
        check=_randperm_check,
        errors=lambda rng: iter([
            err((probe(), -1), RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
            err((probe(), 3000), RuntimeError, "n cannot be greater than 2049 for Half type.", {"dtype": dt.float16}),
            err((probe(), 129), RuntimeError, "value cannot be converted to type int8_t without overflow",
                {"dtype": dt.int8}),
            err((probe(), 3), NotImplementedError, "\"randperm\" not implemented for 'Bool'", {"dtype": dt.bool}),
        ]),
    ),
    OpInfo(
        "uniform_",
        _inplace_samples(lambda d: (-2, 3)),
        dtypes=FLOATING,
        check=_random_check(bound.uniform_, -2, 3, 0.5, 5 / 12**0.5, inplace=True),
        errors=_generator_error(
            (5, 2), "uniform_ expects to return a [from, to) range, but found from=5 > to=2"
        ),
    ),
    OpInfo(
        "normal_",
        _inplace_samples(lambda d: (3, 2)),
        dtypes=FLOATING,
        check=_random_check(bound.normal_, mean=3, std=2, inplace=True),
        errors=_generator_error((0, -1), "normal expects std >= 0.0, but found std -1"),
    ),
    OpInfo(
        "random_.from",
        _inplace_samples(_int_range),
        dtypes=NO_BOOL,
        check=_random_from_check,
        errors=_generator_error(
            (3, 3), "random_ expects 'from' to be less than 'to', but got from=3 >= to=3"
        ),
    ),
    OpInfo(
        "random_.to",
        _inplace_samples(lambda d: (2,) if d is dt.bool else (7,)),
        dtypes=ALL_DTYPES,
        check=_random_to_check,
    ),
    OpInfo("random_", _inplace_samples(lambda d: ()), dtypes=ALL_DTYPES, check=_random_full_check),
    OpInfo("bernoulli", _bernoulli_samples, dtypes=FLOATING, check=_bernoulli_check),
    OpInfo(
        "multinomial",
        _multinomial_samples,
        dtypes=FLOATING,
        check=_multinomial_check,
        errors=lambda rng: iter([
            err((bound.ones((2, 2, 2)), 1), RuntimeError, "prob_dist must be 1 or 2 dim"),
            err((bound.ones((3,)), 4), RuntimeError, "cannot sample n_sample > prob_dist.size"),
            err((bound.ones((3,)), 0), RuntimeError, "cannot sample n_sample <= 0 samples"),
            err((bound.ones((3,), dtype=dt.int64), 1), RuntimeError, "multinomial only supports floating-point"),
        ]),
    ),
    OpInfo(
        "bernoulli_.float",
        _inplace_samples(lambda d: (0.3,)),
        dtypes=ALL_DTYPES,
        check=_bernoulli_inplace_check,
        errors=_generator_error((1.5,), "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ),
    OpInfo(
        "rand_like",
        _like_random_samples,
        dtypes=FLOATING,
        check=_like_layout(_random_check(bound.rand_like, 0, 1, 0.5, 12**-0.5)),
        errors=_dtype_error("check_uniform_bounds", probe_first=False),
    ),
    OpInfo(
        "randn_like",
        _like_random_samples,
        dtypes=FLOATING,
        check=_like_layout(_random_check(bound.randn_like, mean=0, std=1)),
        errors=_dtype_error("normal_kernel", probe_first=False),
    ),
]
