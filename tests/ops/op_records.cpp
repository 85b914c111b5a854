// tests/ops/op_records.cpp: reading the op records and their golden answers, and building a
// record's arguments (Note [One record per op], tests/ops/op_records.h).
#include "tests/ops/op_records.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "autograd/derivative_table.h"
#include "autograd/registration.h"
#include "core/generator.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/test_helpers.h"

namespace strata::testing {

namespace {

const std::regex& tensor_spec() {
  static const std::regex spec(R"(^(T|f32|f64|i64|i8|bool|f8)\[([0-9,\s]*)\]((?::[a-z0-9]+)*)(?:\{([-+0-9.e]+|[-+]?inf|nan),([-+0-9.e]+|[-+]?inf|nan)\})?$)");
  return spec;
}

bool is_tensor_spec(const nlohmann::json& v) { return v.is_string() && std::regex_match(v.get<std::string>(), tensor_spec()); }

ScalarType short_dtype(const std::string& s, ScalarType under_test) {
  if (s == "T") return under_test;
  if (s == "f32") return ScalarType::Float32;
  if (s == "f64") return ScalarType::Float64;
  if (s == "i64") return ScalarType::Int64;
  if (s == "i8") return ScalarType::Int8;
  if (s == "bool") return ScalarType::Bool;
  return ScalarType::Float8_e4m3fn;
}

bool is_floating(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float8_e4m3fn;
}

// The layout and flag tokens of a tensor spec ("t", "expand", "step2", "nograd", "meta").
std::vector<std::string> tokens_of(const std::string& spec) {
  std::smatch m;
  std::regex_match(spec, m, tensor_spec());
  std::vector<std::string> tokens;
  std::istringstream text(m[3].str());
  for (std::string token; std::getline(text, token, ':');)
    if (!token.empty()) tokens.push_back(token);
  return tokens;
}

bool has_token(const std::string& spec, const char* token) {
  const std::vector<std::string> tokens = tokens_of(spec);
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

// One tensor argument, drawn from `g` as the reference script draws it.
Tensor make_tensor(const std::string& spec, ScalarType under_test, Device device, Generator& g) {
  std::smatch m;
  std::regex_match(spec, m, tensor_spec());
  const ScalarType dtype = short_dtype(m[1].str(), under_test);
  std::vector<std::int64_t> shape;
  std::string sizes = m[2].str();
  std::replace(sizes.begin(), sizes.end(), ',', ' ');
  std::istringstream in(sizes);
  for (std::int64_t s; in >> s;) shape.push_back(s);
  const auto has = [&](const char* token) { return has_token(spec, token); };
  const bool transposed = has("t"), expanded = has("expand"), strided = has("step2"), offset = has("offset");
  if (offset) ++shape[0];
  if (has("meta")) device = Device::Meta;
  std::vector<std::int64_t> base = shape;
  if (transposed) std::reverse(base.begin(), base.end());
  if (expanded) base[0] = 1;
  if (strided) base.back() *= 2;
  const TensorOptions f64{.dtype = ScalarType::Float64, .device = device};
  Tensor t;
  if (is_floating(dtype)) {
    if (m[4].matched) {
      const double lo = std::stod(m[4].str()), hi = std::stod(m[5].str());
      t = add(mul(rand(base, f64, &g), Scalar(hi - lo)), Scalar(lo));
    } else {
      t = randn(base, f64, &g);
    }
  } else {
    const std::int64_t lo = m[4].matched ? std::stoll(m[4].str()) : 0;
    const std::int64_t hi = m[4].matched ? std::stoll(m[5].str()) : (dtype == ScalarType::Bool ? 2 : 10);
    t = randint(lo, hi, base, {.device = device}, &g);
  }
  t = to(t, dtype);
  if (transposed) t = strata::t(t);
  if (expanded) t = expand(t, shape);
  if (strided) t = slice(t, -1, std::nullopt, std::nullopt, 2);
  if (offset) t = slice(t, 0, 1, std::nullopt, 1);
  return t;
}

// The handle profiler::_record_function_enter_new returns for a scope named `name`.
IValue record_function_handle(const std::string& name) {
  Stack stack{IValue(std::string_view(name)), IValue()};
  ops::op("profiler::_record_function_enter_new").call(stack);
  return stack.back();
}

IValue convert(const nlohmann::json& v, const SchemaArgument& arg, ScalarType under_test, Device device, Generator& g,
               BuiltCall& call) {
  using K = SchemaType::Kind;
  // On Meta a factory's device is meta too (Note [One record per op]).
  if (arg.type.kind == K::Device && device == Device::Meta && (v.is_null() || v == "cpu")) return IValue(Device::Meta);
  if (v.is_null()) return IValue();
  if (is_tensor_spec(v)) {
    call.tensors.push_back(make_tensor(v.get<std::string>(), under_test, device, g));
    call.nograd.push_back(has_token(v.get<std::string>(), "nograd"));
    return IValue(call.tensors.back());
  }
  if (v.is_array() && !v.empty() && is_tensor_spec(v[0])) {
    std::vector<Tensor> list;
    for (const nlohmann::json& e : v) {
      list.push_back(make_tensor(e.get<std::string>(), under_test, device, g));
      call.tensors.push_back(list.back());
      call.nograd.push_back(has_token(e.get<std::string>(), "nograd"));
    }
    return IValue(std::move(list));
  }
  // A float the JSON cannot hold: "inf", "-inf", "nan", as the golden files write them.
  if (v.is_string() && (arg.type.kind == K::Float || arg.type.kind == K::Scalar) &&
      (v == "inf" || v == "-inf" || v == "nan")) {
    const double x = v == "nan" ? std::nan("") : (v == "inf" ? INFINITY : -INFINITY);
    return arg.type.kind == K::Scalar ? IValue(Scalar(x)) : IValue(x);
  }
  switch (arg.type.kind) {
    case K::ScalarType: return IValue(v.get<std::string>() == "T" ? under_test : dtype_named(v.get<std::string>()));
    case K::Device: return IValue(v.get<std::string>() == "meta" ? Device::Meta : Device::CPU);
    case K::Layout:
      REQUIRE_MESSAGE(v == "strided", "strata has only the strided layout, not ", v.dump());
      return IValue(Layout::Strided);
    case K::MemoryFormat:
      return IValue(v.get<std::string>() == "contiguous_format" ? MemoryFormat::Contiguous : MemoryFormat::Preserve);
    case K::Str: return IValue(std::string_view(v.get_ref<const std::string&>()));
    case K::Custom:
      REQUIRE_MESSAGE(arg.type.custom == "__torch__.torch.classes.profiler._RecordFunction",
                      "no record argument makes a ", arg.type.custom);
      return record_function_handle(v.get<std::string>());
    default: break;
  }
  if (v.is_boolean()) return IValue(v.get<bool>());
  if (v.is_array() && arg.type.kind == K::Bool) {  // bool[3]: as ints (Note [A bool[3] argument is boxed as ints])
    std::vector<std::int64_t> ints;
    for (const nlohmann::json& b : v) ints.push_back(b.get<bool>() ? 1 : 0);
    return IValue(IntArrayRef(ints));
  }
  if (v.is_array()) {
    const std::vector<std::int64_t> ints = v.get<std::vector<std::int64_t>>();
    return IValue(IntArrayRef(ints));
  }
  if (v.is_number_integer()) {
    if (arg.type.kind == K::Scalar) return IValue(Scalar(v.get<std::int64_t>()));
    if (arg.type.kind == K::Float) return IValue(static_cast<double>(v.get<std::int64_t>()));
    return IValue(v.get<std::int64_t>());
  }
  if (v.is_number()) return arg.type.kind == K::Scalar ? IValue(Scalar(v.get<double>())) : IValue(v.get<double>());
  FAIL("cannot read the argument ", v.dump(), " for ", arg.name);
  return IValue();
}

std::vector<OpRecord> load() {
  ops::register_ops();
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(STRATA_RECORDS_DIR))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<OpRecord> out;
  for (const std::filesystem::path& file : files) {
    const std::string family = file.stem().string();
    const nlohmann::json records = nlohmann::json::parse(read_text(file.string()));
    const nlohmann::json golden = read_golden_json("op_records/" + family + ".json");
    for (const nlohmann::json& j : records) {
      OpRecord r;
      r.family = family;
      r.op = j.at("op").get<std::string>();
      const std::string qualified = r.op.substr(0, r.op.find('.'));
      const std::string overload = r.op.find('.') == std::string::npos ? "" : r.op.substr(r.op.find('.') + 1);
      r.handle = ops::op(qualified, overload);
      const std::vector<std::string> dtypes =
          j.value("dtypes", std::vector<std::string>{"float32", "float64"});
      const auto optional_string = [](const nlohmann::json& o, const char* key) {
        return o.contains(key) ? std::optional(o.at(key).get<std::string>()) : std::nullopt;
      };
      for (const nlohmann::json& s : j.value("samples", nlohmann::json::array()))
        r.samples.push_back({s.at("args"), s.value("dtypes", dtypes), s.value("grad", true), s.value("note", ""),
                             optional_string(s, "sequence"), optional_string(s, "values")});
      for (const nlohmann::json& e : j.value("errors", nlohmann::json::array())) {
        RecordError err{e.at("args"), e.value("dtype", dtypes.front()), e.at("message").get<std::string>(),
                        optional_string(e, "strata_only"), optional_string(e, "pytorch_message"), e.value("differs", "")};
        REQUIRE_MESSAGE((!err.pytorch_message || !err.differs.empty()), r.op, ": an error's \"pytorch_message\" needs "
                        "\"differs\", the choice that makes strata's words differ");
        r.errors.push_back(std::move(err));
      }
      if (j.contains("grad")) r.grad = j.at("grad").get<bool>();
      r.no_gradgrad = optional_string(j, "gradgrad");
      r.values = j.value("values", "exact");
      r.strides = j.value("strides", false);
      r.sequence = j.value("sequence", true);
      r.rtol = j.value("rtol", 1e-5);
      r.atol = j.value("atol", 1e-6);
      r.pytorch_answers = !j.contains("pytorch");
      REQUIRE_MESSAGE(golden.contains(r.op), r.op, " has no answers in tests/golden/op_records/", family,
                      ".json: run scripts/reference/op_records_reference.py ", family);
      r.golden = golden.at(r.op);
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

ScalarType dtype_named(const std::string& name) {
  for (ScalarType t : {ScalarType::Float32, ScalarType::Float64, ScalarType::Int64, ScalarType::Int8, ScalarType::Bool,
                       ScalarType::Float8_e4m3fn})
    if (dtype_name(t) == name) return t;
  FAIL("no dtype named ", name);
  return ScalarType::Float32;
}

const std::string& values_of(const OpRecord& record, const RecordSample& sample) {
  return sample.values ? *sample.values : record.values;
}

const std::vector<OpRecord>& op_records() {
  static const std::vector<OpRecord> records = load();
  return records;
}

BuiltCall build_call(const OpRecord& record, const nlohmann::json& args, ScalarType dtype, Device device) {
  const FunctionSchema& schema = record.handle.schema();
  REQUIRE_MESSAGE(args.size() <= schema.arguments().size(), record.op, ": more arguments than the schema has");
  Generator g;
  g.manual_seed(0);
  BuiltCall call;
  for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
    if (i < args.size()) call.stack.push_back(convert(args[i], schema.arguments()[i], dtype, device, g, call));
    else if (schema.arguments()[i].type.kind == SchemaType::Kind::Device && device == Device::Meta)
      call.stack.push_back(convert(nullptr, schema.arguments()[i], dtype, device, g, call));
    else call.stack.push_back(schema.default_value(i));
  }
  return call;
}

bool is_floating(const Tensor& t) { return t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64; }

bool repeats_memory(const Tensor& t) {
  for (std::int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[static_cast<std::size_t>(d)] > 1 && t.strides()[static_cast<std::size_t>(d)] == 0) return true;
  return false;
}

bool writes_first(const OpRecord& r) {
  const auto& args = r.handle.schema().arguments();
  return !args.empty() && args[0].type.is_write();
}

std::vector<Tensor> call(const OpRecord& r, Stack stack) {
  if (writes_first(r)) stack[0] = IValue(clone(stack[0].to_tensor()));
  r.handle.call(stack);
  return tensors_of(stack);
}

Stack substituted(const Stack& stack, const std::vector<Tensor>& xs) {
  Stack out;
  std::size_t next = 0;
  for (const IValue& v : stack) {
    if (v.is_tensor()) {
      out.push_back(IValue(xs[next++]));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list;
      for (std::size_t i = 0; i < v.to_tensor_list().size(); ++i) list.push_back(xs[next++]);
      out.push_back(IValue(std::move(list)));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

bool differentiable(const OpRecord& r) {
  if (r.grad) return *r.grad;
  autograd::register_autograd();
  const autograd::ResolvedRow* row = autograd::derivative_table().find(r.handle);
  return row && row->kind != autograd::Differentiability::NonDifferentiable;
}

std::vector<Tensor> tensors_of(const Stack& stack) {
  std::vector<Tensor> out;
  for (const IValue& v : stack) {
    if (v.is_tensor()) out.push_back(v.to_tensor());
    else if (v.is_tensor_list())
      for (const Tensor& t : v.to_tensor_list()) out.push_back(t);
  }
  return out;
}

}  // namespace strata::testing
