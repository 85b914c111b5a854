// tests/fuzz/api_calls.cpp: boxed arguments from an op's schema, the meta rehearsal that bounds a
// call, the call itself and the checks of its results. The argument encoding is in api_fuzzer.cpp's
// Note [The API fuzzer's byte code].
#include "tests/fuzz/api_calls.h"

#include <algorithm>
#include <string>

#include "core/interpose/interposer.h"
#include "tests/fuzz/api_subjects.h"

namespace strata::fuzz {

const std::vector<OperatorHandle>& all_ops() {
  static const std::vector<OperatorHandle> ops = [] {
    std::vector<OperatorHandle> v = Dispatcher::singleton().ops();
    std::sort(v.begin(), v.end(), [](const OperatorHandle& a, const OperatorHandle& b) { return a.str() < b.str(); });
    return v;
  }();
  return ops;
}

std::int64_t storage_elements(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return 0;
  std::int64_t extent = 1;
  for (std::size_t d = 0; d < t.sizes().size(); ++d) {
    std::int64_t step = 0;
    const std::int64_t stride = t.strides()[d] < 0 ? -t.strides()[d] : t.strides()[d];
    if (mul_overflows(t.sizes()[d] - 1, stride, &step) || add_overflows(extent, step, &extent)) return INT64_MAX;
  }
  return std::max(extent, t.numel());
}

Tensor meta_copy(const Tensor& t) {
  if (!t.defined()) return t;
  return strata::detail::make_tensor(t.sizes(), t.strides(), t.dtype(), Device::Meta);
}

std::optional<std::vector<Tensor>> rehearse(const std::function<std::vector<Tensor>()>& fn) {
  ExcludeKeyGuard no_python(DispatchKey::Python);
  ExcludeKeyGuard no_autograd(DispatchKey::Autograd);
  std::vector<Tensor> outs;
  if (!attempt("a meta rehearsal", [&] { outs = fn(); })) return std::nullopt;
  return outs;
}

bool within_budget(const std::vector<Tensor>& predicted) {
  std::int64_t total = 0;
  for (const Tensor& t : predicted)
    if (add_overflows(total, storage_elements(t), &total)) return false;
  return total <= kMaxElements;
}

void check_prediction(const char* where, const std::vector<Tensor>& predicted, const std::vector<Tensor>& real) {
  if (predicted.size() != real.size()) fail(where, "meta and cpu disagree", "on the number of outputs");
  for (std::size_t i = 0; i < real.size(); ++i) {
    if (predicted[i].defined() != real[i].defined()) fail(where, "meta and cpu disagree", "on which outputs are defined");
    if (!real[i].defined()) continue;
    if (predicted[i].sizes() != real[i].sizes() || predicted[i].dtype() != real[i].dtype()) {
      const std::string detail = "meta " + shape_str(predicted[i].sizes()) + " " + std::string(dtype_name(predicted[i].dtype())) +
                                 ", real " + shape_str(real[i].sizes()) + " " + std::string(dtype_name(real[i].dtype()));
      fail(where, "meta and cpu disagree", detail.c_str());
    }
  }
}

void store(World& w, std::uint8_t dst, Tensor t, bool tainted_inputs) {
  Slot& s = w.slot(dst);
  s.tainted = tainted_inputs || is_huge(t);
  if (t.defined() && t.grad_fn()) w.histories.push_back(t);
  s.tensor = std::move(t);
}

namespace {

// The arguments of one call as they are read, with what later arguments derive from.
struct Arguments {
  Stack values;
  std::vector<Tensor> tensors;  // the defined tensors among them, lists included
  bool tainted = false;
  DimVector last_list;       // the previous int list (a stride list follows its size list)

  const Tensor* first_tensor() const { return tensors.empty() ? nullptr : &tensors.front(); }
  std::int64_t rank() const { return first_tensor() ? first_tensor()->dim() : 0; }
};

Tensor take_tensor(World& w, Arguments& a, std::uint8_t slot_byte) {
  const Slot& s = w.slot(slot_byte);
  if (s.tensor.defined()) {
    a.tensors.push_back(s.tensor);
    a.tainted |= s.tainted;
  }
  return s.tensor;
}

IValue generator_value(World& w, std::uint8_t seed) {
  w.generators.emplace_back();
  w.generators.back().manual_seed(seed);
  return IValue(w.generators.back().impl_ptr());
}

IValue string_value(std::uint8_t b) {
  static const std::string kLong(300, 's');
  static const std::string_view kTable[] = {"fuzz", "", "a.b::c", kLong};
  return IValue(kTable[b % 4]);
}

// A dimension in [-rank-1, rank]: mostly valid, sometimes one past either end.
std::int64_t dim_value(ByteReader& r, std::int64_t rank) {
  const std::int64_t n = std::max<std::int64_t>(rank, 1);
  return static_cast<std::int64_t>(r.u8() % static_cast<std::uint8_t>(std::min<std::int64_t>(2 * n + 2, 255))) - n - 1;
}

DimVector int_list_value(ByteReader& r, const SchemaArgument& arg, const Arguments& a, std::uint8_t b) {
  const Tensor* first = a.first_tensor();
  DimVector out;
  if (arg.name.find("dim") != std::string::npos) {
    const std::size_t n = b % 3;
    for (std::size_t i = 0; i < n; ++i) out.push_back(dim_value(r, a.rank()));
    return out;
  }
  const bool stride = arg.name.find("stride") != std::string::npos;
  switch (b % 4) {
    case 0:
      if (stride) {  // contiguous strides of the size list before, saturating where they overflow
        std::int64_t step = 1;
        out.resize(a.last_list.size());
        for (std::size_t d = out.size(); d-- > 0;) {
          out[d] = step;
          step = saturating_mul(step, std::max<std::int64_t>(a.last_list[d], 1));
        }
        return out;
      }
      if (first) return DimVector(first->sizes());
      break;
    case 1:
      if (first) {
        out = DimVector(stride ? first->strides() : first->sizes());
        if (!out.empty()) out[r.pick(out.size())] = r.u8() & 1 ? -1 : size_value(r);
        return out;
      }
      break;
    default:
      break;
  }
  const std::size_t n = r.pick(7);
  for (std::size_t i = 0; i < n; ++i) out.push_back(size_value(r));
  return out;
}

// A value of the argument's own type (class byte b below kHuge's region).
IValue natural_value(World& w, ByteReader& r, const SchemaArgument& arg, Arguments& a, std::uint8_t b) {
  const SchemaType& type = arg.type;
  if (type.optional && (b & 0x38) == 0x38) return IValue();
  using Kind = SchemaType::Kind;
  switch (type.kind) {
    case Kind::Tensor:
      if (type.list) {
        std::vector<Tensor> list;
        for (std::size_t i = b % 4; i > 0; --i) list.push_back(take_tensor(w, a, r.u8()));
        return IValue(std::move(list));
      }
      return IValue(take_tensor(w, a, b));
    case Kind::Int:
      if (type.list) {
        a.last_list = int_list_value(r, arg, a, b);
        return IValue(IntArrayRef(a.last_list));
      }
      if (arg.name.find("dim") != std::string::npos) return IValue(dim_value(r, a.rank()));
      return IValue(int_value(r));
    case Kind::Scalar:
      switch (b % 4) {
        case 0: return IValue(Scalar(int_value(r)));
        case 1: return IValue(Scalar(double_value(r)));
        case 2: return IValue(Scalar(static_cast<bool>(b & 4)));
        default: return IValue(Scalar(std::int64_t{b >> 2} % 5));
      }
    case Kind::Float: return IValue(double_value(r));
    case Kind::Bool: return IValue(static_cast<bool>(b & 1));
    case Kind::ScalarType: return IValue(dtype_value(b));
    case Kind::Layout: return IValue(Layout::Strided);
    case Kind::Device: return IValue(b % 5 == 4 ? Device::Meta : Device::CPU);
    case Kind::MemoryFormat: return IValue(b & 1 ? MemoryFormat::Preserve : MemoryFormat::Contiguous);
    case Kind::Generator: return generator_value(w, b);
    case Kind::Str: return string_value(b);
    case Kind::Custom: {
      const auto& object = w.objects[b % w.objects.size()];
      return object ? IValue(object) : IValue();
    }
  }
  return IValue();
}

// Class bytes from kHuge up (natural values are below): the schema's default, a value of some other
// type on purpose, an exactly spelled value of any type (kExplicitKind + kind, as the readable seeds
// write them), or the end of the arguments (too few values on the stack).
inline constexpr std::uint8_t kDefault = kHuge;             // 0xE0..0xE7
inline constexpr std::uint8_t kWrongType = kHuge + 8;       // 0xE8..0xEF
inline constexpr std::uint8_t kExplicitKind = 0xF0;         // 0xF0..0xFD, 0xFF
inline constexpr std::uint8_t kExplicitDefault = 0xF0 + 10;
inline constexpr std::uint8_t kStopArguments = 0xFE;

IValue explicit_value(World& w, ByteReader& r, Arguments& a, std::uint8_t kind) {
  switch (kind) {
    case 0: return IValue();
    case 1: return IValue(take_tensor(w, a, r.u8()));
    case 2: return IValue(r.i64());
    case 3: return IValue(r.f64());
    case 4: return IValue(static_cast<bool>(r.u8() & 1));
    case 5: {
      a.last_list.clear();
      for (std::size_t n = r.pick(9); n > 0; --n) a.last_list.push_back(r.i64());
      return IValue(IntArrayRef(a.last_list));
    }
    case 6: return IValue(static_cast<ScalarType>(r.pick(kNumScalarTypes)));
    case 7: return IValue(r.u8() & 1 ? Device::Meta : Device::CPU);
    case 8: return IValue(r.u8() & 1 ? MemoryFormat::Preserve : MemoryFormat::Contiguous);
    case 9: return IValue(r.bytes(r.u8()));
    case 11: {
      std::vector<Tensor> list;
      for (std::size_t n = r.pick(5); n > 0; --n) list.push_back(take_tensor(w, a, r.u8()));
      return IValue(std::move(list));
    }
    case 12: return generator_value(w, r.u8());
    case 13: {
      const auto& object = w.objects[r.pick(w.objects.size())];
      return object ? IValue(object) : IValue();
    }
    default: return IValue(Layout::Strided);
  }
}

// Reads op's arguments; stops early at kStopArguments (the call must then be refused).
void read_into(World& w, ByteReader& r, const OperatorHandle& op, Arguments& a) {
  static constexpr std::uint8_t kWrongKinds[] = {0, 1, 2, 3, 5, 9, 11, 4};
  const FunctionSchema& schema = op.schema();
  for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
    const SchemaArgument& arg = schema.arguments()[i];
    const std::uint8_t b = r.u8();
    if (b == kStopArguments) return;
    IValue v;
    if (b == kExplicitDefault || (b >= kDefault && b < kWrongType)) {
      if (arg.default_text) attempt("a schema default", [&] { v = schema.default_value(i); });
      else if (b != kExplicitDefault) v = natural_value(w, r, arg, a, b);
    } else if (b >= kExplicitKind) {
      v = explicit_value(w, r, a, b - kExplicitKind);
    } else if (b >= kWrongType) {
      v = explicit_value(w, r, a, kWrongKinds[b - kWrongType]);
    } else {
      v = natural_value(w, r, arg, a, b);
    }
    a.values.push_back(std::move(v));
  }
}

// Calls `fn` on each defined tensor among the arguments, list elements included.
template <typename Fn>
void for_each_tensor(const Stack& args, Fn&& fn) {
  for (const IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined()) fn(v.to_tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list())
        if (t.defined()) fn(t);
  }
}

// Whether the call's outputs would have real storage: a CPU tensor or device among the arguments,
// or no tensor and no device at all (a factory's default).
bool touches_cpu(const Stack& args) {
  bool any_tensor = false, cpu = false, device_meta = false;
  for_each_tensor(args, [&](const Tensor& t) {
    any_tensor = true;
    cpu |= t.device() == Device::CPU;
  });
  for (const IValue& v : args) {
    if (v.tag() != IValue::Tag::Device) continue;
    cpu |= v.to_device() == Device::CPU;
    device_meta |= v.to_device() == Device::Meta;
  }
  return cpu || (!any_tensor && !device_meta);
}

std::vector<Tensor> tensor_returns(const Stack& stack, std::size_t n) {
  std::vector<Tensor> out;
  for (std::size_t i = stack.size() - n; i < stack.size(); ++i)
    if (stack[i].is_tensor()) out.push_back(stack[i].to_tensor());
  return out;
}

// The returns left on the stack have the schema's types.
void check_returns(const OperatorHandle& op, const Stack& stack) {
  const auto& returns = op.schema().returns();
  const std::string where = op.str();
  if (stack.size() != returns.size()) fail(where.c_str(), "a call left the wrong number of values", "");
  for (std::size_t i = 0; i < returns.size(); ++i) {
    const SchemaType& type = returns[i].type;
    const IValue& v = stack[i];
    bool ok = true;
    if (type.kind == SchemaType::Kind::Tensor && type.list) ok = v.is_tensor_list();
    else if (type.kind == SchemaType::Kind::Tensor) ok = (v.is_tensor() && v.to_tensor().defined()) || (type.optional && v.is_none());
    else if (type.kind == SchemaType::Kind::Custom) ok = v.tag() == IValue::Tag::Object;
    if (!ok) fail(where.c_str(), "a return does not have its schema's type", std::string(v.tag_name()).c_str());
  }
}

}  // namespace

Rehearsal rehearse_call(const OperatorHandle& op, const Stack& args) {
  Rehearsal out;
  const bool view = is_view_op(op);
  for_each_tensor(args, [&](const Tensor& t) { out.affordable &= view || !is_huge(t); });  // no loop over a huge view
  const auto& returns = op.schema().returns();
  if (!out.affordable || view || args.size() != op.schema().arguments().size() || returns.empty() ||
      returns[0].type.kind != SchemaType::Kind::Tensor)
    return out;
  Stack mirror;
  // A geometry a meta tensor cannot have (strata's views count elements with int64 products where
  // empty() uses PyTorch's uint64 rule): no prediction, and no call, whose outputs could be any size.
  out.affordable = attempt("a meta copy", [&] {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const IValue& v = args[i];
    if (v.is_tensor()) {
      mirror.emplace_back(meta_copy(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list;
      for (const Tensor& t : v.to_tensor_list()) list.push_back(meta_copy(t));
      mirror.emplace_back(std::move(list));
    } else if (op.schema().arguments()[i].type.kind == SchemaType::Kind::Device &&
               (v.is_none() || v.tag() == IValue::Tag::Device)) {
      mirror.emplace_back(Device::Meta);
    } else {
      mirror.push_back(v);
    }
  }
  });
  if (!out.affordable) return out;
  out.predicted = rehearse([&] {
    op.call(mirror);
    return tensor_returns(mirror, std::min(returns.size(), mirror.size()));
  });
  out.affordable = !out.predicted || !touches_cpu(args) || within_budget(*out.predicted);
  return out;
}

Stack read_arguments(World& w, ByteReader& r, const OperatorHandle& op) {
  Arguments a;
  read_into(w, r, op, a);
  return std::move(a.values);
}

void call_op(World& w, ByteReader& r, const OperatorHandle& op) {
  const std::uint8_t dst = r.u8();
  Arguments a;
  read_into(w, r, op, a);
  if (w.verbose) std::fprintf(stderr, "  call %s with %zu arguments\n", op.str().c_str(), a.values.size());

  const Rehearsal rehearsal = rehearse_call(op, a.values);
  if (!rehearsal.affordable) return;
  const std::optional<std::vector<Tensor>>& predicted = rehearsal.predicted;
  const std::size_t num_returns = op.schema().returns().size();

  Stack stack = std::move(a.values);
  const std::string where = op.str();
  if (!attempt(where.c_str(), [&] { op.call(stack); })) return;
  check_returns(op, stack);
  const std::vector<Tensor> outs = tensor_returns(stack, num_returns);
  if (predicted) check_prediction(where.c_str(), *predicted, outs);
  std::uint8_t next = dst;
  for (std::size_t i = 0; i < num_returns; ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor()) {
      store(w, next++, v.to_tensor(), a.tainted);
    } else if (v.tag() == IValue::Tag::Object) {
      w.objects[dst % w.objects.size()] = v.to_object();
    }
  }
}

}  // namespace strata::fuzz
