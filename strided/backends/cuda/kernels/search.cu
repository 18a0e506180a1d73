// searchsorted: one thread per value, a binary search over its row of the sorted sequence, with
// torch's comparisons (Note [searchsorted comparisons] in backends/cpu/sorting.py). DST_T is the
// common dtype of the sequence and the values; half types compare as float (ToWide).
struct SearchParams {
  const DST_T* values;      // n values, contiguous
  const DST_T* seq;         // rows x len, contiguous
  const long long* sorter;  // rows x len or null
  long long* out64;         // one of out64 / out32 is set
  int* out32;
  i64 n;
  i64 len;
  i64 per_row;              // values per row; 0: one sequence for every value
  i64 right;
};

extern "C" __global__ void searchsorted(const SearchParams p) {
  const i64 step = (i64)blockDim.x * gridDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {
    const i64 base = p.per_row ? (i / p.per_row) * p.len : 0;
    const auto v = ToWide<DST_T>::get(p.values[i]);
    i64 lo = 0, hi = p.len;
    while (lo < hi) {
      const i64 mid = lo + ((hi - lo) >> 1);
      const auto mv = ToWide<DST_T>::get(p.seq[base + (p.sorter ? p.sorter[base + mid] : mid)]);
      const bool go_right = p.right ? !(mv > v) : !(mv >= v);
      if (go_right) lo = mid + 1; else hi = mid;
    }
    if (p.out32) p.out32[i] = (int)lo; else p.out64[i] = lo;
  }
}
