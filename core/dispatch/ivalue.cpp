// core/dispatch/ivalue.cpp: IValue construction, copying and typed access with clear errors.
#include "core/dispatch/ivalue.h"

#include "core/generator.h"
#include "core/util/small_object_pool.h"

namespace strata {

IValue::IValue(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: tag_ = Tag::Bool; p_.b = s.to_bool(); break;
    case Scalar::Kind::Int: tag_ = Tag::Int; p_.i = s.to_int(); break;
    case Scalar::Kind::Double: tag_ = Tag::Double; p_.d = s.to_double(); break;
  }
}

void* IntListObject::operator new(std::size_t bytes) { return pool::allocate(bytes); }
void IntListObject::operator delete(void* p, std::size_t bytes) noexcept { pool::deallocate(p, bytes); }

IValue::IValue(IntArrayRef values) : tag_(Tag::IntList) {
  new (&p_.object) IntrusivePtr<BoxedObject>(new IntListObject(values));
}

IValue::IValue(std::vector<Tensor> values) : tag_(Tag::TensorList) {
  new (&p_.object) IntrusivePtr<BoxedObject>(new TensorListObject(std::move(values)));
}

IValue::IValue(std::string_view s) : tag_(Tag::String) {
  new (&p_.object) IntrusivePtr<BoxedObject>(new StringObject(s));
}

IValue::IValue(IntrusivePtr<GeneratorImpl> g) {
  if (!g) {
    tag_ = Tag::None;
    return;
  }
  tag_ = Tag::Generator;
  new (&p_.object) IntrusivePtr<BoxedObject>(g.get());
}

IValue::IValue(GeneratorImpl* g) : IValue(IntrusivePtr<GeneratorImpl>(g)) {}

IValue::IValue(IntrusivePtr<CustomObject> o) : tag_(Tag::Object) {
  new (&p_.object) IntrusivePtr<BoxedObject>(o.get());
}

void IValue::throw_wrong_tag(Tag expected) const {
  detail::throw_error(detail::str_cat("expected a boxed ", strata::tag_name(expected), " but got ",
                                      strata::tag_name(tag_)));
}

double IValue::to_double() const {
  if (tag_ == Tag::Int) return static_cast<double>(p_.i);
  check(Tag::Double);
  return p_.d;
}

std::int64_t IValue::to_int_slow() const {
  if (tag_ == Tag::Bool) return p_.b;
  check(Tag::Int);
  return p_.i;
}

bool IValue::to_bool() const {
  check(Tag::Bool);
  return p_.b;
}

Scalar IValue::to_scalar_slow() const {
  if (tag_ == Tag::Bool) return Scalar(p_.b);
  check(Tag::Double);
  return Scalar(p_.d);
}

IntArrayRef IValue::to_int_list() const {
  check(Tag::IntList);
  return static_cast<const IntListObject*>(p_.object.get())->values;
}

const std::vector<Tensor>& IValue::to_tensor_list() const {
  check(Tag::TensorList);
  return static_cast<const TensorListObject*>(p_.object.get())->values;
}

std::vector<Tensor>& IValue::to_tensor_list() {
  check(Tag::TensorList);
  return static_cast<TensorListObject*>(p_.object.get())->values;
}

std::string_view IValue::to_string_view() const {
  check(Tag::String);
  return static_cast<const StringObject*>(p_.object.get())->value;
}

ScalarType IValue::to_scalar_type() const {
  check(Tag::ScalarType);
  return static_cast<ScalarType>(p_.i);
}

Device IValue::to_device() const {
  check(Tag::Device);
  return static_cast<Device>(p_.i);
}

MemoryFormat IValue::to_memory_format() const {
  check(Tag::MemoryFormat);
  return static_cast<MemoryFormat>(p_.i);
}

GeneratorImpl* IValue::to_generator() const {
  if (tag_ == Tag::None) return nullptr;
  check(Tag::Generator);
  return static_cast<GeneratorImpl*>(p_.object.get());
}

IntrusivePtr<CustomObject> IValue::to_object() const {
  check(Tag::Object);
  return IntrusivePtr<CustomObject>(static_cast<CustomObject*>(p_.object.get()));
}

std::string_view IValue::tag_name() const { return strata::tag_name(tag_); }

std::string_view tag_name(IValue::Tag tag) {
  switch (tag) {
    case IValue::Tag::None: return "None";
    case IValue::Tag::Tensor: return "Tensor";
    case IValue::Tag::Double: return "float";
    case IValue::Tag::Int: return "int";
    case IValue::Tag::Bool: return "bool";
    case IValue::Tag::IntList: return "int[]";
    case IValue::Tag::TensorList: return "Tensor[]";
    case IValue::Tag::String: return "str";
    case IValue::Tag::ScalarType: return "ScalarType";
    case IValue::Tag::Device: return "Device";
    case IValue::Tag::Layout: return "Layout";
    case IValue::Tag::MemoryFormat: return "MemoryFormat";
    case IValue::Tag::Generator: return "Generator";
    case IValue::Tag::Object: return "Object";
  }
  return "?";
}

}  // namespace strata
