"""``strided.cuda.tunable``: TunableOp for cuBLASLt GEMMs (torch.cuda.tunable's API).

    strided.cuda.tunable.enable()            # or STRIDED_TUNABLEOP_ENABLED=1
    y = a @ b                                # the first call of each new GEMM problem is tuned
    strided.cuda.tunable.write_file()        # also written at exit (write_file_on_exit)

Each new (op, shapes, strides, dtypes, transposes, epilogue) times cuBLASLt's heuristic
candidates and keeps the fastest; the heuristic's first choice is always a candidate and wins
ties, so tuning never makes a GEMM slower.  Results persist to a CSV keyed by GPU name,
cuBLASLt version and strided version, read back the first time a GEMM runs with tuning enabled
(see Note [TunableOp] in ``strided/backends/cuda/gemm_tuning.py``).  Environment variables:
``STRIDED_TUNABLEOP_ENABLED``, ``STRIDED_TUNABLEOP_TUNING``, ``STRIDED_TUNABLEOP_FILENAME``,
``STRIDED_TUNABLEOP_MAX_TUNING_DURATION_MS``, ``STRIDED_TUNABLEOP_MAX_TUNING_ITERATIONS``.
"""

from __future__ import annotations

from ..backends.cuda import gemm_tuning as _t

__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "set_max_tuning_duration",
           "get_max_tuning_duration", "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename",
           "get_filename", "get_results", "results", "get_validators", "write_file_on_exit", "write_file",
           "read_file"]


def enable(val: bool = True) -> None:
    """The on/off switch for TunableOp (looking up and recording tuned GEMMs)."""
    _t.STATE.enabled = bool(val)


def is_enabled() -> bool:
    return _t.STATE.enabled


def tuning_enable(val: bool = True) -> None:
    """Allow tuning new problems (when False, only results already recorded or read are used)."""
    _t.STATE.tuning = bool(val)


def tuning_is_enabled() -> bool:
    return _t.STATE.tuning


def set_max_tuning_duration(duration: int) -> None:
    """Milliseconds to spend timing each candidate (at least one iteration always runs)."""
    _t.STATE.max_duration_ms = int(duration)


def get_max_tuning_duration() -> int:
    return _t.STATE.max_duration_ms


def set_max_tuning_iterations(iterations: int) -> None:
    """Most timed calls per candidate (at least one always runs)."""
    _t.STATE.max_iterations = max(1, int(iterations))


def get_max_tuning_iterations() -> int:
    return _t.STATE.max_iterations


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    """The results file; with ``insert_device_ordinal`` the device index goes before the extension."""
    _t.STATE.filename = str(filename)
    _t.STATE.insert_device_ordinal = bool(insert_device_ordinal)


def get_filename() -> str:
    from ..backends.cuda.device import current_device

    return _t.filename_for(current_device()) if _t.STATE.insert_device_ordinal else _t.STATE.filename


def get_results() -> tuple[tuple[str, str, str, float], ...]:
    """Every recorded result as ``(op, params, solution, ms)``."""
    return tuple((op, params, sol, ms) for (op, params), (sol, ms) in sorted(_t.STATE.results.items()))


results = get_results


def get_validators() -> tuple[tuple[str, str], ...]:
    """The ``(name, value)`` pairs a results file must match (known after the first tuned GEMM)."""
    return _t.validators()


def write_file_on_exit(val: bool) -> None:
    """Write the results file when the process exits (default True)."""
    _t.STATE.write_on_exit = bool(val)


def write_file(filename: str | None = None) -> bool:
    """Write the results (validators first) to ``filename`` (default: :func:`get_filename`)."""
    return _t.write_file(get_filename() if filename is None else filename)


def read_file(filename: str | None = None) -> bool:
    """Read results from ``filename`` (default: :func:`get_filename`); False when absent or rejected."""
    if _t.STATE.validators is None:
        from ..backends.cuda import driver

        if driver.is_available():
            from ..backends.cuda.blas import _validators
            from ..backends.cuda.device import current_device

            _t.STATE.validators = _validators(current_device())
    return _t.read_file(get_filename() if filename is None else filename)
