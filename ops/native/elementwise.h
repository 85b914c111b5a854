// ops/native/elementwise.h: the loops pointwise kernels share. Operands are broadcast to the output's shape
// (stride 0 on broadcast dimensions), dimensions that are contiguous across every operand are merged,
// and the elements are walked in row-major order, split across threads for large tensors. Operands
// that are contiguous and of the output's shape take a plain pointer loop the compiler vectorises.
#pragma once

#include <array>
#include <cstdint>

#include "../../core/element_conversion.h"
#include "../../core/parallel.h"
#include "../../core/tensor.h"
#include "operand.h"

namespace strata::ops {

// Elements below which a loop stays serial. Note [Elementwise loops are serial below 2^19 elements]:
// forking and joining OpenMP threads costs tens of microseconds once the workers sleep, and a whole
// scheduler time slice when another process holds a core, while a pass over 2^19 floats (~4 MiB of
// traffic) takes a few hundred. With 32768, the 784-512-512-10 step's relu, threshold_backward and SGD
// updates added six fork/joins to its eight GEMMs, and on a shared 2-core machine ran a quarter slower.
inline constexpr std::int64_t kElementwiseGrain = std::int64_t{1} << 19;

// Note [An empty tensor's kernel returns at once]
// A tensor without elements may still have huge sizes ([2^31, 5, 0]), so a kernel that loops over
// rows, columns or an outer product of sizes before it meets the 0 runs for minutes (log_softmax over
// the last dimension looped over 10^10 empty rows), and merging or multiplying such sizes can
// overflow. Every kernel whose output has no elements returns before it computes any of that: the
// CPU kernels of softmax, sum, mm and addmm check their output first, and copy_elements and
// StridedLoop (every pointwise, fill, random and copy loop that is not a flat pass over numel
// elements) check their own. A kernel whose output has elements but an input has none (sum over an
// empty dimension, mm with k = 0) only writes its output.

// The strides (in elements) of `t` broadcast to `shape`: 0 on broadcast dimensions.
DimVector broadcast_strides(const Tensor& t, IntArrayRef shape);

// Typed data pointers for kernels (arguments were validated by the op's meta function). Elements are
// read through load_element (Note [Bool elements are loaded as bytes]).
template <typename T>
T* data_of(const Tensor& t) {
  return static_cast<T*>(t.impl()->data());
}

// N operands over one shape, with dimensions merged where every operand allows it.
template <std::size_t N>
class StridedLoop {
 public:
  StridedLoop(IntArrayRef shape, const std::array<DimVector, N>& strides);

  // Calls fn(offsets) with each operand's element offset, for every element in row-major order,
  // split across threads for large loops (fn must then only write its own elements)...
  template <typename Fn>
  void for_each(const Fn& fn) const;
  // ...or on the calling thread, in order (for accumulations).
  template <typename Fn>
  void for_each_serial(const Fn& fn) const {
    if (numel_ > 0) run_range(0, numel_, fn);
  }

 private:
  template <typename Fn>
  void run_range(std::int64_t begin, std::int64_t end, const Fn& fn) const;

  DimVector sizes_;
  std::array<DimVector, N> strides_;
  std::int64_t numel_;
};

template <std::size_t N>
StridedLoop<N>::StridedLoop(IntArrayRef shape, const std::array<DimVector, N>& strides) : numel_(numel_of(shape)) {
  // Nothing to walk (Note [An empty tensor's kernel returns at once]); merging sizes around a 0 could
  // also overflow ([2^40, 2^40, 0]).
  if (numel_ == 0) return;
  // Drop size-1 dimensions, then merge dimension d into d+1 where each operand is contiguous across them.
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !sizes_.empty();
    for (std::size_t k = 0; k < N && merge; ++k) merge = strides_[k].back() == strides[k][d] * shape[d];
    if (merge) {
      sizes_.back() *= shape[d];
      for (std::size_t k = 0; k < N; ++k) strides_[k].back() = strides[k][d];
    } else {
      sizes_.push_back(shape[d]);
      for (std::size_t k = 0; k < N; ++k) strides_[k].push_back(strides[k][d]);
    }
  }
  if (sizes_.empty()) {
    sizes_.push_back(1);
    for (std::size_t k = 0; k < N; ++k) strides_[k].push_back(0);
  }
}

template <std::size_t N>
template <typename Fn>
void StridedLoop<N>::for_each(const Fn& fn) const {
  if (numel_ == 0) return;
  parallel_for(0, numel_, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) { run_range(begin, end, fn); });
}

template <std::size_t N>
template <typename Fn>
void StridedLoop<N>::run_range(std::int64_t begin, std::int64_t end, const Fn& fn) const {
  const std::size_t ndim = sizes_.size();
  DimVector index(ndim, 0);
  std::array<std::int64_t, N> offsets{};
  std::int64_t rest = begin;
  for (std::size_t d = ndim; d-- > 0;) {
    index[d] = rest % sizes_[d];
    rest /= sizes_[d];
    for (std::size_t k = 0; k < N; ++k) offsets[k] += index[d] * strides_[k][d];
  }
  const std::int64_t inner = sizes_[ndim - 1];
  std::array<std::int64_t, N> inner_stride;
  for (std::size_t k = 0; k < N; ++k) inner_stride[k] = strides_[k][ndim - 1];
  std::int64_t done = begin;
  while (done < end) {
    const std::int64_t run = std::min(inner - index[ndim - 1], end - done);
    std::array<std::int64_t, N> o = offsets;
    for (std::int64_t i = 0; i < run; ++i) {
      fn(o);
      for (std::size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    done += run;
    // Advance the multi-index by `run` elements (to the start of the next row).
    for (std::size_t k = 0; k < N; ++k) offsets[k] += run * inner_stride[k];
    index[ndim - 1] += run;
    for (std::size_t d = ndim - 1; d > 0 && index[d] == sizes_[d]; --d) {
      for (std::size_t k = 0; k < N; ++k) offsets[k] += strides_[k][d - 1] - sizes_[d] * strides_[k][d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// The strided (non-contiguous or broadcasting) paths of the loops below, kept out of line so the
// contiguous path of a tiny op stays a small function (Note [Checks cost nothing until they fail]).
template <typename T, typename Fn>
[[gnu::noinline]] void unary_loop_strided(const Tensor& out, const Tensor& a, const Fn& fn) {
  T* o = data_of<T>(out);
  const T* x = data_of<T>(a);
  StridedLoop<2> loop(out.sizes(), {DimVector(out.strides()), broadcast_strides(a, out.sizes())});
  loop.for_each([&](const std::array<std::int64_t, 2>& off) { o[off[0]] = fn(load_element(x + off[1])); });
}
template <typename T, typename Fn>
[[gnu::noinline]] void binary_loop_strided(const Tensor& out, const Tensor& a, const Tensor& b, const Fn& fn) {
  T* o = data_of<T>(out);
  const T* x = data_of<T>(a);
  const T* y = data_of<T>(b);
  StridedLoop<3> loop(out.sizes(),
                      {DimVector(out.strides()), broadcast_strides(a, out.sizes()), broadcast_strides(b, out.sizes())});
  loop.for_each([&](const std::array<std::int64_t, 3>& off) { o[off[0]] = fn(load_element(x + off[1]), load_element(y + off[2])); });
}

// The contiguous inner loops. Parameters by value: Note [Elementwise loops read their operands from locals]
// The closure of a loop body reaches fn's captures (alpha, a threshold) and the data pointers by
// reference, and a float store to o[i] may, for all the compiler knows, change a captured float: the
// loop then reloads them every element and is not vectorised. Copies in locals whose address is never taken cannot alias the output.
template <typename T, typename Fn>
inline void unary_span(T* o, const T* x, std::int64_t lo, std::int64_t hi, Fn f) {
  for (std::int64_t i = lo; i < hi; ++i) o[i] = f(load_element(x + i));
}
template <typename T, typename Fn>
inline void binary_span(T* o, const T* x, const T* y, std::int64_t lo, std::int64_t hi, Fn f) {
  for (std::int64_t i = lo; i < hi; ++i) o[i] = f(load_element(x + i), load_element(y + i));
}
// Large loops, split across threads; out of line, so a small loop's caller builds no closure.
template <typename T, typename Fn>
[[gnu::noinline]] void unary_span_threaded(T* o, const T* x, std::int64_t n, Fn f) {
  parallel_for(0, n, kElementwiseGrain, [=](std::int64_t lo, std::int64_t hi) { unary_span(o, x, lo, hi, f); });
}
template <typename T, typename Fn>
[[gnu::noinline]] void binary_span_threaded(T* o, const T* x, const T* y, std::int64_t n, Fn f) {
  parallel_for(0, n, kElementwiseGrain, [=](std::int64_t lo, std::int64_t hi) { binary_span(o, x, y, lo, hi, f); });
}

// out = fn(a) elementwise; `a` has out's dtype and a shape broadcastable to out's.
template <typename T, typename Fn>
void unary_loop(const Tensor& out, const Tensor& a, const Fn& fn) {
  const std::int64_t n = out.numel();
  if (!(out.is_contiguous() && a.is_contiguous() && a.numel() == n)) return unary_loop_strided<T>(out, a, fn);
  T* o = data_of<T>(out);
  const T* x = data_of<T>(a);
  if (n <= kElementwiseGrain) [[likely]] return unary_span(o, x, 0, n, fn);
  unary_span_threaded(o, x, n, fn);
}

// out = fn(a, b) elementwise; `a` and `b` have out's dtype and shapes broadcastable to out's.
template <typename T, typename Fn>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const Fn& fn) {
  const std::int64_t n = out.numel();
  if (!(out.is_contiguous() && a.is_contiguous() && b.is_contiguous() && a.numel() == n && b.numel() == n))
    return binary_loop_strided<T>(out, a, b, fn);
  T* o = data_of<T>(out);
  const T* x = data_of<T>(a);
  const T* y = data_of<T>(b);
  if (n <= kElementwiseGrain) [[likely]] return binary_span(o, x, y, 0, n, fn);
  binary_span_threaded(o, x, y, n, fn);
}

// binary_loop over `a` and `b` converted to out's dtype where theirs differs (type promotion). When
// the dtypes agree, the common case, no conversion object is made at all.
template <typename T, typename Fn>
void promoting_binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, const Fn& fn) {
  if (a.dtype() == out.dtype() && b.dtype() == out.dtype()) [[likely]] return binary_loop<T>(out, a, b, fn);
  binary_loop<T>(out, Operand::in_dtype(a, out.dtype()), Operand::in_dtype(b, out.dtype()), fn);
}

// PyTorch's rules for an in-place binary op writing self (ops/native/pointwise_ops.cpp): no internal or
// partial overlap, the promoted dtype castable to self's, and the broadcast shape self's own.
void check_inplace(const Tensor& self, const Tensor& other);

// Copies src (broadcast to dst's shape) into dst, converting the element type with convert_element
// (Note [Float to integer conversion saturates to INT64_MIN]): copy_'s and _to_copy's kernel.
void copy_elements(const Tensor& dst, const Tensor& src);

// Writes `value`, converted to t's dtype, into every element of t: fill_'s kernel.
void fill_scalar(const Tensor& t, const Scalar& value);

}  // namespace strata::ops
