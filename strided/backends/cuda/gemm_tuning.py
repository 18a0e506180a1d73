"""TunableOp for cuBLASLt GEMMs: the results table, its CSV file, and the timing loop.

``strided.cuda.tunable`` is the public API over this module; ``blas.py`` asks :func:`lookup`
for a tuned choice and calls :func:`tune` for a new problem.  No nvmath import here: the GEMM
itself reaches this module as a ``run(candidate)`` callback.

Note [TunableOp]
torch.cuda.tunable's design, for cuBLASLt's heuristic candidates: a problem is keyed by (op name,
parameters) — op name ``GemmTunableOp_<dtype>_<TA><TB>[_<epilogue>]`` and the parameters string
holding shapes, leading dimensions, batch strides, pointer alignments and the precision flags. Each
new problem times the heuristic's candidates (up to 8) with CUDA events on the current stream: one
warmup call each, then as many calls as fit in ``max_tuning_duration`` ms (at most
``max_tuning_iterations``), interleaved over two rounds, keeping each candidate's best mean. The
heuristic's first choice is always candidate 0 and keeps its place unless another is at least 1%
faster, so a tuned GEMM is never slower than the untuned one beyond timing noise: a challenger must
also win three alternating head-to-head rounds against it. Each timed batch runs behind a spin
kernel that holds the stream until the host has queued the whole batch, so launch overhead never
decides between two fast candidates. Results persist as torch's CSV: ``Validator`` lines (GPU name,
cuBLASLt version, strided version) then ``op,params,solution,ms`` rows, the solution being
``Default`` (heuristic first choice) or the 64-byte ``cublasLtMatmulAlgo_t`` in hex plus its
workspace size. A file whose validators differ from this machine's is ignored with a warning.
"""

from __future__ import annotations

import atexit
import csv
import os
import warnings

__all__ = ["STATE", "SPIN_SOURCE", "lookup", "record", "tune", "read_file", "write_file", "validators"]

# Holds a stream for p.ns nanoseconds (globaltimer): tuning batches queue up behind it.
SPIN_SOURCE = r"""
struct SpinParams { long long ns; };
extern "C" __global__ void strided_spin(const SpinParams p) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < (unsigned long long)p.ns);
}
"""


class _State:
    """Switches and the results table (``{(op, params): (solution, ms)}``)."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("STRIDED_TUNABLEOP_ENABLED", "0") == "1"
        self.tuning = os.environ.get("STRIDED_TUNABLEOP_TUNING", "1") == "1"
        self.max_duration_ms = int(os.environ.get("STRIDED_TUNABLEOP_MAX_TUNING_DURATION_MS", "30"))
        self.max_iterations = int(os.environ.get("STRIDED_TUNABLEOP_MAX_TUNING_ITERATIONS", "100"))
        self.filename = os.environ.get("STRIDED_TUNABLEOP_FILENAME", "tunableop_results.csv")
        self.insert_device_ordinal = False
        self.write_on_exit = True
        self.results: dict[tuple[str, str], tuple[str, float]] = {}
        self.read_files: set[str] = set()
        self.validators: dict[str, str] | None = None  # filled by blas.py on first use
        self.progress = None
        self.tuned_count = 0  # problems timed in this process
        self.dirty = False


STATE = _State()


def filename_for(device_index: int) -> str:
    """The results file of ``device_index`` (torch inserts the ordinal before the extension)."""
    name = STATE.filename
    if not STATE.insert_device_ordinal:
        return name
    root, ext = os.path.splitext(name)
    return f"{root}{device_index}{ext}"


def validators() -> tuple[tuple[str, str], ...]:
    return tuple((STATE.validators or {}).items())


def read_file(filename: str) -> bool:
    """Load a results CSV; False (with a warning) when missing fields or validators mismatch."""
    if not os.path.exists(filename):
        return False
    found, rows = {}, []
    with open(filename, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Validator" and len(row) == 3:
                found[row[1]] = row[2]
            elif len(row) >= 3:
                rows.append(row)
    mine = STATE.validators or {}
    for k, v in mine.items():
        if found.get(k) != v:
            warnings.warn(f"TunableOp: ignoring {filename}: validator {k} is {found.get(k)!r} in the file but "
                          f"{v!r} here", UserWarning, stacklevel=2)
            return False
    for row in rows:
        ms = float(row[3]) if len(row) > 3 and row[3] else 0.0
        STATE.results[(row[0], row[1])] = (row[2], ms)
    STATE.read_files.add(os.path.abspath(filename))
    return True


def write_file(filename: str) -> bool:
    """Write the validators and every result (read or tuned) to ``filename``."""
    with open(filename, "w", newline="") as f:
        w = csv.writer(f)
        for k, v in (STATE.validators or {}).items():
            w.writerow(["Validator", k, v])
        for (op, params), (solution, ms) in sorted(STATE.results.items()):
            w.writerow([op, params, solution, f"{ms:.6f}"])
    STATE.dirty = False
    return True


def _write_at_exit() -> None:
    if STATE.enabled and STATE.write_on_exit and STATE.dirty and STATE.validators:
        try:
            write_file(filename_for(int(STATE.validators.get("DEVICE", "0"))))
        except OSError as e:  # interpreter shutdown: report, never raise
            warnings.warn(f"TunableOp: could not write results: {e}", UserWarning, stacklevel=1)
    if STATE.progress is not None:
        STATE.progress.close()


atexit.register(_write_at_exit)


def lookup(op: str, params: str, device_index: int):
    """The recorded solution string for a problem, reading the results file once first."""
    name = filename_for(device_index)
    if os.path.abspath(name) not in STATE.read_files:
        STATE.read_files.add(os.path.abspath(name))
        read_file(name)
    hit = STATE.results.get((op, params))
    return None if hit is None else hit[0]


def record(op: str, params: str, solution: str, ms: float) -> None:
    STATE.results[(op, params)] = (solution, ms)
    STATE.dirty = True


def _iterations(est_ms: float) -> int:
    n = int(STATE.max_duration_ms / est_ms) if est_ms > 0 else STATE.max_iterations
    return max(1, min(n, STATE.max_iterations))


def tune(run, count: int, timer) -> tuple[int, float]:
    """Time candidates ``0..count-1`` (``run(i)`` enqueues one GEMM); returns (best index, ms).

    ``timer(fn, n)`` runs ``fn`` ``n`` times between two CUDA events (behind a spin kernel, so
    the GPU time is measured, not the host's launch rate) and returns ms per call.  Candidate 0
    (the heuristic's first choice) wins ties, and a challenger must beat it again, head to head,
    in three more alternating rounds (Note [TunableOp]).
    """
    for i in range(count):  # warmup: first-call costs (module loads) stay out of the timings
        run(i)
    est = timer(lambda: run(0), 1)
    iters = _iterations(est)
    best = [float("inf")] * count
    for _ in range(2):
        for i in range(count):
            best[i] = min(best[i], timer(lambda i=i: run(i), iters))
    winner = 0
    for i in range(1, count):
        if best[i] < 0.99 * best[winner] and best[i] < 0.99 * best[0]:
            winner = i
    if winner:
        first, challenger = [], []
        for _ in range(3):
            first.append(timer(lambda: run(0), iters))
            challenger.append(timer(lambda: run(winner), iters))
        first.sort()
        challenger.sort()
        if not challenger[1] < 0.99 * first[1]:
            winner = 0
        best[winner] = min(best[winner], challenger[1] if winner else first[1])
    if STATE.progress is None:
        from ...utils.progress import Progress

        STATE.progress = Progress(total=0, desc="TunableOp GEMMs tuned")
    STATE.progress.update()
    STATE.tuned_count += 1
    return winner, best[winner]
