// nn/safetensors_save.cpp: serialize_safetensors and save_safetensors: tensors laid out, and the
// header written, as the safetensors crate does (Note [safetensors files are written as the crate
// writes them]). Reading a file is safetensors_load.cpp's.
#include "nn/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string_view>
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

// Note [Saving with bounded memory]
// save_safetensors streams the file: the header, then each tensor's bytes, written as they are made.
// A contiguous tensor (not bool, on a little-endian machine) is written straight from its storage;
// any other (a view with strides, an expanded one, bool bytes to normalise, bytes to swap) is copied
// element by element, in row-major order, through a buffer of kChunkBytes. Memory is then the header
// and one chunk, whatever the tensors' sizes, and a file too big for its file system or the
// file-size limit is refused from its size before a byte is written (AtomicFile::check_fits). An
// expanded view of a scalar to 2^40 elements is 4 TiB of file and 1 MiB of memory. A file AtomicFile
// writes in place (a hard-linked file, a directory that takes no new file: Note [When the file is
// written in place]) is held until publish up to 64 MiB, so that a failure before then leaves the old
// file intact, and written as it comes past that.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
using Sink = std::function<void(std::string_view)>;

// A tensor's elements in row-major order as the format stores them (bool as bytes 0 and 1, little
// endian), in parts of at most kChunkBytes unless written straight from a contiguous storage.
void write_data(const Tensor& t, const Sink& sink) {
  if (t.numel() == 0) return;
  const std::size_t esize = element_size(t.dtype());
  const bool is_bool = t.dtype() == ScalarType::Bool;
  const auto* base = static_cast<const unsigned char*>(t.raw_data());
  if (t.is_contiguous() && !is_bool && std::endian::native == std::endian::little) {
    sink(std::string_view(reinterpret_cast<const char*>(base), static_cast<std::size_t>(t.numel()) * esize));
    return;
  }
  const std::size_t dims = static_cast<std::size_t>(t.dim());
  const std::int64_t inner = dims ? t.sizes()[dims - 1] : 1;
  const std::int64_t inner_stride = dims ? t.strides()[dims - 1] : 0;
  DimVector index(dims, 0);  // of the row being written; its last entry stays 0
  std::string buffer;
  buffer.reserve(kChunkBytes);
  for (std::int64_t row = 0, rows = t.numel() / inner; row < rows; ++row) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d + 1 < dims; ++d) offset += index[d] * t.strides()[d];
    for (std::int64_t i = 0; i < inner; ++i) {
      const unsigned char* element = base + static_cast<std::size_t>(offset + i * inner_stride) * esize;
      if (is_bool) {  // Note [Bool elements are loaded as bytes]: any nonzero byte is true
        buffer.push_back(static_cast<char>(*element != 0));
      } else if constexpr (std::endian::native == std::endian::little) {
        buffer.append(reinterpret_cast<const char*>(element), esize);
      } else {
        for (std::size_t b = esize; b-- > 0;) buffer.push_back(static_cast<char>(element[b]));
      }
      if (buffer.size() + esize > kChunkBytes) {
        sink(buffer);
        buffer.clear();
      }
    }
    for (std::size_t d = dims > 0 ? dims - 1 : 0; d-- > 0;) {  // the next row: an odometer over all but the last dim
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
  if (!buffer.empty()) sink(buffer);
}

// What a file holds before its data: the tensors in the crate's order (Note [safetensors files are
// written as the crate writes them]), the header with its length, and the data's total size.
struct FileLayout {
  std::vector<const Tensor*> order;
  std::string head;  // the 8-byte length and the padded JSON
  std::uint64_t data_bytes = 0;
  std::uint64_t total_bytes() const { return head.size() + data_bytes; }
};

// Note [safetensors files are written as the crate writes them]
// The crate's `prepare` sorts tensors by descending dtype alignment (its Dtype enum order: I64, F64,
// F32, BF16, F16, F8_E4M3, I8, BOOL among strata's), then by name bytewise; lays their data out in that order from offset 0;
// serialises the header compactly with "__metadata__" first and each entry as dtype, shape,
// data_offsets; and pads it with spaces to a multiple of 8. strata does the same, so a file strata
// writes is byte-identical to the crate's for the same tensors (the crate keeps metadata in a hash
// map, so its order is arbitrary beyond one key; strata writes metadata keys sorted). The loader needs
// none of this: it takes any valid order.
FileLayout layout(const TensorDict& tensors, const SafetensorsMetadata& metadata) {
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
  FileLayout out;
  for (const auto& named : order) {  // no structured binding: STRATA_CHECK below
    const std::string& name = *named.first;
    const Tensor* tensor = named.second;
    std::uint64_t nbytes = 0, end = 0;
    const bool overflow = __builtin_mul_overflow(static_cast<std::uint64_t>(tensor->numel()), element_size(tensor->dtype()), &nbytes) ||
                          __builtin_add_overflow(out.data_bytes, nbytes, &end) || end > (std::uint64_t{1} << 62);
    STRATA_CHECK(!overflow, "save_safetensors: tensor '", name, "' of ", tensor->numel(), " elements makes the file over 2^62 bytes");
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = kDtypes[dtype_rank(tensor->dtype())].name;
    entry["shape"] = OrderedJson::array();
    for (std::int64_t s : tensor->sizes()) entry["shape"].push_back(static_cast<std::uint64_t>(s));
    entry["data_offsets"] = {out.data_bytes, end};
    header[name] = std::move(entry);
    out.data_bytes = end;
    out.order.push_back(tensor);
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const OrderedJson::exception& e) {
    detail::throw_error(std::string("save_safetensors: names and metadata must be valid UTF-8: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  for (int i = 0; i < 8; ++i) out.head.push_back(static_cast<char>(static_cast<std::uint64_t>(text.size()) >> (8 * i) & 0xff));
  out.head += text;
  return out;
}

}  // namespace

std::string serialize_safetensors(const TensorDict& tensors, const SafetensorsMetadata& metadata) {
  const FileLayout file = layout(tensors, metadata);
  STRATA_CHECK(file.total_bytes() <= std::string().max_size(), "serialize_safetensors: the file is ", file.total_bytes(),
               " bytes, more than a string holds (save_safetensors writes it to a file in parts)");
  std::string out;
  out.reserve(static_cast<std::size_t>(file.total_bytes()));
  out += file.head;
  for (const Tensor* tensor : file.order) write_data(*tensor, [&](std::string_view part) { out += part; });
  return out;
}

void save_safetensors(const std::string& path, const TensorDict& tensors, const SafetensorsMetadata& metadata) {
  tracer::AtomicFile file(path, "save_safetensors");  // fails early on an unwritable path
  const FileLayout plan = layout(tensors, metadata);
  file.check_fits(plan.total_bytes());  // Note [Saving with bounded memory]
  file.append(plan.head);
  for (const Tensor* tensor : plan.order) write_data(*tensor, [&](std::string_view part) { file.append(part); });
  file.finish();
  file.publish();
}

}  // namespace strata
