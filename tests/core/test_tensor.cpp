// tests/core/test_tensor.cpp: tensor handles, storage sharing, geometry, data access, printing.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstring>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include "core/generator.h"
#include "core/util/small_object_pool.h"
#include "core/tensor_format.h"
#include "tests/test_helpers.h"

namespace test_tensor {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("a tensor is a cheap handle; copies share the impl") {
  const Tensor a = tensor<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = a;
  CHECK(b.is_same(a));
  CHECK(a.use_count() == 2);
  CHECK(sizeof(Tensor) == sizeof(void*));
  CHECK(a.dim() == 2);
  CHECK(a.numel() == 4);
  CHECK(a.size(-1) == 2);
  CHECK(a.stride(0) == 2);
  CHECK(a.dtype() == ScalarType::Float32);
  CHECK(a.device() == Device::CPU);
  CHECK(a.is_contiguous());
  CHECK(a.key_set() == DispatchKeySet(DispatchKey::CPU));
}

TEST_CASE("storage is 64-byte aligned and views share it") {
  const Tensor a = tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(reinterpret_cast<std::uintptr_t>(a.impl()->storage()->data()) % 64 == 0);
  const Tensor at = strata::detail::make_view(a, {3, 2}, {1, 3}, 0);
  CHECK(at.impl()->storage().get() == a.impl()->storage().get());
  CHECK_FALSE(at.is_contiguous());
  CHECK(at.is_non_overlapping_and_dense());
  CHECK(at.to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});
  const Tensor col = strata::detail::make_view(a, {2}, {3}, 1);
  CHECK(col.to_vector<double>() == std::vector<double>{2, 5});
  CHECK_FALSE(col.is_non_overlapping_and_dense());
  const Tensor expanded = strata::detail::make_view(a, {4, 3}, {0, 1}, 0);
  CHECK_FALSE(expanded.is_non_overlapping_and_dense());
  // Without elements a tensor is contiguous whatever its strides (PyTorch's compute_contiguous).
  CHECK(strata::detail::make_view(a, {0, 3}, {1, 0}, 0).is_contiguous());
  CHECK(strata::detail::make_view(a, {3, 0}, {0, 7}, 0).is_contiguous());
}

TEST_CASE("geometry past five dimensions (kept on the heap) is built, copied and transposed like inline geometry") {
  // Note [Sizes and strides share one buffer]: five dimensions fit inline, six do not.
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{2, 1, 3, 1, 2}, std::vector<std::int64_t>{2, 1, 3, 1, 2, 2}}) {
    CAPTURE(shape.size());
    const Tensor a(TensorImpl::make_contiguous(shape, ScalarType::Float32, Device::CPU));
    CHECK(testing::sizes_of(a) == shape);
    const DimVector expected_strides = contiguous_strides(shape);
    CHECK(testing::strides_of(a) == std::vector<std::int64_t>(expected_strides.begin(), expected_strides.end()));
    const Tensor d = strata::detail::make_alias(a);  // copies a's geometry
    CHECK(testing::sizes_of(d) == shape);
    CHECK(testing::strides_of(d) == testing::strides_of(a));
    const Tensor t = strata::detail::make_transposed(a, 0, shape.size() - 1);
    std::vector<std::int64_t> swapped_sizes = shape, swapped_strides = testing::strides_of(a);
    std::swap(swapped_sizes.front(), swapped_sizes.back());
    std::swap(swapped_strides.front(), swapped_strides.back());
    CHECK(testing::sizes_of(t) == swapped_sizes);
    CHECK(testing::strides_of(t) == swapped_strides);
    CHECK(testing::sizes_of(a) == shape);  // the source is untouched
    const Tensor v = strata::detail::make_view(a, shape, testing::strides_of(a), 0);  // the general constructor
    CHECK(testing::strides_of(v) == testing::strides_of(a));
    CHECK(v.is_contiguous());
  }
}

namespace {
// The pool is off under AddressSanitizer; a small block coming straight back shows it is on.
bool pool_is_on() {
  void* small = pool::allocate(64);
  pool::deallocate(small, 64);
  void* small_again = pool::allocate(64);
  pool::deallocate(small_again, 64);
  return small_again == small;
}
}  // namespace

TEST_CASE("a freed large block is handed back for a request of the same whole pages") {
  const bool pooled = pool_is_on();

  void* a = pool::allocate(300000);
  pool::deallocate(a, 300000);
  void* b = pool::allocate(300001);  // 74 pages, as for 300000
  if (pooled) CHECK(b == a);
  pool::deallocate(b, 300001);
  void* c = pool::allocate(400000);  // other pages: b stays in the cache
  if (pooled) CHECK(c != b);
  pool::deallocate(c, 400000);
}

TEST_CASE("a 64 MiB tensor's block is recycled: a loop over such tensors does not fault in fresh pages") {
  const bool pooled = pool_is_on();
  const std::int64_t n = std::int64_t{16} << 20;  // 64 MiB of float32, plus the block's header
  auto fill_one = [&] {
    const Tensor t = detail::make_contiguous_tensor({n}, ScalarType::Float32, Device::CPU);
    std::memset(t.impl()->data(), 1, static_cast<std::size_t>(n) * sizeof(float));
  };
  auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  fill_one();  // faults its pages in once
  const long before = minor_faults();
  fill_one();
  // A fresh mapping would take one fault per 4 KiB page, 16384 of them.
  if (pooled) CHECK(minor_faults() - before < 1000);
  pool::release_cached_blocks();
}

TEST_CASE("pooled blocks cross threads and a thread's cache is given back when it ends" * doctest::test_suite("threads")) {
  void* from_main = pool::allocate(200);
  void* large_from_main = pool::allocate(300000);
  std::thread worker([&] {
    // Frees blocks of another thread, caches its own, and exits with both caches full.
    pool::deallocate(from_main, 200);
    pool::deallocate(large_from_main, 300000);
    std::vector<void*> blocks;
    for (int i = 0; i < 100; ++i) blocks.push_back(pool::allocate(100));
    for (void* b : blocks) pool::deallocate(b, 100);
    const Tensor t = detail::make_contiguous_tensor({300, 300}, ScalarType::Float32, Device::CPU);  // a large block
    CHECK(t.numel() == 90000);  // cached when t dies
  });
  worker.join();
  pool::release_cached_blocks();  // this thread's cache, emptied; the pool keeps working after it
  const Tensor after = detail::make_contiguous_tensor({300, 300}, ScalarType::Float32, Device::CPU);
  static_cast<float*>(after.impl()->data())[89999] = 1.0f;  // the main thread's pool still works
  CHECK(after.numel() == 90000);
}

TEST_CASE("item and typed data access check what they are given") {
  CHECK(scalar_tensor(2.5, ScalarType::Float64).item<double>() == 2.5);
  CHECK(tensor<std::int64_t>({7}).item().to_int() == 7);
  CHECK_THROWS_WITH_AS(tensor<float>({1, 2}).item(), "a Tensor with 2 elements cannot be converted to Scalar", Error);
  CHECK_THROWS_WITH_AS(tensor<float>({1}).data_ptr<double>(), "expected scalar type float64 but found float32", Error);
  const Tensor meta = strata::detail::make_contiguous_tensor({2}, ScalarType::Float32, Device::Meta);
  CHECK_THROWS_WITH_AS(meta.data_ptr<float>(),
                       "Cannot access data pointer of Tensor that doesn't have storage (device meta)", Error);
  CHECK_THROWS_WITH_AS(tensor<float>({1, 2, 3}, {2, 2}), "tensor(): shape [2, 2] needs 4 values but 3 were given", Error);
  CHECK_THROWS_WITH_AS(strata::detail::make_contiguous_tensor({2, -1}, ScalarType::Float32, Device::CPU),
                       "Trying to create tensor with negative dimension -1: [2, -1]", Error);
  CHECK_THROWS_WITH_AS(tensor<float>({1}).size(1), "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
                       Error);
}

TEST_CASE("size and stride check the dimension with PyTorch's wording, 0-d tensors included") {
  const Tensor s = scalar_tensor(1.5, ScalarType::Float32);
  CHECK_THROWS_WITH_AS(s.size(0), doctest::Contains("Dimension specified as 0 but tensor has no dimensions"), Error);
  CHECK_THROWS_WITH_AS(s.stride(-1), doctest::Contains("Dimension specified as -1 but tensor has no dimensions"), Error);
  const Tensor m = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(m.size(-1) == 3);
  CHECK(m.size(-2) == 2);
  CHECK(m.stride(-2) == 3);
  CHECK_THROWS_WITH_AS(m.size(2), doctest::Contains("Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
                       Error);
  CHECK_THROWS_WITH_AS(m.stride(-3),
                       doctest::Contains("Dimension out of range (expected to be in range of [-2, 1], but got -3)"), Error);
  CHECK_THROWS_WITH_AS(m.size(std::numeric_limits<std::int64_t>::min()), doctest::Contains("Dimension out of range"), Error);
}

// Note [An undefined tensor points at a sentinel]: every public accessor of Tensor() answers as
// LibTorch 1.13's at::Tensor() does (checked with libtorch-dev: dim 1, sizes [0], numel 0, ...) or
// raises a strata::Error; none dereferences null. A row per accessor, so a new accessor gets a row.
TEST_CASE("every accessor of an undefined tensor answers as LibTorch's does or raises") {
  const Tensor u;
  auto text = [](const auto& v) {
    std::ostringstream out;
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, IntArrayRef>) out << shape_str(v);
    else out << v;
    return out.str();
  };
  struct Row {
    const char* accessor;
    std::function<std::string()> call;
    const char* expected;  // the answer, or the error's message
  };
  const std::vector<Row> rows = {
      {"defined", [&] { return text(u.defined()); }, "0"},
      {"dim", [&] { return text(u.dim()); }, "1"},
      {"sizes", [&] { return text(u.sizes()); }, "[0]"},
      {"size(0)", [&] { return text(u.size(0)); }, "0"},
      {"size(1)", [&] { return text(u.size(1)); }, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"},
      {"strides", [&] { return text(u.strides()); }, "strides() called on an undefined Tensor"},
      {"stride(0)", [&] { return text(u.stride(0)); }, "strides() called on an undefined Tensor"},
      {"stride(1)", [&] { return text(u.stride(1)); }, "Dimension out of range (expected to be in range of [-1, 0], but got 1)"},
      {"numel", [&] { return text(u.numel()); }, "0"},
      {"dtype", [&] { return text(u.dtype()); }, "dtype() called on an undefined Tensor"},
      {"device", [&] { return text(u.device()); }, "tensor does not have a device"},
      {"storage_offset", [&] { return text(u.storage_offset()); }, "0"},
      {"is_contiguous", [&] { return text(u.is_contiguous()); }, "1"},
      {"is_non_overlapping_and_dense", [&] { return text(u.is_non_overlapping_and_dense()); }, "1"},
      {"is_meta", [&] { return text(u.is_meta()); }, "0"},
      {"key_set", [&] { return text(u.key_set()); }, "[]"},
      {"subclass", [&] { return text(u.subclass() == nullptr); }, "1"},
      {"use_count", [&] { return text(u.use_count()); }, "0"},
      {"is_same", [&] { return text(u.is_same(Tensor())); }, "1"},
      {"has_storage", [&] { return text(u.impl()->has_data()); }, "0"},
      {"data_ptr", [&] { return text(u.data_ptr<float>() == nullptr); }, "cannot access the data of an undefined tensor"},
      {"raw_data", [&] { return text(u.raw_data() == nullptr); }, "cannot access the data of an undefined tensor"},
      {"item", [&] { return text(u.item().to_double()); }, "item() on an undefined tensor"},
      {"item<float>", [&] { return text(u.item<float>()); }, "item() on an undefined tensor"},
      {"to_vector", [&] { return text(u.to_vector<double>().size()); }, "cannot access the data of an undefined tensor"},
      {"requires_grad", [&] { return text(u.requires_grad()); }, "0"},  // PyTorch's answers (LibTorch raises)
      {"is_leaf", [&] { return text(u.is_leaf()); }, "1"},
      {"grad", [&] { return text(u.grad().defined()); }, "0"},
      {"grad_fn", [&] { return text(u.grad_fn() == nullptr); }, "1"},
      {"str", [&] { return u.str(); }, "[ Tensor (undefined) ]"},
      {"operator<<", [&] { return text(u); }, "[ Tensor (undefined) ]"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.accessor);
    std::string got;
    try {
      got = row.call();
    } catch (const Error& e) {
      got = e.what();
    }
    CHECK(got == row.expected);
  }
  // The sentinel has no keys, so the dispatcher never picks a kernel for it, and handles to it do not
  // count references (a copy, a move and a reset all leave it untouched).
  CHECK(u.key_set().empty());
  Tensor copy = u;
  Tensor moved = std::move(copy);
  CHECK(moved.impl() == u.impl());
  CHECK_FALSE(copy.defined());
  CHECK(moved.impl()->use_count() == 0);
  Tensor a = tensor<float>({1});
  a = Tensor();
  CHECK_FALSE(a.defined());
  CHECK(IntrusivePtr<TensorImpl>().get() == u.impl());
}

TEST_CASE("undefined tensors are shared by threads without counting references" * doctest::test_suite("threads")) {
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) {
        std::vector<Tensor> v(8);
        Tensor t = v[0];
        CHECK_FALSE(t.defined());
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(Tensor().impl()->use_count() == 0);
}

TEST_CASE("shape helpers broadcast and wrap as PyTorch does") {
  CHECK(broadcast_shapes(IntArrayRef{8, 1, 3}, IntArrayRef{4, 1}) == DimVector{8, 4, 3});
  CHECK_THROWS_WITH_AS(broadcast_shapes(IntArrayRef{2, 3}, IntArrayRef{4}),
                       "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", Error);
  CHECK(wrap_dim(-1, 3) == 2);
  CHECK(contiguous_strides(IntArrayRef{2, 3, 4}) == DimVector{12, 4, 1});
  CHECK(infer_size(IntArrayRef{-1, 4}, 8) == DimVector{2, 4});
  CHECK_THROWS_WITH_AS(infer_size(IntArrayRef{-1, -1}, 8), "only one dimension can be inferred", Error);
  CHECK_THROWS_WITH_AS(infer_size(IntArrayRef{3, 5}, 16), "shape '[3, 5]' is invalid for input of size 16", Error);
  CHECK_FALSE(view_strides(IntArrayRef{3, 2}, IntArrayRef{1, 3}, IntArrayRef{6}).has_value());
  CHECK(view_strides(IntArrayRef{4, 6}, IntArrayRef{6, 1}, IntArrayRef{2, 2, 6}).value() == DimVector{12, 6, 1});
  // The form given the numel writes the same strides, for 0-d, empty and viewable inputs.
  DimVector out;
  CHECK_FALSE(view_strides(IntArrayRef{3, 2}, IntArrayRef{1, 3}, IntArrayRef{6}, 6, out));
  CHECK((view_strides(IntArrayRef{4, 6}, IntArrayRef{6, 1}, IntArrayRef{2, 2, 6}, 24, out) && out == DimVector{12, 6, 1}));
  CHECK((view_strides(IntArrayRef{}, IntArrayRef{}, IntArrayRef{1, 1}, 1, out) && out == DimVector{1, 1}));
  CHECK((view_strides(IntArrayRef{0, 3}, IntArrayRef{7, 2}, IntArrayRef{0, 3}, 0, out) && out == DimVector{7, 2}));
  CHECK((view_strides(IntArrayRef{0, 3}, IntArrayRef{7, 2}, IntArrayRef{3, 0}, 0, out) && out == DimVector{1, 1}));
}

namespace {
// Golden values are numbers, or the strings "inf", "-inf", "nan" (JSON has no non-finite numbers).
std::vector<double> golden_values(const nlohmann::json& values) {
  std::vector<double> out;
  for (const auto& v : values) out.push_back(v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>());
  return out;
}

// A golden case's tensor: `values` of `dtype` ("float32", "float64", "int64", or "bool" as 0/1) in `shape`.
Tensor golden_tensor(const std::string& dtype, const nlohmann::json& values, IntArrayRef shape) {
  if (dtype == "float32") {
    const std::vector<double> v = golden_values(values);
    return tensor<float>(std::vector<float>(v.begin(), v.end()), shape);
  }
  if (dtype == "float64") return tensor<double>(golden_values(values), shape);
  if (dtype == "int64") return tensor<std::int64_t>(values.get<std::vector<std::int64_t>>(), shape);
  const std::vector<std::int64_t> ints = values;
  Tensor t = strata::detail::make_contiguous_tensor(shape, ScalarType::Bool, Device::CPU);
  for (std::size_t i = 0; i < ints.size(); ++i) t.data_ptr<bool>()[i] = ints[i] != 0;
  return t;
}
}  // namespace

TEST_CASE("tensors print exactly as PyTorch prints them") {
  for (const auto& c : testing::read_golden_json("print_cases.json")) {
    const std::vector<std::int64_t> shape = c["shape"];
    const Tensor t = golden_tensor(c["dtype"], c["values"], shape);
    INFO(c["name"].get<std::string>());
    CHECK(t.str() == c["repr"].get<std::string>());
  }
  const Tensor meta = strata::detail::make_contiguous_tensor({2, 3}, ScalarType::Float64, Device::Meta);
  CHECK(meta.str() == "tensor(..., device='meta', size=(2, 3), dtype=torch.float64)");
}

// Note [Printing reads only the elements it shows]: views of up to 2^40 elements (a small base with
// stride 0 where it is broadcast) print as PyTorch 1.13 prints them, reading only the shown elements.
TEST_CASE("huge expanded views print summarised, as PyTorch prints them") {
  for (const auto& c : testing::read_golden_json("print_summary_torch.json")) {
    INFO(c["name"].get<std::string>());
    const std::vector<std::int64_t> base_shape = c["base_shape"], shape = c["expand"];
    const Tensor base = golden_tensor(c["dtype"], c["base_values"], base_shape);
    DimVector strides(shape.size(), 0);  // expand's: 0 on new and broadcast dimensions
    const std::size_t lead = shape.size() - base_shape.size();
    for (std::size_t d = 0; d < base_shape.size(); ++d)
      if (base_shape[d] != 1) strides[lead + d] = base.strides()[d];
    const Tensor expanded = strata::detail::make_view(base, shape, strides, 0);
    CHECK(expanded.str() == c["repr"].get<std::string>());
  }
}

TEST_CASE("a summary too large to print is an error, not gigabytes of text") {
  // 6^10 elements: no dimension is longer than 6, so the summary would keep every one.
  const Tensor one = tensor<float>({1.0f});
  const std::vector<std::int64_t> shape(10, 6);
  const Tensor expanded = strata::detail::make_view(one, shape, std::vector<std::int64_t>(10, 0), 0);
  CHECK_THROWS_WITH_AS(expanded.str(),
                       "cannot print a tensor of size [6, 6, 6, 6, 6, 6, 6, 6, 6, 6]: its summary (the first and last 3 items "
                       "of each dimension longer than 6) holds more than 16777216 elements",
                       Error);
}

TEST_CASE("a tensor indented past 80 columns prints one element a line, as PyTorch does") {
  std::vector<std::int64_t> shape(77, 1);
  shape.push_back(3);
  const std::string indent = "\n" + std::string(85, ' ');  // PyTorch 1.13's repr of this 78-d tensor
  CHECK(tensor<float>({1, 2, 3}, shape).str() ==
        "tensor(" + std::string(78, '[') + "1.," + indent + "2.," + indent + "3." + std::string(78, ']') + ")");
}

TEST_CASE("the generator reproduces PyTorch's mt19937 stream") {
  Generator g;
  g.manual_seed(0);
  CHECK(g.impl()->random() == 2357136044u);  // torch.Generator().manual_seed(0): first 32-bit draw
  CHECK(g.initial_seed() == 0);
  Generator h;
  CHECK(h.initial_seed() == 67280421310721ULL);
}

}  // namespace test_tensor
