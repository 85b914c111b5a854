// core/ivalue.h: IValue, the boxed value every dispatch step passes around, and Stack, the boxed
// argument stack. A boxed call pushes an op's arguments; the kernel replaces them with its returns.
// Small values live inline; lists, strings and objects are reference counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/intrusive_ptr.h"
#include "core/scalar.h"
#include "core/small_vector.h"
#include "core/tensor.h"

namespace strata {

// Base of reference-counted boxed payloads (lists, strings, generators, custom objects).
class BoxedObject : public RefCounted<BoxedObject> {
 public:
  virtual ~BoxedObject() = default;
};

// A custom class instance passed through ops, like PyTorch's torchbind objects
// (e.g. __torch__.torch.classes.profiler._RecordFunction).
class CustomObject : public BoxedObject {
 public:
  virtual std::string_view type_name() const = 0;
};

class GeneratorImpl;
enum class MemoryFormat : std::uint8_t { Contiguous, Preserve };
enum class Layout : std::uint8_t { Strided };

class IValue {
 public:
  enum class Tag : std::uint8_t {
    None, Tensor, Double, Int, Bool, IntList, TensorList, String, ScalarType, Device, Layout,
    MemoryFormat, Generator, Object
  };

  IValue() : tag_(Tag::None) {}
  IValue(std::nullptr_t) : IValue() {}
  IValue(std::nullopt_t) : IValue() {}
  IValue(Tensor t) : tag_(Tag::Tensor) { new (&p_.tensor) Tensor(std::move(t)); }
  IValue(double v) : tag_(Tag::Double) { p_.d = v; }
  IValue(std::int64_t v) : tag_(Tag::Int) { p_.i = v; }
  IValue(int v) : IValue(static_cast<std::int64_t>(v)) {}
  IValue(bool v) : tag_(Tag::Bool) { p_.b = v; }
  IValue(const Scalar& s);
  IValue(IntArrayRef values);
  IValue(std::vector<Tensor> values);
  IValue(std::string_view s);
  IValue(ScalarType t) : tag_(Tag::ScalarType) { p_.i = static_cast<std::int64_t>(t); }
  IValue(Device d) : tag_(Tag::Device) { p_.i = static_cast<std::int64_t>(d); }
  IValue(Layout l) : tag_(Tag::Layout) { p_.i = static_cast<std::int64_t>(l); }
  IValue(MemoryFormat f) : tag_(Tag::MemoryFormat) { p_.i = static_cast<std::int64_t>(f); }
  IValue(IntrusivePtr<GeneratorImpl> g);
  IValue(IntrusivePtr<CustomObject> o);
  template <typename T>
  IValue(const std::optional<T>& v) : IValue() {
    if (v) *this = IValue(*v);
  }

  IValue(const IValue& o) : tag_(o.tag_) { copy_from(o); }
  IValue(IValue&& o) noexcept : tag_(o.tag_) { move_from(std::move(o)); }
  IValue& operator=(const IValue& o) {
    if (this != &o) {
      destroy();
      tag_ = o.tag_;
      copy_from(o);
    }
    return *this;
  }
  IValue& operator=(IValue&& o) noexcept {
    if (this != &o) {
      destroy();
      tag_ = o.tag_;
      move_from(std::move(o));
    }
    return *this;
  }
  ~IValue() { destroy(); }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_tensor_list() const { return tag_ == Tag::TensorList; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_double() const { return tag_ == Tag::Double; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_scalar() const { return tag_ == Tag::Int || tag_ == Tag::Double || tag_ == Tag::Bool; }

  const Tensor& to_tensor() const& {
    check(Tag::Tensor);
    return p_.tensor;
  }
  Tensor& to_tensor() & {
    check(Tag::Tensor);
    return p_.tensor;
  }
  Tensor to_tensor() && {
    check(Tag::Tensor);
    return std::move(p_.tensor);
  }
  double to_double() const;   // accepts Int and Double
  std::int64_t to_int() const;
  bool to_bool() const;
  Scalar to_scalar() const;
  IntArrayRef to_int_list() const;
  const std::vector<Tensor>& to_tensor_list() const;
  std::vector<Tensor>& to_tensor_list();
  std::string_view to_string_view() const;
  ScalarType to_scalar_type() const;
  Device to_device() const;
  MemoryFormat to_memory_format() const;
  GeneratorImpl* to_generator() const;  // may be null (None)
  IntrusivePtr<CustomObject> to_object() const;

  std::string_view tag_name() const;

 private:
  void check(Tag expected) const {
    if (tag_ != expected) [[unlikely]] throw_wrong_tag(expected);
  }
  [[noreturn]] void throw_wrong_tag(Tag expected) const;
  void copy_from(const IValue& o);
  void move_from(IValue&& o) noexcept;
  void destroy() noexcept;

  union Payload {
    Payload() {}
    ~Payload() {}
    double d;
    std::int64_t i;
    bool b;
    Tensor tensor;
    IntrusivePtr<BoxedObject> object;
  } p_;
  Tag tag_;
};

std::string_view tag_name(IValue::Tag tag);

// Boxed payloads for lists and strings.
struct IntListObject final : BoxedObject {
  explicit IntListObject(IntArrayRef v) : values(v) {}
  DimVector values;
};
struct TensorListObject final : BoxedObject {
  explicit TensorListObject(std::vector<Tensor> v) : values(std::move(v)) {}
  std::vector<Tensor> values;
};
struct StringObject final : BoxedObject {
  explicit StringObject(std::string_view v) : value(v) {}
  std::string value;
};

// The boxed argument stack. Eight values inline cover every op here without a heap allocation.
using Stack = SmallVector<IValue, 8>;

}  // namespace strata
