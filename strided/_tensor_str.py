"""``repr(tensor)`` in torch's format (``torch/_tensor_str.py``), computed on a NumPy view of the data.

::

    tensor([1., 2., 3.])
    tensor([[1, 2],
            [3, 4]])
    tensor([1.0000e-05, 1.0000e+03], dtype=strided.float64, requires_grad=True)
    tensor(..., device='meta', size=(2, 3))

Note [Printing rules]
These follow torch exactly: one ``_Formatter`` per tensor picks a width and a mode from the
nonzero finite values (scientific when max/min > 1000, max > 1e8 or min < 1e-4, or as
``sci_mode`` forces; else ``int_mode`` when all are integral: ``1.``; else fixed with ``precision``
digits); tensors with
more than ``threshold`` elements print ``edgeitems`` rows/columns at each end around ``...``;
rows wrap at ``linewidth``. Complex elements print their real and imaginary parts with a formatter
each (``1.+2.j``). Suffixes name what the data doesn't show: a non-CPU device, a dtype other than
the default float, the default complex dtype, int64 and bool, ``requires_grad`` / ``grad_fn``, and
the size of empty and meta tensors.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import dtypes as dt

__all__ = ["set_printoptions", "get_printoptions", "tensor_repr", "PRINT_OPTS"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Set printing options (torch.set_printoptions).

    Parameters
    ----------
    precision : digits after the decimal point (default 4).
    threshold : element count above which the repr is summarized (default 1000).
    edgeitems : items shown at each end of each summarized dimension (default 3).
    linewidth : characters per line before wrapping (default 80).
    profile : ``"default"``, ``"short"`` or ``"full"``: presets for the four options above.
    sci_mode : True/False forces scientific notation on/off; None (default) decides per tensor.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions(): unknown profile {profile!r}; expected one of {sorted(_PROFILES)}"
            )
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options as a dict."""
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Width and mode for every element of one tensor (torch's ``_Formatter``)."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        flat = values.reshape(-1)
        if not floating:
            if flat.size:
                self.max_width = max(len(str(v)) for v in (flat.min().item(), flat.max().item()))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        absolute = np.abs(finite)
        lo, hi = float(absolute.min()), float(absolute.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        values_list = finite.tolist()
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in values_list)
        elif self.int_mode:
            # integral floats print as "1.": one more character than the integer
            self.max_width = max(len(f"{v:.0f}") + 1 for v in values_list)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in values_list)

    def format(self, value) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """A complex element as torch prints it: the real part, then the imaginary part with its sign and ``j``,
    each with its own ``_Formatter`` (``1.+2.j``, ``-0.5000-1.2500j``)."""

    def __init__(self, values: np.ndarray):
        self.real = _Formatter(values.real.astype(np.float64), True)
        self.imag = _Formatter(values.imag.astype(np.float64), True)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # torch's element length, less 2

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized repr shows (torch's ``get_summarized_data``)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty((0,) * a.ndim, dtype=a.dtype)
    n = a.shape[0]
    rows = list(range(e)) + list(range(n - e, n)) if n > 2 * e else range(n)
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in _py(a[:e])] + [" ..."] + [fmt.format(v) for v in _py(a[-e:])])
    else:
        data = [fmt.format(v) for v in _py(a)]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _py(a: np.ndarray) -> list:
    """Elements as Python numbers (half types widened exactly to float)."""
    if a.dtype.kind == "f" or a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        a = a.astype(np.float64)
    return a.tolist()


def _nested_str(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(_py(a))
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        slices = ([_nested_str(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n - e, n)])
    else:
        slices = [_nested_str(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _data_str(t, indent: int) -> str:
    from .interop import tensor_to_numpy

    a = tensor_to_numpy(t, force=True)
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    if t.dtype.is_complex:
        return _nested_str(a, indent, summarize, _ComplexFormatter(shown))
    floating = t.dtype.is_floating_point
    fmt = _Formatter(shown.astype(np.float64) if floating else shown, floating)
    return _nested_str(a, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: list, indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(grad_fn) -> str:
    """The name torch prints: the node's name without the C++ namespace (``CopySlices``, not
    ``torch::autograd::CopySlices``)."""
    name = getattr(grad_fn, "name", None)
    if callable(name):
        name = name()
    return name.rsplit("::", 1)[-1] if isinstance(name, str) else type(grad_fn).__name__


def _grad_fn_suffix(t) -> str | None:
    """``grad_fn=<...>``, or ``grad_fn=<Invalid>`` where reading it raises (a view whose history torch refuses
    to regenerate, Note [Multi-output views]), as torch prints; None for a tensor without one."""
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        return "grad_fn=<Invalid>"
    return None if grad_fn is None else f"grad_fn=<{_grad_fn_name(grad_fn)}>"


def tensor_repr(t, *, tensor_contents: str | None = None) -> str:
    """torch's ``Tensor.__repr__`` (see Note [Printing rules])."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = dt.get_default_dtype()
    size = f"size={tuple(t._sizes)}"
    dtype = f"dtype={t.dtype!r}"
    if t.device.type == "meta":
        suffixes.append(size)
        if t.dtype is not default:
            suffixes.append(dtype)
        body = "..."
    elif t.numel() == 0:
        if len(t._sizes) != 1:
            suffixes.append(size)
        if t.dtype is not default:
            suffixes.append(dtype)
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(size)
        if t.dtype not in (default, dt.default_complex_dtype(), dt.int64, dt.bool):
            suffixes.append(dtype)
        body = _data_str(t, indent)
    if tensor_contents is not None:
        body = tensor_contents
    grad_fn = _grad_fn_suffix(t)
    if grad_fn is not None:
        suffixes.append(grad_fn)
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
