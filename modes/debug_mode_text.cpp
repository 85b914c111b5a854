// modes/debug_mode_text.cpp: how DebugMode writes what it recorded (upstream's _arg_to_str,
// TensorIdTracker and render): a tensor's name, id, shape and attributes, any other value, an op's
// returns, a call's line and the whole log. What is recorded, and when, is debug_mode.cpp's.
#include "modes/debug_mode.h"

#include <algorithm>
#include <charconv>

#include "core/dtype.h"
#include "io/python_repr.h"
#include "modes/fake_tensor.h"

namespace strata::tracer {

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// "[8, 16]": a shape, or an int list argument.
void append_int_list(std::string& out, IntArrayRef values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    append_int(out, values[i]);
  }
  out += ']';
}

}  // namespace

std::string_view kind_name(DebugCall::Kind kind) {
  switch (kind) {
    case DebugCall::Kind::Op: return "op";
    case DebugCall::Kind::Function: return "function";
    case DebugCall::Kind::Module: return "module";
    case DebugCall::Kind::Redistribute: return "redistribute";
  }
  return "op";
}

std::string DebugCall::render() const {
  if (kind == Kind::Module) return "[nn.Mod] " + name;
  std::string out = name;
  out += '(';
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    out += args[i];
  }
  for (const auto& [key, value] : kwargs) {
    if (!out.ends_with('(')) out += ", ";
    out += key;
    out += '=';
    out += value;
  }
  out += ')';
  if (output) {
    out += "  ->  ";
    out += *output;
  }
  if (log.is_object() && !log.empty()) {
    out += "  # ";
    out += python_repr(log);
  }
  return out;
}

// Note [DebugMode's tensor attributes]
// Upstream's record_tensor_attributes writes `{name=value, ...}` after the shape with each listed
// attribute the tensor has (hasattr, then getattr's str()), and nothing when it has none of them. A
// strata tensor has no attribute dictionary, so its attributes come from three places, in order:
//  - the built-in ones every tensor has: requires_grad, is_leaf and _version (as of when the call is
//    written: an op's output is written below autograd, before autograd gives it a history, as
//    upstream's dispatch mode sees it), dtype (torch.float32), device (cpu), ndim and shape
//    (torch.Size([8, 16]));
//  - those its subclass sets (TensorSubclass::attribute, Python's `self.a1 = ...` in a subclass);
//  - those the user sets, through the mode's `tensor_attribute` reader (Python's `x.a1 = ...` on
//    any tensor, kept wherever the user keeps it).
// A name no tensor has is skipped on each tensor, as upstream's hasattr skips it.
namespace {
constexpr std::string_view kTensorAttributes[] = {"requires_grad", "is_leaf", "_version", "dtype",
                                                  "device",        "ndim",    "shape"};

// Appends `name=value` when `t` has the attribute; returns whether it did.
bool append_attribute(std::string& out, const Tensor& t, std::string_view name, const DebugModeOptions& options) {
  const auto flag = [&](bool b) { out += b ? "True" : "False"; };
  if (std::find(std::begin(kTensorAttributes), std::end(kTensorAttributes), name) != std::end(kTensorAttributes)) {
    out += name;
    out += '=';
    if (name == "requires_grad") flag(t.requires_grad());
    else if (name == "is_leaf") flag(t.is_leaf());
    else if (name == "_version") append_int(out, t.impl()->version());
    else if (name == "dtype") (out += "torch.") += dtype_name(t.dtype());
    else if (name == "device") out += device_name(t.device());
    else if (name == "ndim") append_int(out, t.dim());
    else (out += "torch.Size(") += shape_str(t.sizes()) + ")";
    return true;
  }
  std::optional<std::string> value;
  if (t.subclass()) value = t.subclass()->attribute(t, name);
  if (!value && options.tensor_attribute) value = options.tensor_attribute(t, name);
  if (!value) return false;
  out += name;
  out += '=';
  append_python_str(out, *value);  // a user's text: Note [Logged text is always valid UTF-8]
  return true;
}
}  // namespace

DebugMode::DebugMode(DebugModeOptions options) : options_(std::move(options)) {}

// Note [Tensor ids without references]
// Upstream keys ids by weak references to tensor objects. DebugMode keeps no reference at all (one
// would change use counts, and with them which ops run: AccumulateGrad steals a gradient only it
// holds), so it keys ids by TensorImpl address and guards against a freed impl's address being
// reused: an op's output that is not one of its inputs is a new tensor and gets a new id, and a known
// address whose data pointer changed is a new tensor too.
std::int64_t DebugMode::tensor_id(const Tensor& t, bool fresh) const {
  const TensorImpl* impl = t.impl();
  const void* data = impl->has_data() ? impl->data() : nullptr;
  if (fresh && std::find(inputs_.begin(), inputs_.end(), impl) != inputs_.end()) fresh = false;
  auto [it, inserted] = ids_.try_emplace(impl, IdEntry{next_id_, data});
  if (inserted) return next_id_++;
  if (fresh || it->second.data != data) it->second = IdEntry{next_id_++, data};
  return it->second.id;
}

void DebugMode::append_tensor(std::string& out, const Tensor& t, bool fresh_id, bool with_ids) const {
  if (!t.defined()) {
    out += "None";
    return;
  }
  const DebugModeSubclass* custom = t.subclass() ? dynamic_cast<const DebugModeSubclass*>(t.subclass()) : nullptr;
  if (custom) out += custom->debug_prefix();
  else if (FakeTensor::is_fake(t)) out += "ft";
  else out += 't';
  if (with_ids) {
    out += '$';
    append_int(out, tensor_id(t, fresh_id));
  }
  out += ": ";
  out += dtype_shorthand(t.dtype());
  append_int_list(out, t.sizes());
  if (!options_.record_tensor_attributes.empty()) {
    const std::size_t open = out.size();
    out += '{';
    bool any = false;
    for (const std::string& name : options_.record_tensor_attributes) {
      if (any) out += ", ";
      const std::size_t before = out.size();
      if (append_attribute(out, t, name, options_)) any = true;
      else out.resize(any ? before - 2 : before);
    }
    if (any) out += '}';
    else out.resize(open);
  }
  if (custom) {
    const distributed::Placements placements = custom->debug_placements(t);
    if (!placements.empty()) {
      if (options_.placement_format == PlacementFormat::Joined) out += "| ";
      out += placements_string(placements);
    }
  }
}

// str(value) as upstream's _arg_to_str makes it: a tensor list is a list of strings, so its elements
// are quoted.
void DebugMode::append_value(std::string& out, const IValue& v, bool fresh_ids, bool with_ids) const {
  switch (v.tag()) {
    case IValue::Tag::None: out += "None"; break;
    case IValue::Tag::Double: append_python_float(out, v.to_double()); break;
    case IValue::Tag::Int: append_int(out, v.to_int()); break;
    case IValue::Tag::Bool: out += v.to_bool() ? "True" : "False"; break;
    case IValue::Tag::ScalarType: out += "torch."; out += dtype_name(v.to_scalar_type()); break;
    case IValue::Tag::Device: out += device_name(v.to_device()); break;
    case IValue::Tag::Layout: out += "torch.strided"; break;
    case IValue::Tag::MemoryFormat:
      out += v.to_memory_format() == MemoryFormat::Contiguous ? "torch.contiguous_format" : "torch.preserve_format";
      break;
    case IValue::Tag::Tensor: append_tensor(out, v.to_tensor(), fresh_ids, with_ids); break;
    case IValue::Tag::IntList: append_int_list(out, v.to_int_list()); break;
    case IValue::Tag::TensorList: {
      out += '[';
      const auto& ts = v.to_tensor_list();
      for (std::size_t i = 0; i < ts.size(); ++i) {
        if (i) out += ", ";
        std::string item;
        append_tensor(item, ts[i], fresh_ids, with_ids);
        append_python_str_repr(out, item);
      }
      out += ']';
      break;
    }
    case IValue::Tag::String: append_python_str(out, v.to_string_view()); break;
    case IValue::Tag::Generator: out += "<torch._C.Generator object>"; break;
    case IValue::Tag::Object: out += "<"; out += v.to_object()->type_name(); out += " object>"; break;
  }
}

// The returns as upstream's stringify_output writes them: nothing when every value is None, one value
// as itself, several as the str() of a tuple of strings.
std::string DebugMode::returns_string(const IValue* returns, std::size_t n, bool fresh_ids) const {
  const bool all_none = std::all_of(returns, returns + n, [](const IValue& v) {
    return v.is_none() || (v.is_tensor() && !v.to_tensor().defined());
  });
  if (all_none) return {};
  std::string out;
  if (n == 1) {
    append_value(out, returns[0], fresh_ids, options_.record_ids);
    return out;
  }
  out += '(';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    std::string item;
    append_value(item, returns[i], fresh_ids, options_.record_ids);
    if (returns[i].is_tensor() && returns[i].to_tensor().defined()) append_python_str_repr(out, item);
    else out += item;
  }
  out += ')';
  return out;
}

DebugCall DebugMode::rendered(const DebugCall& call) const {
  DebugCall out = call;
  if (call.original_args.empty() && call.original_kwargs.empty()) return out;
  out.args.clear();
  out.kwargs.clear();
  for (const IValue& v : call.original_args) append_value(out.args.emplace_back(), v, false, false);
  for (const auto& [key, value] : call.original_kwargs) {
    std::string s;
    append_value(s, value, false, false);
    out.kwargs.emplace_back(key, std::move(s));
  }
  return out;
}

std::string DebugMode::debug_string(std::optional<bool> show_stack_trace) const {
  const bool show = show_stack_trace.value_or(options_.record_stack_trace);
  std::string out;
  const std::string* previous = nullptr;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const std::size_t indent = 2 + 2 * static_cast<std::size_t>(std::max(calls_[i].depth, 0));
    if (show && !calls_[i].stack_trace.empty() && (!previous || *previous != calls_[i].stack_trace)) {
      if (i) out += "\n\n";  // upstream: a blank line before each new path, except at the top
      out.append(indent, ' ');
      out += "# ";
      out += calls_[i].stack_trace;
      previous = &calls_[i].stack_trace;
      out += '\n';
    } else if (i) {
      out += '\n';
    }
    out.append(indent, ' ');
    out += rendered(calls_[i]).render();
  }
  return out;
}

}  // namespace strata::tracer
