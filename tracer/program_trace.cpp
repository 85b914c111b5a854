// tracer/program_trace.cpp: a trace's text: printed as Thunder prints one, and as JSON; and the
// values each symbol reads and writes. Replaying a trace is trace_replay.cpp's.
#include "tracer/program_trace.h"

#include "core/device.h"
#include "io/python_repr.h"

namespace strata::tracer {

std::string_view kind_name(BoundSymbol::Kind kind) {
  switch (kind) {
    case BoundSymbol::Kind::Function: return "function";
    case BoundSymbol::Kind::Node: return "node";
    case BoundSymbol::Kind::Subclass: return "subclass";
    case BoundSymbol::Kind::Op: return "op";
    case BoundSymbol::Kind::Flatten: return "flatten";
    case BoundSymbol::Kind::Unflatten: return "unflatten";
  }
  return "?";
}

// Note [Thunder's dtype names]
// A trace writes a tensor's type with Thunder's dtype short names: those of DebugMode's logs (f32,
// i64, b8), except float8, which Thunder writes f8_e4m3fn (its `float8_e4m3fn` dtype's short name;
// PyTorch's own abbreviation, in DebugMode, is f8e4m3fn). A dtype argument stays torch's name:
// `dtype=torch.float8_e4m3fn`.
std::string_view thunder_dtype_name(ScalarType t) {
  return t == ScalarType::Float8_e4m3fn ? std::string_view("f8_e4m3fn") : dtype_shorthand(t);
}

std::string trace_type(const Tensor& t) {
  std::string out(device_name(t.device()));
  out += ' ';
  out += thunder_dtype_name(t.dtype());
  out += '[';
  for (std::size_t i = 0; i < t.sizes().size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(t.sizes()[i]);
  }
  out += ']';
  if (t.subclass()) return std::string(t.subclass()->type_name()) + "[" + out + "]";
  return out;
}

const std::string& proxy_name(const Trace& trace, int p) {
  static const std::string none = "None";
  return p < 0 ? none : trace.proxies[static_cast<std::size_t>(p)].name;
}

namespace {

void for_each_proxy(const TraceArg& a, const std::function<void(int)>& fn) {
  if (a.kind == TraceArg::Kind::Proxy && a.proxy >= 0) fn(a.proxy);
  for (int p : a.proxies)
    if (p >= 0) fn(p);
}

}  // namespace

void for_each_read(const BoundSymbol& sym, const std::function<void(int)>& fn) {
  for (const TraceArg& a : sym.args) for_each_proxy(a, fn);
  for (const auto& [name, a] : sym.kwargs) for_each_proxy(a, fn);
  for (const BoundSymbol& sub : sym.subsymbols) for_each_read(sub, fn);
}

void for_each_written(const BoundSymbol& sym, const std::function<void(int)>& fn) {
  for (const TraceArg& a : sym.outputs) for_each_proxy(a, fn);
  for (const BoundSymbol& sub : sym.subsymbols) for_each_written(sub, fn);
}

namespace {

void append_constant(std::string& out, const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: out += "None"; break;
    case IValue::Tag::Double: append_python_float(out, v.to_double()); break;
    case IValue::Tag::Int: out += std::to_string(v.to_int()); break;
    case IValue::Tag::Bool: out += v.to_bool() ? "True" : "False"; break;
    case IValue::Tag::ScalarType: out += "torch."; out += dtype_name(v.to_scalar_type()); break;
    case IValue::Tag::Device: out += "torch.device('"; out += device_name(v.to_device()); out += "')"; break;
    case IValue::Tag::Layout: out += "torch.strided"; break;
    case IValue::Tag::MemoryFormat:
      out += v.to_memory_format() == MemoryFormat::Contiguous ? "torch.contiguous_format" : "torch.preserve_format";
      break;
    case IValue::Tag::IntList: {
      out += '[';
      const IntArrayRef xs = v.to_int_list();
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(xs[i]);
      }
      out += ']';
      break;
    }
    case IValue::Tag::String: append_python_str_repr(out, v.to_string_view()); break;
    case IValue::Tag::Generator: out += "<torch._C.Generator object>"; break;
    case IValue::Tag::Object: out += "<"; out += v.to_object()->type_name(); out += " object>"; break;
    case IValue::Tag::Tensor:
    case IValue::Tag::TensorList: out += "?"; break;  // never a constant (Recorder::capture)
  }
}

void append_arg(std::string& out, const Trace& trace, const TraceArg& a) {
  switch (a.kind) {
    case TraceArg::Kind::Proxy: out += proxy_name(trace, a.proxy); break;
    case TraceArg::Kind::ProxyList:
      out += '[';
      for (std::size_t i = 0; i < a.proxies.size(); ++i) {
        if (i) out += ", ";
        out += proxy_name(trace, a.proxies[i]);
      }
      out += ']';
      break;
    case TraceArg::Kind::Constant: append_constant(out, a.constant); break;
  }
}

// The outputs as the left-hand side: "t1", "t1, t2", "[t3, t4]"; empty when there are none.
std::string lhs(const Trace& trace, const BoundSymbol& sym) {
  std::string out;
  for (std::size_t i = 0; i < sym.outputs.size(); ++i) {
    if (i) out += ", ";
    const TraceArg& o = sym.outputs[i];
    if (o.kind == TraceArg::Kind::Proxy && o.proxy < 0) out += '_';
    else append_arg(out, trace, o);
  }
  return out;
}

// The outputs' types: `t1: "cpu f32[8, 32]", t2: "cpu f32[]"`.
std::string output_types(const Trace& trace, const BoundSymbol& sym) {
  std::string out;
  auto add = [&](int p) {
    if (p < 0) return;
    if (!out.empty()) out += ", ";
    out += proxy_name(trace, p) + ": \"" + trace.proxies[static_cast<std::size_t>(p)].type + "\"";
  };
  for (const TraceArg& o : sym.outputs) {
    if (o.kind == TraceArg::Kind::Proxy) add(o.proxy);
    for (int p : o.proxies) add(p);
  }
  return out;
}

std::string subclass_type_name(const BoundSymbol& sym) { return sym.subclass ? std::string(sym.subclass->type_name()) : "?"; }

void print_symbol(std::string& out, const Trace& trace, const BoundSymbol& sym, int depth) {
  const std::string indent(2 + 2 * static_cast<std::size_t>(depth), ' ');
  const std::string comment = depth > 0 ? "# " : "";
  if (!sym.header.empty()) out += indent + "# " + sym.header + "\n";
  out += indent + comment;
  const std::string left = lhs(trace, sym);
  if (!left.empty()) out += left + " = ";
  out += sym.name;
  if (sym.kind == BoundSymbol::Kind::Flatten || sym.kind == BoundSymbol::Kind::Unflatten) {
    std::string args = render_arguments(trace, sym);
    out += "(" + subclass_type_name(sym) + (args.size() > 2 ? ", " + args.substr(1) : ")");
  } else {
    out += render_arguments(trace, sym);
  }
  const std::string types = output_types(trace, sym);
  if (!types.empty()) out += "  # " + types;
  out += '\n';
  for (const BoundSymbol& sub : sym.subsymbols) print_symbol(out, trace, sub, depth + 1);
}

std::string tuple_of(const Trace& trace, const std::vector<int>& ps) {
  std::string out = "(";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i) out += ", ";
    out += proxy_name(trace, ps[i]);
  }
  if (ps.size() == 1) out += ',';
  return out + ")";
}

void declare(std::string& out, const Trace& trace, const std::vector<int>& ps, std::string_view note = {}) {
  for (int p : ps) {
    const Proxy& proxy = trace.proxies[static_cast<std::size_t>(p)];
    out += "  # " + proxy.name + ": \"" + proxy.type + "\"";
    if (!note.empty()) out += std::string("  ") + std::string(note);
    out += '\n';
  }
}

}  // namespace

namespace {

// Note [A clone's memory format prints None]
// Thunder's trace of torchao's `t().contiguous().t()` shows `core_aten_clone(t214,
// memory_format=None)` where PyTorch's contiguous() passed torch.contiguous_format: Thunder's clone
// keeps no memory format, and its trace prints None. A printed trace (text and JSON) does the same
// for aten.clone's memory_format; the recorded value, which a replay runs, is strata's.
const TraceArg& shown_kwarg(const BoundSymbol& sym, const std::string& name, const TraceArg& a) {
  static const TraceArg none{};
  const bool clone_format = sym.kind != BoundSymbol::Kind::Function && name == "memory_format" &&
                            sym.name.ends_with("aten.clone.default") && a.kind == TraceArg::Kind::Constant;
  return clone_format ? none : a;
}

}  // namespace

std::string render_arguments(const Trace& trace, const BoundSymbol& sym) {
  std::string out = "(";
  bool first = true;
  for (const TraceArg& a : sym.args) {
    if (!first) out += ", ";
    first = false;
    append_arg(out, trace, a);
  }
  for (const auto& [name, a] : sym.kwargs) {
    if (!first) out += ", ";
    first = false;
    out += name + "=";
    append_arg(out, trace, shown_kwarg(sym, name, a));
  }
  return out + ")";
}

std::string to_python(const Trace& trace) {
  std::string out = "# Constructed by " + trace.constructed_by + "\n";
  out += "import torch\naten = torch.ops.aten\n\n@torch.no_grad()\n";
  const bool backward = trace.function_name == "backward_fn";
  if (backward) {
    out += "def backward_fn(saved_for_backward, cotangents):\n";
    out += "  # saved_for_backward: \"Collection\"\n  # cotangents: \"Collection\"\n";
    if (!trace.inputs.empty()) {
      std::string names;
      for (int p : trace.inputs) names += proxy_name(trace, p) + ", ";
      out += "  " + names.substr(0, names.size() - 1) + " = saved_for_backward\n";
      declare(out, trace, trace.inputs);
    }
    std::string names;
    for (int p : trace.cotangents) names += proxy_name(trace, p) + ", ";
    out += "  " + names.substr(0, names.size() - 1) + " = cotangents\n";
    declare(out, trace, trace.cotangents);
  } else {
    out += "def " + trace.function_name + "(";
    for (std::size_t i = 0; i < trace.inputs.size(); ++i) out += (i ? ", " : "") + proxy_name(trace, trace.inputs[i]);
    out += "):\n";
    declare(out, trace, trace.inputs);
  }
  declare(out, trace, trace.constants, "(captured)");
  for (const BoundSymbol& sym : trace.symbols) print_symbol(out, trace, sym, 0);
  const std::string outputs = trace.outputs.size() == 1 && !backward ? proxy_name(trace, trace.outputs[0]) : tuple_of(trace, trace.outputs);
  if (trace.has_backward) {
    out += "  return {'output': " + outputs + ", 'saved_for_backward': " + tuple_of(trace, trace.saved_for_backward) + "}\n";
  } else {
    out += "  return " + outputs + "\n";
  }
  return out;
}

namespace {

nlohmann::ordered_json arg_json(const Trace& trace, const TraceArg& a) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto name = [&](int p) { return p < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(proxy_name(trace, p)); };
  switch (a.kind) {
    case TraceArg::Kind::Proxy: j["tensor"] = name(a.proxy); break;
    case TraceArg::Kind::ProxyList: {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (int p : a.proxies) list.push_back(name(p));
      j["tensors"] = std::move(list);
      break;
    }
    case TraceArg::Kind::Constant: {
      std::string text;
      append_constant(text, a.constant);
      j["value"] = text;
      break;
    }
  }
  return j;
}

nlohmann::ordered_json symbol_json(const Trace& trace, const BoundSymbol& sym) {
  nlohmann::ordered_json j;
  j["kind"] = kind_name(sym.kind);
  j["name"] = sym.name;
  if (sym.subclass) j["subclass"] = subclass_type_name(sym);
  if (!sym.header.empty()) j["header"] = sym.header;
  j["args"] = nlohmann::ordered_json::array();
  for (const TraceArg& a : sym.args) j["args"].push_back(arg_json(trace, a));
  j["kwargs"] = nlohmann::ordered_json::object();
  for (const auto& [name, a] : sym.kwargs) j["kwargs"][name] = arg_json(trace, shown_kwarg(sym, name, a));
  j["outputs"] = nlohmann::ordered_json::array();
  for (const TraceArg& a : sym.outputs) j["outputs"].push_back(arg_json(trace, a));
  j["subsymbols"] = nlohmann::ordered_json::array();
  for (const BoundSymbol& sub : sym.subsymbols) j["subsymbols"].push_back(symbol_json(trace, sub));
  return j;
}

nlohmann::ordered_json names_json(const Trace& trace, const std::vector<int>& ps) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (int p : ps) j.push_back(p < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(proxy_name(trace, p)));
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Trace& trace) {
  nlohmann::ordered_json j;
  j["format"] = "strata.trace";
  j["version"] = 1;
  j["function"] = trace.function_name;
  j["constructed_by"] = trace.constructed_by;
  j["inputs"] = names_json(trace, trace.inputs);
  j["cotangents"] = names_json(trace, trace.cotangents);
  j["constants"] = names_json(trace, trace.constants);
  j["symbols"] = nlohmann::ordered_json::array();
  for (const BoundSymbol& sym : trace.symbols) j["symbols"].push_back(symbol_json(trace, sym));
  j["outputs"] = names_json(trace, trace.outputs);
  if (trace.has_backward) j["saved_for_backward"] = names_json(trace, trace.saved_for_backward);
  // Every value the trace names, with its type.
  nlohmann::ordered_json types = nlohmann::ordered_json::object();
  std::vector<bool> used(trace.proxies.size(), false);
  auto mark = [&](int p) {
    if (p >= 0) used[static_cast<std::size_t>(p)] = true;
  };
  for (const auto* list : {&trace.inputs, &trace.cotangents, &trace.constants})
    for (int p : *list) mark(p);
  for (const BoundSymbol& sym : trace.symbols) for_each_written(sym, mark);
  for (std::size_t p = 0; p < trace.proxies.size(); ++p)
    if (used[p]) types[trace.proxies[p].name] = trace.proxies[p].type;
  j["types"] = std::move(types);
  return j;
}

}  // namespace strata::tracer
