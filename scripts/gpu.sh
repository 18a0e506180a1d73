#!/usr/bin/env bash
# Run strided's whole test suite (tests/cuda included) and the CUDA benchmarks on a GPU machine.
# Offline: missing wheels are installed from ./.whl when present. Logs go under $OUT when set.
# The last lines printed are a short summary.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" PYTHONUNBUFFERED=1
LOG="${OUT:-/tmp/strided-gpu}"
mkdir -p "$LOG"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/strided-site .whl/*.whl \
    >"$LOG/pip.log" 2>&1 && export PYTHONPATH="/tmp/strided-site:$PYTHONPATH"
fi
python3 - >"$LOG/env.txt" 2>&1 <<'PY'
import importlib
import strided.cuda as c
print("gpu:", c.get_device_name(0) if c.is_available() else "none")
from strided.backends.cuda.driver import driver_version
print("driver cuda:", driver_version())
for m in ("numpy", "cuda.bindings", "torch", "cupy"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "missing", type(e).__name__)
PY
# warm the NVRTC cache with the pointwise kernels, in parallel (the op tests would compile them one by one)
timeout 120 python3 -c "from strided.backends.cuda import elementwise as e; from strided.backends.cuda.kernels \
import pointwise_ops as p; print('precompiled', e.precompile(p.instantiations(), workers=16))" >"$LOG/precompile.log" 2>&1
timeout 420 python3 -m pytest tests -p no:cacheprovider -rfEs --continue-on-collection-errors >"$LOG/tests.log" 2>&1
rc=$?
timeout 120 python3 bench/bench_alloc.py ${BENCH_APPEND:+--append} >"$LOG/bench.log" 2>&1
brc=$?
timeout 180 python3 bench/bench_copy.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
timeout 240 python3 bench/bench_gemm.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
timeout 180 python3 bench/bench_elementwise.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
timeout 150 python3 bench/bench_reductions.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
timeout 120 python3 bench/bench_optim.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
timeout 180 python3 bench/bench_train_step.py ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
echo "==== strided gpu.sh summary ===="
cat "$LOG/env.txt"
echo "tests (rc=$rc): $(tail -n 1 "$LOG/tests.log")"
echo "tests/cuda: $(grep -c 'tests/cuda' "$LOG/tests.log" || true) lines mention tests/cuda; failures:"
grep -E '^(FAILED|ERROR) tests/cuda' "$LOG/tests.log" | head -20
echo "all failures: $(grep -cE '^(FAILED|ERROR) ' "$LOG/tests.log")"; grep -E '^(FAILED|ERROR) ' "$LOG/tests.log" | cut -c1-120 | head -10
echo "bench (rc=$brc):"
cat "$LOG/bench.log" | tail -n 12
exit $rc
