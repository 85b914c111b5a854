// nn/safetensors_save.cpp: serialize_safetensors and save_safetensors: tensors laid out, and the
// header written, as the safetensors crate does (Note [safetensors files are written as the crate
// writes them]). Reading a file is safetensors_load.cpp's.
#include "nn/safetensors.h"

#include <algorithm>
#include <bit>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor_impl.h"
#include "core/util/error.h"
#include "io/atomic_file.h"
#include "nn/safetensors_dtypes.h"

namespace strata {

namespace {

using OrderedJson = nlohmann::ordered_json;
using safetensors::kDtypes;

int dtype_rank(ScalarType t) {
  for (int i = 0; i < static_cast<int>(std::size(kDtypes)); ++i)
    if (kDtypes[i].type == t) return i;
  STRATA_INTERNAL_ASSERT(false, "no safetensors dtype for ", dtype_name(t));
  return 0;
}

// The bytes of a one-byte-element tensor in row-major order, through its strides.
void append_strided_bytes(std::string& out, const Tensor& t) {
  const auto* base = static_cast<const char*>(t.raw_data());
  DimVector index(static_cast<std::size_t>(t.dim()), 0);
  for (std::int64_t n = 0; n < t.numel(); ++n) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * t.strides()[d];
    out.push_back(base[offset]);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
}

// A tensor's elements in row-major order as the format stores them (bool as bytes 0 and 1).
void append_data(std::string& out, const Tensor& t) {
  const std::size_t start = out.size();
  const std::size_t nbytes = static_cast<std::size_t>(t.numel()) * element_size(t.dtype());
  if (t.is_contiguous()) {
    out.append(static_cast<const char*>(t.raw_data()), nbytes);
  } else {
    switch (t.dtype()) {
      case ScalarType::Bool: for (bool b : t.to_vector<bool>()) out.push_back(static_cast<char>(b)); break;
      case ScalarType::Int64: { auto v = t.to_vector<std::int64_t>(); out.append(reinterpret_cast<const char*>(v.data()), nbytes); break; }
      case ScalarType::Float32: { auto v = t.to_vector<float>(); out.append(reinterpret_cast<const char*>(v.data()), nbytes); break; }
      case ScalarType::Float64: { auto v = t.to_vector<double>(); out.append(reinterpret_cast<const char*>(v.data()), nbytes); break; }
      case ScalarType::Int8:
      case ScalarType::Float8_e4m3fn: append_strided_bytes(out, t); break;
    }
  }
  if (t.dtype() == ScalarType::Bool)  // Note [Bool elements are loaded as bytes]: any nonzero byte is true
    for (std::size_t i = start; i < out.size(); ++i) out[i] = out[i] != 0;
  if constexpr (std::endian::native != std::endian::little) {
    const std::size_t esize = element_size(t.dtype());
    for (std::size_t i = start; i < out.size(); i += esize) std::reverse(out.begin() + i, out.begin() + i + esize);
  }
}

}  // namespace

// Note [safetensors files are written as the crate writes them]
// The crate's `prepare` sorts tensors by descending dtype alignment (its Dtype enum order: I64, F64,
// F32, F8_E4M3, I8, BOOL among strata's), then by name bytewise; lays their data out in that order from offset 0;
// serialises the header compactly with "__metadata__" first and each entry as dtype, shape,
// data_offsets; and pads it with spaces to a multiple of 8. strata does the same, so a file strata
// writes is byte-identical to the crate's for the same tensors (the crate keeps metadata in a hash
// map, so its order is arbitrary beyond one key; strata writes metadata keys sorted). The loader needs
// none of this: it takes any valid order.
std::string serialize_safetensors(const TensorDict& tensors, const SafetensorsMetadata& metadata) {
  std::vector<std::pair<const std::string*, const Tensor*>> order;
  for (const auto& entry : tensors) {  // no structured binding: clang 14 cannot capture one in STRATA_CHECK
    const std::string& name = entry.first;
    const Tensor& tensor = entry.second;
    STRATA_CHECK(name != "__metadata__", "save_safetensors: '__metadata__' is reserved and cannot name a tensor");
    STRATA_CHECK(tensor.defined(), "save_safetensors: tensor '", name, "' is undefined");
    STRATA_CHECK(tensor.impl()->has_data() && tensor.device() == Device::CPU,
                 "save_safetensors: tensor '", name, "' has no data (only CPU tensors with storage can be saved)");
    order.emplace_back(&name, &tensor);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return dtype_rank(a.second->dtype()) > dtype_rank(b.second->dtype());
  });
  OrderedJson header = OrderedJson::object();
  if (!metadata.empty()) {
    OrderedJson meta = OrderedJson::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : order) {
    const std::uint64_t nbytes = static_cast<std::uint64_t>(tensor->numel()) * element_size(tensor->dtype());
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = kDtypes[dtype_rank(tensor->dtype())].name;
    entry["shape"] = OrderedJson::array();
    for (std::int64_t s : tensor->sizes()) entry["shape"].push_back(static_cast<std::uint64_t>(s));
    entry["data_offsets"] = {offset, offset + nbytes};
    header[*name] = std::move(entry);
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const OrderedJson::exception& e) {
    detail::throw_error(std::string("save_safetensors: names and metadata must be valid UTF-8: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(static_cast<std::uint64_t>(text.size()) >> (8 * i) & 0xff));
  out += text;
  for (const auto& [name, tensor] : order) append_data(out, *tensor);
  return out;
}

void save_safetensors(const std::string& path, const TensorDict& tensors, const SafetensorsMetadata& metadata) {
  tracer::AtomicFile file(path, "save_safetensors");  // fails early on an unwritable path
  file.commit(serialize_safetensors(tensors, metadata));
}

}  // namespace strata
