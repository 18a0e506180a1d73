"""``assert_close``: torch.testing.assert_close for strided tensors, Python scalars and containers of them.

The same pairing rules (sequences and mappings recurse; None, booleans, numbers and tensors are
compared by kind), the same default tolerances by dtype and the same failure messages as torch's
``torch/testing/_comparison.py``. Values are compared in NumPy on the host, in the tensors' dtype.
"""

from __future__ import annotations

import cmath
import collections.abc
import dataclasses

import numpy as np

from .. import dtypes as dt
from ..tensor import Tensor

__all__ = ["assert_close"]

# torch's _DTYPE_PRECISIONS: (rtol, atol); any other dtype (integers, bool) compares exactly
_DTYPE_PRECISIONS = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """A failure found while pairing or comparing: its exception type, message and item path."""

    def __init__(self, type_: type[Exception], msg: str, id_: tuple = ()) -> None:
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_

    def to_error(self, msg=None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def _check_tolerances(rtol, atol, id_) -> None:
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                    f"{'rtol' if rtol is None else 'atol'}.", id_)


def _tolerances(names, rtol, atol, id_) -> tuple[float, float]:
    _check_tolerances(rtol, atol, id_)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(n, (0.0, 0.0)) for n in names])
    return max(rtols), max(atols)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol) -> str:
        if idx is None:
            msg = f"{kind.title()} difference: {diff}"
        else:
            msg = f"Greatest {kind} difference: {diff} at index {idx}"
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if callable(identifier):
        identifier = identifier("Tensor-likes")
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
                         rtol)


# --- pairs -------------------------------------------------------------------------------------

def _compare_none(actual, expected, id_, **_) -> None:
    if not (actual is None and expected is None):
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", id_)


def _compare_bool(actual, expected, id_, **_) -> None:
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id_)


def _compare_number(actual, expected, id_, rtol, atol, equal_nan, check_dtype, **_) -> None:
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(x), "bool") for x in (actual, expected)], rtol, atol, id_)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id_)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol), id_)


def _compare_tensors(actual, expected, id_, rtol, atol, equal_nan, check_device, check_dtype, check_layout,
                     check_stride, **_) -> None:
    if isinstance(actual, np.ndarray):  # NumPy arrays compare as the tensors they convert to, as in torch
        from ..factories import as_tensor

        actual, expected = as_tensor(actual), as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype.name, expected.dtype.name], rtol, atol, id_)

    def attribute_mismatch(name, a, e):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.", id_)

    if actual.shape != expected.shape:
        attribute_mismatch("shape", actual.shape, expected.shape)
    layouts = getattr(actual, "layout", "strided"), getattr(expected, "layout", "strided")
    if layouts[0] != layouts[1]:
        if check_layout:
            attribute_mismatch("layout", *layouts)
    elif check_stride and actual.stride() != expected.stride():
        attribute_mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        attribute_mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        attribute_mismatch("dtype", actual.dtype, expected.dtype)
    if "meta" in (actual.device.type, expected.device.type):
        return  # no values to compare
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        dtype = dt.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    a, e = actual.numpy(force=True), expected.numpy(force=True)
    matches = _isclose(a, e, rtol, atol, equal_nan, actual.dtype)
    if matches.all():
        return
    if not actual.shape:
        msg = _scalar_msg(actual.item(), expected.item(), rtol, atol)
    else:
        msg = _tensor_msg(a, e, matches, rtol, atol, actual.dtype)
    raise _Mismatch(AssertionError, msg, id_)


def _pair_for(actual, expected, allow_subclasses):
    """The comparison that handles these two leaves (torch's pair types, tried in order), or None."""
    if actual is None or expected is None:
        return _compare_none
    if all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        return _compare_bool
    if all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
        return _compare_number
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and isinstance(actual, (Tensor, np.ndarray)) and (allow_subclasses or type(actual) is type(expected)):
        return _compare_tensors
    return None


# Note [isclose in the dtype]
# torch decides closeness with ``isclose`` computed in the compared dtype: ``atol + |rtol * e|`` and
# ``|a - e|`` are float16 tensors for float16 inputs, so a difference right at the tolerance rounds
# as torch's does. NumPy would promote bfloat16 (ml_dtypes) by a Python float to float32, so the
# tolerances are made scalars of the dtype first. Integers compare ``|a - e|`` (in their own dtype,
# wrapping like torch's) with a tolerance in the default float dtype; bool is cast to that dtype.
def _isclose(a, e, rtol, atol, equal_nan, dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        close = a == e
        inexact = dtype.is_floating_point or dtype.is_complex
        if equal_nan and inexact:
            close |= np.isnan(a) & np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        default = dt.get_default_dtype().numpy_dtype.type
        if inexact:
            real = _abs(e.reshape(-1)[:0]).dtype.type
            allowed = real(atol) + _abs(real(rtol) * e)
            error = _abs(a - e)
        else:
            if dtype == dt.bool:
                a, e = a.astype(default), e.astype(default)
            allowed = default(atol) + np.abs(default(rtol) * e.astype(default))
            error = np.abs(a - e).astype(default)
        return close | (np.isfinite(error) & (error <= allowed))


def _abs(x: np.ndarray) -> np.ndarray:
    # torch's complex abs is hypot (correctly rounded); NumPy's vectorized complex64 abs is not
    return np.hypot(x.real, x.imag) if np.iscomplexobj(x) else np.abs(x)


def _tensor_msg(a, e, matches, rtol, atol, dtype) -> str:
    n = matches.size
    total = n - int(matches.sum())
    extra = f"Mismatched elements: {total} / {n} ({total / n:.1%})"
    a, e, hit = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    inexact = dtype.is_floating_point or dtype.is_complex
    if not inexact:
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = _abs(a - e)
        abs_diff[hit] = 0
        if inexact:
            rel_diff = abs_diff / _abs(e)
        else:  # int64 / int64 is a true division in the default float dtype, as torch's
            default = dt.get_default_dtype().numpy_dtype
            rel_diff = abs_diff.astype(default) / np.abs(e).astype(default)
        rel_diff[hit] = 0
    abs_idx, rel_idx = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))  # argmax, like torch.max, stops at NaN
    as_py = float if inexact else int
    return _mismatch_msg("Tensor-likes", extra, as_py(abs_diff[abs_idx]), _unravel(abs_idx, matches.shape), atol,
                         float(rel_diff[rel_idx]), _unravel(rel_idx, matches.shape), rtol)


def _unravel(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _originate(actual, expected, id_, options) -> list:
    """Flatten the two inputs into ``(actual, expected, id)`` leaves, checking their structure."""
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            id_)
        return [p for i in range(len(actual)) for p in _originate(actual[i], expected[i], (*id_, i), options)]
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Mismatch(AssertionError, "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}", id_)
        keys = actual_keys
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        return [p for k in keys for p in _originate(actual[k], expected[k], (*id_, k), options)]
    if (not isinstance(actual, (type, Tensor, np.ndarray)) and dataclasses.is_dataclass(actual)
            and type(actual) is type(expected)):
        return [p for f in dataclasses.fields(actual) if f.compare
                for p in _originate(getattr(actual, f.name), getattr(expected, f.name), (*id_, f.name), options)]
    return [(actual, expected, id_)]


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    """Assert that ``actual`` and ``expected`` are close (torch.testing.assert_close).

    Tensors (and NumPy arrays) pass when shape, device, dtype and, with ``check_stride``, strides
    agree and ``|actual - expected| <= atol + rtol * |expected|`` elementwise; Python numbers the
    same; sequences and mappings recurse. ``rtol``/``atol`` default by dtype (float32: 1.3e-6 / 1e-5,
    float64: 1e-7 / 1e-7, integers and bool: exact). ``msg`` replaces the message, or maps it if callable.
    Raises AssertionError (ValueError / TypeError for bad arguments or inputs) in torch's words.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    pairs = []
    try:  # pair every leaf first: structure, type and argument errors come before any value mismatch
        for a, e, id_ in _originate(actual, expected, (), options):
            compare = _pair_for(a, e, allow_subclasses)
            if compare is None:
                raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(a)} and "
                                           f"{type(e)}.", id_)
            if compare in (_compare_number, _compare_tensors):
                _check_tolerances(rtol, atol, id_)
            pairs.append((compare, a, e, id_))
    except _Mismatch as error:
        raise error.to_error() from None
    for compare, a, e, id_ in pairs:
        try:
            compare(a, e, id_=id_, **options)
        except _Mismatch as error:
            raise error.to_error(msg) from None
