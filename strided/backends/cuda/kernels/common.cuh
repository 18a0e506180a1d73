// Shared by strided's CUDA kernels: element conversion and TensorIterator-style offsets.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define STRIDED_MAX_DIMS 8
typedef long long i64;
typedef unsigned long long u64;

// Conversions go through float for the 16-bit float types; everything else is static_cast.
template <class T> struct Conv {
  template <class S> __device__ static T from(S v) { return static_cast<T>(v); }
};
// To uint8 through int64, as c10's static_cast_with_inter_type<uint8_t, ...>: a negative float wraps (-3.5 -> 253)
// as on the CPU, where a direct float -> unsigned cast is undefined (the GPU saturates it to 0).
template <> struct Conv<unsigned char> {
  template <class S> __device__ static unsigned char from(S v) { return static_cast<unsigned char>(static_cast<i64>(v)); }
  __device__ static unsigned char from(__half v) { return static_cast<unsigned char>(static_cast<i64>(__half2float(v))); }
  __device__ static unsigned char from(__nv_bfloat16 v) {
    return static_cast<unsigned char>(static_cast<i64>(__bfloat162float(v)));
  }
};
template <> struct Conv<bool> {
  template <class S> __device__ static bool from(S v) { return v != S(0); }
  __device__ static bool from(__half v) { return __half2float(v) != 0.f; }
  __device__ static bool from(__nv_bfloat16 v) { return __bfloat162float(v) != 0.f; }
};
// A double reaches __half and __nv_bfloat16 through float, rounding twice, as c10::Half / c10::BFloat16 (which
// have only a float constructor) do: __double2half would round once and differ in about 1 value of 20,000.
template <> struct Conv<__half> {
  template <class S> __device__ static __half from(S v) { return __float2half_rn(static_cast<float>(v)); }
  __device__ static __half from(__half v) { return v; }
  __device__ static __half from(__nv_bfloat16 v) { return __float2half_rn(__bfloat162float(v)); }
};
template <> struct Conv<__nv_bfloat16> {
  template <class S> __device__ static __nv_bfloat16 from(S v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  __device__ static __nv_bfloat16 from(__nv_bfloat16 v) { return v; }
  __device__ static __nv_bfloat16 from(__half v) { return __float2bfloat16_rn(__half2float(v)); }
};
template <class T> struct ToWide { __device__ static T get(T v) { return v; } };
template <> struct ToWide<__half> { __device__ static float get(__half v) { return __half2float(v); } };
template <> struct ToWide<__nv_bfloat16> { __device__ static float get(__nv_bfloat16 v) { return __bfloat162float(v); } };

template <class D, class S> __device__ __forceinline__ D convert(S v) {
  return Conv<D>::from(ToWide<S>::get(v));
}

// Element offset (in elements) of linear index i for a tensor of `ndim` dims.
__device__ __forceinline__ i64 offset_of(i64 i, int ndim, const i64* sizes, const i64* strides) {
  i64 off = 0;
  for (int d = ndim - 1; d >= 0; --d) {
    i64 s = sizes[d];
    i64 c = i % s;
    i /= s;
    off += c * strides[d];
  }
  return off;
}
