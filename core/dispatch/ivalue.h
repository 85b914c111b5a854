// core/dispatch/ivalue.h: IValue, the boxed value every dispatch step passes around, and Stack, the boxed
// argument stack. A boxed call pushes an op's arguments; the kernel replaces them with its returns.
// Small values live inline; lists, strings and objects are reference counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../util/intrusive_ptr.h"
#include "../scalar.h"
#include "../util/small_vector.h"
#include "../tensor.h"

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
  // Trivial payloads first, then Tensor, then reference-counted objects (the order copy and destroy
  // rely on).
  enum class Tag : std::uint8_t {
    None, Double, Int, Bool, ScalarType, Device, Layout, MemoryFormat, Tensor,
    IntList, TensorList, String, Generator, Object
  };

  IValue() : tag_(Tag::None) {}
  // Note [Borrowed tensor arguments]
  // A front-end call pushes its tensor arguments *borrowed*: the IValue points at the caller's Tensor
  // instead of holding a reference, so a call costs no reference-count traffic for its inputs (what
  // PyTorch's unboxed calls get by passing const Tensor&). The caller's tensors outlive the call, so
  // this is safe as long as nothing keeps the pointer past it: copying or moving a borrowed IValue, or
  // taking a mutable Tensor& from it, makes an owned reference first. Read arguments through the stack
  // slot, and copy what you keep.
  struct Borrow {};
  IValue(Borrow, const Tensor& t) : tag_(Tag::Tensor), borrowed_(true) { p_.ref = &t; }
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
  IValue(GeneratorImpl* g);  // None when null
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
    return borrowed_ ? *p_.ref : p_.tensor;
  }
  Tensor& to_tensor() & {  // a borrowed argument becomes owned first, so writes never reach the caller
    check(Tag::Tensor);
    if (borrowed_) own();
    return p_.tensor;
  }
  Tensor to_tensor() && {
    check(Tag::Tensor);
    return borrowed_ ? *p_.ref : std::move(p_.tensor);
  }
  bool is_borrowed() const { return borrowed_; }
  // Rewrites this slot to borrow `t`, dropping what it held: a handler that runs an op on its
  // caller's stack with other tensors (Note [The local op runs in place]). Whoever does it keeps `t`
  // alive until the call the stack is for returns; an assignment would own a reference instead.
  void set_borrowed(const Tensor& t) noexcept {
    destroy();
    tag_ = Tag::Tensor;
    borrowed_ = true;
    p_.ref = &t;
  }
  // Note [A handler's arguments are marked]
  // The interposer marks the argument slots it hands a mode or subclass handler, so that afterwards it
  // can tell a handler that left its arguments on the stack (the slots are still marked) from one that
  // replaced them with its returns, even a return that is the same tensor (relu_ returns self). Any
  // write of a slot clears its mark (assignment destroys the old value) and no copy or move carries it,
  // so a handler that moves an argument into its return slot has returned it. Relocation does carry
  // it: when the handler's own pushes make the stack grow, its arguments are the same values in a new
  // buffer, still not replaced (Note [Relocation is not a write]).
  void mark_handler_argument() { marked_ = true; }
  bool is_handler_argument() const { return marked_; }
  // Constructs this value at `to`, mark included, and destroys this one (SmallVector's relocation).
  void relocate_to(void* to) noexcept {
    IValue* moved = new (to) IValue(std::move(*this));
    moved->marked_ = marked_;
    this->~IValue();
  }
  double to_double() const;   // accepts Int and Double
  // to_int and to_scalar run for every number a kernel unboxes or a formula reads: the common tags
  // inline, Bool and the wrong-tag error out of line.
  std::int64_t to_int() const {
    if (tag_ == Tag::Int) [[likely]] return p_.i;
    return to_int_slow();
  }
  bool to_bool() const;
  Scalar to_scalar() const {
    if (tag_ == Tag::Int) return Scalar(p_.i);
    if (tag_ == Tag::Double) return Scalar(p_.d);
    return to_scalar_slow();
  }
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
  std::int64_t to_int_slow() const;  // Bool, or throws
  Scalar to_scalar_slow() const;     // Bool, or throws
  bool holds_object() const { return tag_ > Tag::Tensor; }
  // Trivial payloads live in `d` (Double), `b` (Bool) or `i` (everything else, None included).
  void copy_trivial(const IValue& o) {
    if (tag_ == Tag::Double) p_.d = o.p_.d;
    else if (tag_ == Tag::Bool) p_.b = o.p_.b;
    else p_.i = o.p_.i;
  }
  void copy_from(const IValue& o) {
    if (tag_ == Tag::Tensor) new (&p_.tensor) Tensor(o.borrowed_ ? *o.p_.ref : o.p_.tensor);
    else if (holds_object()) new (&p_.object) IntrusivePtr<BoxedObject>(o.p_.object);
    else copy_trivial(o);
  }
  void move_from(IValue&& o) noexcept {
    if (tag_ == Tag::Tensor) {
      if (o.borrowed_) new (&p_.tensor) Tensor(*o.p_.ref);
      else new (&p_.tensor) Tensor(std::move(o.p_.tensor));
    } else if (holds_object()) {
      new (&p_.object) IntrusivePtr<BoxedObject>(std::move(o.p_.object));
    } else {
      copy_trivial(o);
    }
  }
  void destroy() noexcept {
    if (tag_ == Tag::Tensor) {
      if (!borrowed_) p_.tensor.~Tensor();
    } else if (holds_object()) {
      p_.object.~IntrusivePtr<BoxedObject>();
    }
    tag_ = Tag::None;
    borrowed_ = false;
    marked_ = false;
  }
  void own() {
    const Tensor* ref = p_.ref;
    new (&p_.tensor) Tensor(*ref);
    borrowed_ = false;
  }

  union Payload {
    Payload() : i(0) {}
    ~Payload() {}
    double d;
    std::int64_t i;
    bool b;
    Tensor tensor;
    const Tensor* ref;  // a borrowed argument (Note [Borrowed tensor arguments])
    IntrusivePtr<BoxedObject> object;
  } p_;
  Tag tag_;
  bool borrowed_ = false;
  bool marked_ = false;  // Note [A handler's arguments are marked]
};

std::string_view tag_name(IValue::Tag tag);

// Boxed payloads for lists and strings.
struct IntListObject final : BoxedObject {
  explicit IntListObject(IntArrayRef v) : values(v) {}
  DimVector values;
  static void* operator new(std::size_t bytes);  // from the small-object pool
  static void operator delete(void* p, std::size_t bytes) noexcept;
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

// Replaces an op's `n` arguments on top of the stack with its one return.
inline void replace_arguments(Stack& stack, std::size_t n, IValue result) {
  stack.truncate(stack.size() - n);
  stack.emplace_back(std::move(result));
}

}  // namespace strata
