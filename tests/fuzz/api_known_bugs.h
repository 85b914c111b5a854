// tests/fuzz/api_known_bugs.h: the open bugs of issue #14 the API fuzzer already reproduces (each has a
// seed in tests/fuzz/corpus/api/). With STRATA_FUZZ_SKIP_KNOWN_BUGS=1 the fuzzer steps around them
// (skips the call, or keeps the tensor out of its pool) so a run can explore past them; without it, as
// in the corpus replay tests, nothing is skipped. Delete a filter when its fix lands.
#pragma once

#include <string_view>

#include "core/dispatcher.h"
#include "tests/fuzz/api_world.h"

namespace strata::fuzz::known_bugs {

// sum_to(x, shape) with a shape longer than x's dimensions loops ~2^64 times.
bool sum_to_longer_shape(const Tensor& self, IntArrayRef shape);
// A view of a wrapper taken below the interposer is a CPU tensor without storage: data access crashes.
// (In the skip mode the fuzzer also makes no AliasingWrapper: composites take such views themselves.)
bool storage_less_cpu_tensor(const Tensor& t);
// empty() bool tensors hold uninitialised bytes read as bool; zeroes them instead.
void initialise_empty_bool(std::string_view op_name, const Tensor& out);
// NaN, infinity or huge floats converted to int64 (copy_, _to_copy, sum(dtype=int64), to_vector) is UB.
bool float_to_int64(const std::vector<Tensor>& tensors, bool int64_wanted);
// Printing a huge (expanded) view copies every element first.
bool print_huge(const Tensor& t);
// _log_softmax (and its backward) over an empty tensor with huge outer dimensions takes minutes.
bool softmax_over_empty(std::string_view op_name, const std::vector<Tensor>& tensors);
// mul_ on a non-leaf that requires grad, with other not requiring grad, saves self in its own node.
bool mul_inplace_cycle(std::string_view op_name, const std::vector<Tensor>& tensors);

}  // namespace strata::fuzz::known_bugs
