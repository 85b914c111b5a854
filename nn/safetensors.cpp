// nn/safetensors.cpp: the safetensors writer (the crate's layout, byte for byte) and the validating,
// mapping loader.
#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/shape.h"
#include "core/storage.h"
#include "core/tensor_impl.h"
#include "io/atomic_file.h"

namespace strata {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Note [Limits of the safetensors loader]
// Everything the loader allocates is bounded by what it has checked. The header length is checked
// against the file's size and against the crate's own limit (100,000,000 bytes) before any of the
// header is parsed, so a header of several GiB is refused without touching it; the JSON may nest no
// deeper than a valid header does (object, tensor entry, shape), which also bounds the parser's and
// the destructor's work per value; and each tensor's bytes are checked against the data that is
// really there (shape times element size equals its data_offsets span, the spans tile the data from
// 0 to its end, in order, without overlap or gap) before a byte of it is read. Like the crate, the
// loader refuses trailing bytes after the last tensor, and ignores unknown fields of an entry.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr int kMaxHeaderDepth = 3;

struct DtypeName {
  const char* name;
  ScalarType type;
};
// In the crate's Dtype order (ascending alignment): the writer sorts by it, descending.
constexpr DtypeName kDtypes[] = {{"BOOL", ScalarType::Bool},       {"I8", ScalarType::Int8},
                                 {"F8_E4M3", ScalarType::Float8_e4m3fn}, {"F32", ScalarType::Float32},
                                 {"F64", ScalarType::Float64},     {"I64", ScalarType::Int64}};
// Dtypes of the format that strata has no element type for.
constexpr const char* kForeignDtypes[] = {"F4", "F6_E2M3", "F6_E3M2", "U8", "F8_E5M2", "F8_E8M0", "I16", "U16", "F16", "BF16", "I32", "U32", "C64", "U64"};

int dtype_rank(ScalarType t) {
  for (int i = 0; i < static_cast<int>(std::size(kDtypes)); ++i)
    if (kDtypes[i].type == t) return i;
  STRATA_INTERNAL_ASSERT(false, "no safetensors dtype for ", dtype_name(t));
  return 0;
}

// Note [Loading maps the file]
// The file is mapped private and writable: tensors may be modified in place like any other, the
// pages they write are copied by the kernel and the file never changes. Each tensor whose data is
// aligned for its element type (always, for files the crate or strata writes: the header is padded
// to 8 bytes and tensors are sorted by descending alignment) wraps its bytes in place with a storage
// of its own whose deleter drops one reference to the mapping; the mapping is unmapped with the last
// tensor. Misaligned data, and all data on a big-endian machine, is copied.
struct Mapping {
  void* address;
  std::size_t length;
  std::atomic<std::size_t> references;
};

void release_mapping(void*, void* context) {
  auto* mapping = static_cast<Mapping*>(context);
  if (mapping->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    munmap(mapping->address, mapping->length);
    delete mapping;
  }
}

struct MappingReference {  // the loader's own reference, dropped however it leaves
  Mapping* mapping = nullptr;
  ~MappingReference() {
    if (mapping) release_mapping(nullptr, mapping);
  }
};

struct Entry {
  std::string name;
  ScalarType dtype;
  DimVector sizes;
  std::uint64_t begin;
  std::uint64_t end;
};

struct Loader {
  const std::string& label;
  [[noreturn]] void fail(const std::string& what) const {
    detail::throw_error(detail::str_cat("load_safetensors: '", label, "': ", what));
  }
  void check(bool ok, const std::string& what) const {
    if (!ok) [[unlikely]] fail(what);
  }
};

std::string describe(const Json& value) {
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  if (value.is_boolean()) return "a boolean";
  if (value.is_null()) return "null";
  return "a number";
}

// Parses the header, refusing duplicate keys in any object and nesting deeper than kMaxHeaderDepth.
Json parse_header(const Loader& loader, std::string_view text) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string problem;
  const Json::parser_callback_t callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (!problem.empty()) return false;
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxHeaderDepth) {
          problem = "the header nests deeper than a safetensors header does (" + std::to_string(kMaxHeaderDepth) + " levels)";
          return false;
        }
        if (event == Json::parse_event_t::object_start) keys.emplace_back();
        return true;
      case Json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        return true;
      case Json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!keys.empty() && !keys.back().insert(key).second) {
          problem = "duplicate key '" + key + "' in the header";
          return false;
        }
        return true;
      }
      default:
        return true;
    }
  };
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::exception& e) {
    if (problem.empty()) loader.fail(std::string("the header is not valid JSON: ") + e.what());
  }
  loader.check(problem.empty(), problem);
  loader.check(header.is_object(), "the header is " + describe(header) + ", expected a JSON object");
  return header;
}

std::uint64_t read_uint(const Loader& loader, const Json& value, const std::string& what) {
  loader.check(value.is_number_unsigned() && value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()),
               what + " must be an integer from 0 to 2^63-1, got " + value.dump());
  return value.get<std::uint64_t>();
}

Entry read_entry(const Loader& loader, const std::string& name, const Json& info) {
  const std::string where = "tensor '" + name + "'";
  loader.check(info.is_object(), where + " is " + describe(info) + ", expected an object with dtype, shape and data_offsets");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    loader.check(info.contains(field), where + " has no " + field);
  const Json& dtype = info["dtype"];
  loader.check(dtype.is_string(), where + ": dtype is " + describe(dtype) + ", expected a string");
  const std::string& dtype_text = dtype.get_ref<const std::string&>();
  Entry entry{name, ScalarType::Float32, {}, 0, 0};
  bool known = false;
  for (const DtypeName& d : kDtypes)
    if (dtype_text == d.name) entry.dtype = d.type, known = true;
  if (!known) {
    for (const char* foreign : kForeignDtypes)
      loader.check(dtype_text != foreign, where + " has dtype " + dtype_text + ", which strata does not support (F32, F64, I64, I8, F8_E4M3, BOOL)");
    loader.fail(where + " has unknown dtype " + dtype.dump());
  }
  const Json& shape = info["shape"];
  loader.check(shape.is_array(), where + ": shape is " + describe(shape) + ", expected an array");
  // The product of the sizes, and of the sizes with 0 counted as 1 (the span the strides cover: it
  // must fit int64 even when the tensor is empty).
  std::uint64_t numel = 1, span = 1;
  bool overflow = false;
  for (const Json& size : shape) {
    const std::uint64_t s = read_uint(loader, size, where + ": each size in shape");
    entry.sizes.push_back(static_cast<std::int64_t>(s));
    overflow = overflow || __builtin_mul_overflow(numel, s, &numel) || __builtin_mul_overflow(span, std::max<std::uint64_t>(s, 1), &span);
  }
  std::uint64_t nbytes = 0, span_bytes = 0;
  overflow = overflow || __builtin_mul_overflow(numel, element_size(entry.dtype), &nbytes) ||
             __builtin_mul_overflow(span, element_size(entry.dtype), &span_bytes) ||
             span_bytes > std::uint64_t(std::numeric_limits<std::int64_t>::max());
  loader.check(!overflow, where + ": shape " + shape.dump() + " is too large: its bytes or strides exceed 2^63-1");
  const Json& offsets = info["data_offsets"];
  loader.check(offsets.is_array() && offsets.size() == 2,
               where + ": data_offsets is " + offsets.dump() + ", expected [begin, end]");
  entry.begin = read_uint(loader, offsets[0], where + ": data_offsets[0]");
  entry.end = read_uint(loader, offsets[1], where + ": data_offsets[1]");
  loader.check(entry.begin <= entry.end, where + ": data_offsets " + offsets.dump() + " end before they begin");
  loader.check(entry.end - entry.begin == nbytes,
               where + ": shape " + shape.dump() + " of " + dtype_text + " is " + std::to_string(nbytes) +
                   " bytes, but data_offsets " + offsets.dump() + " hold " + std::to_string(entry.end - entry.begin));
  return entry;
}

Tensor make_loaded_tensor(const Entry& entry, const unsigned char* data, Mapping* mapping) {
  const std::size_t nbytes = entry.end - entry.begin;
  const unsigned char* bytes = data + entry.begin;
  DimVector strides = contiguous_strides(entry.sizes);  // fits: read_entry checked the span
  const std::size_t esize = element_size(entry.dtype);
  const bool in_place = mapping && nbytes > 0 && std::endian::native == std::endian::little &&
                        reinterpret_cast<std::uintptr_t>(bytes) % esize == 0;
  if (in_place) {
    mapping->references.fetch_add(1, std::memory_order_relaxed);
    Storage storage = StorageImpl::wrap(const_cast<unsigned char*>(bytes), nbytes, release_mapping, mapping);
    return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), 0, DimVector(entry.sizes), std::move(strides),
                                                 entry.dtype, Device::CPU));
  }
  Tensor tensor(TensorImpl::make_contiguous(entry.sizes, entry.dtype, Device::CPU));
  if (nbytes == 0) return tensor;
  auto* out = static_cast<unsigned char*>(tensor.raw_data());
  std::memcpy(out, bytes, nbytes);
  if constexpr (std::endian::native != std::endian::little)
    for (std::size_t i = 0; i < nbytes; i += esize) std::reverse(out + i, out + i + esize);
  return tensor;
}

SafetensorsFile parse(const Loader& loader, const unsigned char* bytes, std::size_t size, Mapping* mapping) {
  loader.check(size >= 8, "the file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | bytes[i];
  loader.check(header_bytes <= size - 8, "the header length " + std::to_string(header_bytes) +
                                             " runs past the end of the file (" + std::to_string(size) + " bytes)");
  loader.check(header_bytes <= kMaxHeaderBytes, "the header length " + std::to_string(header_bytes) +
                                                    " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  loader.check(header_bytes > 0 && bytes[8] == '{', "the header does not start with '{'");
  const Json header = parse_header(loader, std::string_view(reinterpret_cast<const char*>(bytes) + 8, header_bytes));

  SafetensorsFile file;
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      loader.check(info.is_object(), "__metadata__ is " + describe(info) + ", expected an object of strings");
      for (const auto& [key, value] : info.items()) {
        loader.check(value.is_string(), "__metadata__ must map strings to strings, but '" + key + "' is " + describe(value));
        file.metadata.emplace(key, value.get<std::string>());
      }
      continue;
    }
    entries.push_back(read_entry(loader, name, info));
  }
  const std::uint64_t data_bytes = size - 8 - header_bytes;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t covered = 0;
  for (const Entry& entry : entries) {
    const std::string offsets = "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
    loader.check(entry.end <= data_bytes, "tensor '" + entry.name + "': data_offsets " + offsets + " run past the end of the data (" +
                                              std::to_string(data_bytes) + " bytes): the file is truncated or the offsets are wrong");
    loader.check(entry.begin >= covered, "tensor '" + entry.name + "': data_offsets " + offsets +
                                             " overlap the previous tensor's data, which ends at " + std::to_string(covered));
    loader.check(entry.begin == covered, "tensor '" + entry.name + "': data_offsets " + offsets + " leave a gap of " +
                                             std::to_string(entry.begin - covered) + " bytes after offset " + std::to_string(covered));
    covered = entry.end;
  }
  loader.check(covered == data_bytes, "the tensors hold " + std::to_string(covered) + " bytes of data, but the file has " +
                                          std::to_string(data_bytes) + " after the header");
  const unsigned char* data = bytes + 8 + header_bytes;
  for (const Entry& entry : entries) file.tensors.emplace(entry.name, make_loaded_tensor(entry, data, mapping));
  return file;
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

SafetensorsFile load_safetensors_from_bytes(std::string_view bytes, const std::string& label) {
  const Loader loader{label};
  return parse(loader, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), nullptr);
}

SafetensorsFile load_safetensors(const std::string& path) {
  const Loader loader{path};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) loader.fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  const int stat_result = fstat(fd, &st);
  const int stat_errno = errno;
  if (stat_result != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    loader.fail(stat_result != 0 ? std::string("cannot stat: ") + std::strerror(stat_errno) : std::string("not a regular file"));
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size < 8) {
    close(fd);
    loader.fail("the file is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  }
  void* address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (address == MAP_FAILED) loader.fail(std::string("cannot map: ") + std::strerror(map_errno));
  MappingReference reference{new Mapping{address, size, 1}};
  return parse(loader, static_cast<const unsigned char*>(address), size, reference.mapping);
}

}  // namespace strata
