#!/usr/bin/env bash
# Run strided's whole test suite (tests/cuda included) and the CUDA benchmarks on a GPU machine,
# from a source checkout with no network.
#
#   scripts/gpu.sh [all|tests|bench]      (default: all)
#
# Missing wheels (nvmath-python) are installed from ./.whl when present. Full logs go under $OUT
# when set (else /tmp/strided-gpu). BENCH_APPEND=1 appends each benchmark's table to
# bench/RESULTS.md; BENCHES="reductions optim" runs only those benchmarks; PYTEST_ARGS narrows the
# tests; TESTS_TIMEOUT (seconds, default 420) bounds them (each run, with JOBS); JOBS=4 runs the
# tests in four pytest processes sharing the GPU (tests/cuda first, alone; see run_parallel_tests).
# PYTEST_ARGS='tests -k cuda' runs only the cases that name CUDA (tests/cuda and the cuda parameters of the
# others), when the CPU and meta cases have passed in CI and the whole suite would outlast a time limit.
# Where even that outlasts one limit (on an H200 it took 599 s of a 600 s device call), run it in two calls:
#   JOBS=1 PYTEST_ARGS='tests/cuda' scripts/gpu.sh tests
#   JOBS=8 PYTEST_ARGS='tests/backend tests/null -k "cuda or nvtx or nvml"' scripts/gpu.sh tests
# The last lines printed are a short summary: GPU, versions, pass/fail counts, benchmark ratios.
set -u
cd "$(dirname "$0")/.."
MODE="${1:-all}"
case "$MODE" in all|tests|bench) ;; *) echo "usage: scripts/gpu.sh [all|tests|bench]" >&2; exit 2 ;; esac
for var in JOBS OPS_SLICES TESTS_TIMEOUT; do
  val="${!var:-1}"
  [[ "$val" =~ ^[0-9]+$ ]] || { echo "scripts/gpu.sh: $var must be a whole number, got '$val'" >&2; exit 2; }
done
for name in ${BENCHES:-}; do
  [ -f "bench/bench_$name.py" ] || { echo "scripts/gpu.sh: unknown benchmark '$name' in BENCHES" >&2; exit 2; }
done
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
for m in ("numpy", "cuda.bindings", "nvmath", "torch", "cupy"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "missing", type(e).__name__)
PY
# JOBS=N (N > 1): tests/cuda first, alone (its allocator tests read the device's free memory, which
# other processes' allocations would move), then the other test files in pytest processes at once
# sharing the GPU: tests/backend/test_ops.py (the longest) split by dtype into 7 processes (OPS_SLICES=1:
# one), the rest dealt round-robin to N - 1 others. A -k expression in PYTEST_ARGS is kept (give it as
# -k EXPR). Each process logs to tests.<i>.log; tests.log gets them
# all and one combined count line.
run_parallel_tests() {
  local paths=() opts=() a f kexpr="" takek=0
  for a in "$@"; do
    if [ $takek = 1 ]; then kexpr=$a; takek=0
    elif [ "$a" = -k ]; then takek=1
    elif [ -e "${a%%::*}" ]; then paths+=("$a")
    else opts+=("$a"); fi
  done
  local files=()
  for a in "${paths[@]}"; do
    if [ -d "$a" ]; then
      while IFS= read -r f; do files+=("$f"); done < <(find "$a" -name 'test_*.py' | sort)
    else
      files+=("$a")
    fi
  done
  local serial=() groups=() ops=() i=0 n=$JOBS
  for f in "${files[@]}"; do
    case "$f" in
      tests/cuda/*) serial+=("$f") ;;
      */test_ops.py) ops+=("$f") ;;
      *) groups[$(( 1 + i % (n - 1) ))]+="$f "; i=$((i + 1)) ;;
    esac
  done
  local start=$SECONDS pids=() g kopt=() slice
  [ -n "$kexpr" ] && kopt=(-k "$kexpr")
  rc=0
  if [ ${#serial[@]} -gt 0 ]; then
    timeout "${TESTS_TIMEOUT:-420}" python3 -m pytest "${serial[@]}" "${opts[@]}" "${kopt[@]}" -p no:cacheprovider -rfEs \
      --continue-on-collection-errors >"$LOG/tests.0.log" 2>&1 || rc=$?
  fi
  for g in $(seq 1 $((n - 1))); do
    [ -n "${groups[$g]:-}" ] || continue
    # shellcheck disable=SC2086 - the group is a space-separated file list
    timeout "${TESTS_TIMEOUT:-420}" python3 -m pytest ${groups[$g]} "${opts[@]}" "${kopt[@]}" -p no:cacheprovider \
      -rfEs --continue-on-collection-errors >"$LOG/tests.$g.log" 2>&1 &
    pids+=($!)
  done
  # the op tests' ids name their dtype: one slice per dtype family, the last slice everything else
  # (-k matches substrings, so float16 takes bfloat16 and int8 takes uint8; every id lands in one slice)
  local slices=(float32 float64 float16 int64 int32 "int16 or int8") all="" j=0
  [ "${OPS_SLICES:-7}" -le 1 ] && slices=()
  for slice in "${slices[@]}"; do all+="${all:+ or }$slice"; done
  [ ${#slices[@]} -gt 0 ] && slices+=("not ($all)") || slices=("")
  if [ ${#ops[@]} -gt 0 ]; then
    for slice in "${slices[@]}"; do
      local k="${kexpr:+($kexpr)}"
      [ -n "$slice" ] && k="${k:+$k and }($slice)"
      timeout "${TESTS_TIMEOUT:-420}" python3 -m pytest "${ops[@]}" "${opts[@]}" ${k:+-k "$k"} -p no:cacheprovider \
        -rfEs --continue-on-collection-errors >"$LOG/tests.ops$j.log" 2>&1 &
      pids+=($!); j=$((j + 1))
    done
  fi
  local p
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  cat "$LOG"/tests.*.log >"$LOG/tests.log"
  local counts
  counts=$(grep -hE '^(=+ )?[0-9]+ (passed|failed|skipped|errors?|deselected).* in [0-9.]+s' "$LOG"/tests.*.log | grep -oE '[0-9]+ (passed|failed|skipped|errors?|deselected)' \
    | awk '{n[$2]+=$1} END {for (k in n) printf "%d %s, ", n[k], k}')
  echo "== combined over $(ls "$LOG"/tests.*.log | wc -l) pytest runs (JOBS=$n): ${counts%, } in $((SECONDS - start))s ==" \
    >>"$LOG/tests.log"
}

rc=0
if [ "$MODE" != bench ]; then
  # warm the NVRTC cache with the pointwise kernels, in parallel (the op tests would compile them one by one)
  timeout 150 python3 -c "from strided.backends.cuda import elementwise as e; from strided.backends.cuda.kernels \
import pointwise_ops as p, complex_ops as c; print('precompiled', e.precompile(p.instantiations() + c.instantiations(), \
workers=16))" >"$LOG/precompile.log" 2>&1
  # PYTEST_ARGS narrows the run (e.g. the GPU-only cases when the CPU tiers already passed elsewhere);
  # it is split like a shell command line, so quoted -k expressions work
  eval "set -- ${PYTEST_ARGS:-tests}"
  if [ "${JOBS:-1}" -le 1 ]; then
    timeout "${TESTS_TIMEOUT:-420}" python3 -m pytest "$@" -p no:cacheprovider -rfEs \
      --continue-on-collection-errors >"$LOG/tests.log" 2>&1
    rc=$?
  else
    run_parallel_tests "$@"
  fi
fi
brc=0
: >"$LOG/bench.log"
if [ "$MODE" != tests ]; then
  for b in alloc:120 copy:120 elementwise:150 reductions:150 gemm:240 optim:120 train_step:180 rnn:150 fft:120 jiterator:120; do
    name=${b%%:*}; limit=${b##*:}
    # BENCHES (e.g. "reductions optim") runs only the named benchmarks
    if [ -n "${BENCHES:-}" ] && [[ " $BENCHES " != *" $name "* ]]; then continue; fi
    echo "## bench_$name" >>"$LOG/bench.log"
    timeout "$limit" python3 "bench/bench_$name.py" ${BENCH_APPEND:+--append} >>"$LOG/bench.log" 2>&1 || brc=$?
  done
fi
echo "==== strided gpu.sh summary ($MODE) ===="
cat "$LOG/env.txt"
if [ "$MODE" != bench ]; then
  echo "tests (rc=$rc): $(grep -E '(passed|failed)' "$LOG/tests.log" | tail -n 1)"
  echo "failures: $(grep -cE '^(FAILED|ERROR) ' "$LOG/tests.log")"
  grep -E '^(FAILED|ERROR) ' "$LOG/tests.log" | cut -c1-140 | head -15
  echo "skips by reason:"
  grep -E '^SKIPPED' "$LOG/tests.log" | sed -E 's/^SKIPPED \[[0-9]+\] [^:]+:[0-9]+: //' | cut -c1-90 | sort | uniq -c \
    | sort -rn | head -8
fi
if [ "$MODE" != tests ]; then
  echo "bench (rc=$brc): table rows with a ratio column"
  grep -E '^(## |\|)' "$LOG/bench.log" | grep -vE '^\|[-: |]+\|$' | cut -c1-150 | tail -n 60
fi
exit $(( rc != 0 ? rc : brc ))
