// nn/safetensors_load.cpp: load_safetensors and load_safetensors_from_bytes: the header parsed and
// checked within limits, each tensor's entry validated against the data that is there, and the file
// mapped so that aligned tensors use it in place. Writing a file is safetensors_save.cpp's.
#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/shape.h"
#include "core/storage.h"
#include "core/tensor_impl.h"
#include "core/util/error.h"
#include "nn/safetensors_dtypes.h"

namespace strata {

namespace {

using Json = nlohmann::json;
using safetensors::DtypeName;
using safetensors::kDtypes;
using safetensors::kForeignDtypes;

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

// Note [Loading maps the file]
// The file is mapped private and writable: tensors may be modified in place like any other, the
// pages they write are copied by the kernel and the file never changes. Each tensor whose data is
// aligned for its element type (always, for files the crate or strata writes: the header is padded
// to 8 bytes and tensors are sorted by descending alignment) wraps its bytes in place with a storage
// of its own whose deleter drops one reference to the mapping; the mapping is unmapped with the last
// tensor. Misaligned data, and all data on a big-endian machine, is copied.
//
// Note [A mapping shows later writes to the file]
// Private means that the tensors' writes do not reach the file, not that the file's later writes do
// not reach the tensors: a page that no tensor has written is the file's page, so another process
// rewriting the file in place changes the loaded tensors (PyTorch's torch.load(mmap=True) behaves
// the same). Replacing the file (a rename, as save_safetensors does) does not: the mapping keeps the
// old file. For a load that owns its bytes, SafetensorsLoadOptions{.mmap = false} reads the file
// into memory of its own (read(), not a mapping) and the tensors wrap that buffer the same way.
struct Mapping {
  void* address;
  std::size_t length;
  std::atomic<std::size_t> references;
  bool heap = false;  // a buffer from aligned_alloc (the copying load), not a mapping
};

void release_mapping(void*, void* context) {
  auto* mapping = static_cast<Mapping*>(context);
  if (mapping->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (mapping->heap) std::free(mapping->address);
    else munmap(mapping->address, mapping->length);
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
  // `what` is the message, or a function making it: messages about one entry are made only on failure
  // (Note [Parsing the header in linear time]).
  template <typename Message>
  void check(bool ok, Message&& what) const {
    if (ok) [[likely]] return;
    if constexpr (std::is_invocable_v<Message>) fail(what());
    else fail(what);
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

// Note [Parsing the header in linear time]
// The header is parsed by a SAX handler that builds the JSON value itself, refusing a duplicate key
// in any object (one map lookup, when the key is inserted) and nesting deeper than kMaxHeaderDepth
// (at the container's start), and stopping at the first fault. nlohmann's callback parser would do
// the same checks, but after each closed object it scans its parent for values the callback
// discarded: one scan of the whole header object per tensor entry, quadratic in their number
// (10 s for 40,000 entries). Here each byte is read once and each key is inserted once.
class HeaderParser {
 public:
  Json root;
  std::string problem;  // why parsing stopped, if it did

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(Json::number_integer_t value) { return put(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return put(value); }
  bool number_float(Json::number_float_t value, const std::string&) { return put(value); }
  bool string(std::string& value) { return put(std::move(value)); }
  bool binary(Json::binary_t& value) { return put(std::move(value)); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& key) {
    auto [it, inserted] = open_.back()->get_ref<Json::object_t&>().emplace(key, nullptr);
    if (!inserted) problem = "duplicate key '" + key + "' in the header";
    next_ = &it->second;
    return inserted;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    problem = std::string("the header is not valid JSON: ") + e.what();
    return false;
  }

 private:
  std::vector<Json*> open_;  // the containers being filled, outermost first (addresses are stable)
  Json* next_ = nullptr;     // the value the last key names

  Json* slot() {
    if (open_.empty()) return &root;
    Json& top = *open_.back();
    if (!top.is_array()) return next_;
    top.push_back(nullptr);
    return &top.back();
  }
  template <typename Value>
  bool put(Value&& value) {
    *slot() = Json(std::forward<Value>(value));
    return true;
  }
  bool open(Json empty) {
    if (open_.size() >= static_cast<std::size_t>(kMaxHeaderDepth)) {
      problem = "the header nests deeper than a safetensors header does (" + std::to_string(kMaxHeaderDepth) + " levels)";
      return false;
    }
    Json* container = slot();
    *container = std::move(empty);
    open_.push_back(container);
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
};

Json parse_header(const Loader& loader, std::string_view text) {
  HeaderParser parser;
  const bool parsed = Json::sax_parse(text.begin(), text.end(), &parser);
  loader.check(parsed && parser.problem.empty(), parser.problem.empty() ? "the header is not valid JSON" : parser.problem);
  loader.check(parser.root.is_object(), "the header is " + describe(parser.root) + ", expected a JSON object");
  return std::move(parser.root);
}

template <typename What>
std::uint64_t read_uint(const Loader& loader, const Json& value, What what) {
  const bool ok = value.is_number_unsigned() && value.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max());
  loader.check(ok, [&] { return what() + " must be an integer from 0 to 2^63-1, got " + value.dump(); });
  return value.get<std::uint64_t>();
}

Entry read_entry(const Loader& loader, const std::string& name, const Json& info) {
  const auto where = [&] { return "tensor '" + name + "'"; };
  loader.check(info.is_object(), [&] { return where() + " is " + describe(info) + ", expected an object with dtype, shape and data_offsets"; });
  for (const char* field : {"dtype", "shape", "data_offsets"})
    loader.check(info.contains(field), [&] { return where() + " has no " + field; });
  const Json& dtype = info["dtype"];
  loader.check(dtype.is_string(), [&] { return where() + ": dtype is " + describe(dtype) + ", expected a string"; });
  const std::string& dtype_text = dtype.get_ref<const std::string&>();
  Entry entry{name, ScalarType::Float32, {}, 0, 0};
  bool known = false;
  for (const DtypeName& d : kDtypes)
    if (dtype_text == d.name) entry.dtype = d.type, known = true;
  if (!known) {
    for (const char* foreign : kForeignDtypes)
      loader.check(dtype_text != foreign, [&] {
        return where() + " has dtype " + dtype_text + ", which strata does not support (F32, F64, F16, BF16, I64, I8, F8_E4M3, BOOL)";
      });
    loader.fail(where() + " has unknown dtype " + dtype.dump());
  }
  const Json& shape = info["shape"];
  loader.check(shape.is_array(), [&] { return where() + ": shape is " + describe(shape) + ", expected an array"; });
  // The product of the sizes, and of the sizes with 0 counted as 1 (the span the strides cover: it
  // must fit int64 even when the tensor is empty).
  std::uint64_t numel = 1, span = 1;
  bool overflow = false;
  for (const Json& size : shape) {
    const std::uint64_t s = read_uint(loader, size, [&] { return where() + ": each size in shape"; });
    entry.sizes.push_back(static_cast<std::int64_t>(s));
    overflow = overflow || __builtin_mul_overflow(numel, s, &numel) || __builtin_mul_overflow(span, std::max<std::uint64_t>(s, 1), &span);
  }
  std::uint64_t nbytes = 0, span_bytes = 0;
  overflow = overflow || __builtin_mul_overflow(numel, element_size(entry.dtype), &nbytes) ||
             __builtin_mul_overflow(span, element_size(entry.dtype), &span_bytes) ||
             span_bytes > std::uint64_t(std::numeric_limits<std::int64_t>::max());
  loader.check(!overflow, [&] { return where() + ": shape " + shape.dump() + " is too large: its bytes or strides exceed 2^63-1"; });
  const Json& offsets = info["data_offsets"];
  loader.check(offsets.is_array() && offsets.size() == 2,
               [&] { return where() + ": data_offsets is " + offsets.dump() + ", expected [begin, end]"; });
  entry.begin = read_uint(loader, offsets[0], [&] { return where() + ": data_offsets[0]"; });
  entry.end = read_uint(loader, offsets[1], [&] { return where() + ": data_offsets[1]"; });
  loader.check(entry.begin <= entry.end, [&] { return where() + ": data_offsets " + offsets.dump() + " end before they begin"; });
  loader.check(entry.end - entry.begin == nbytes, [&] {
    return where() + ": shape " + shape.dump() + " of " + dtype_text + " is " + std::to_string(nbytes) +
           " bytes, but data_offsets " + offsets.dump() + " hold " + std::to_string(entry.end - entry.begin);
  });
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
    return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), 0, entry.sizes, strides, entry.dtype,
                                                 Device::CPU));
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
    const auto offsets = [&] { return "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]"; };
    loader.check(entry.end <= data_bytes, [&] {
      return "tensor '" + entry.name + "': data_offsets " + offsets() + " run past the end of the data (" +
             std::to_string(data_bytes) + " bytes): the file is truncated or the offsets are wrong";
    });
    loader.check(entry.begin >= covered, [&] {
      return "tensor '" + entry.name + "': data_offsets " + offsets() + " overlap the previous tensor's data, which ends at " +
             std::to_string(covered);
    });
    loader.check(entry.begin == covered, [&] {
      return "tensor '" + entry.name + "': data_offsets " + offsets() + " leave a gap of " + std::to_string(entry.begin - covered) +
             " bytes after offset " + std::to_string(covered);
    });
    covered = entry.end;
  }
  loader.check(covered == data_bytes, "the tensors hold " + std::to_string(covered) + " bytes of data, but the file has " +
                                          std::to_string(data_bytes) + " after the header");
  const unsigned char* data = bytes + 8 + header_bytes;
  for (const Entry& entry : entries) file.tensors.emplace(entry.name, make_loaded_tensor(entry, data, mapping));
  return file;
}

}  // namespace

SafetensorsFile load_safetensors_from_bytes(std::string_view bytes, const std::string& label) {
  const Loader loader{label};
  return parse(loader, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), nullptr);
}

namespace {

// The file's bytes read into an aligned buffer of their own (Note [A mapping shows later writes to
// the file]): as many as there are, which parse() checks like any others.
Mapping* read_file(const Loader& loader, int fd, std::size_t size) {
  constexpr std::size_t kAlignment = 64;
  const std::size_t capacity = (size + kAlignment - 1) / kAlignment * kAlignment;
  void* buffer = capacity >= size ? std::aligned_alloc(kAlignment, capacity) : nullptr;
  if (!buffer) loader.fail("cannot allocate " + std::to_string(size) + " bytes to copy the file");
  auto* bytes = static_cast<unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, bytes + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      std::free(buffer);
      loader.fail(std::string("cannot read: ") + std::strerror(err));
    }
    if (n == 0) break;  // shorter than when it was opened
    done += static_cast<std::size_t>(n);
  }
  return new Mapping{buffer, done, 1, true};
}

}  // namespace

SafetensorsFile load_safetensors(const std::string& path, const SafetensorsLoadOptions& options) {
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
  MappingReference reference;
  if (!options.mmap) {
    try {
      reference.mapping = read_file(loader, fd, size);
    } catch (...) {
      close(fd);
      throw;
    }
    close(fd);
  } else {
    void* address = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    close(fd);
    if (address == MAP_FAILED) loader.fail(std::string("cannot map: ") + std::strerror(map_errno));
    reference.mapping = new Mapping{address, size, 1};
  }
  const Mapping& m = *reference.mapping;
  return parse(loader, static_cast<const unsigned char*>(m.address), m.length, reference.mapping);
}

}  // namespace strata
