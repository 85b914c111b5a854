// tests/fuzz/api_fuzzer.cpp: the library API fuzzer. An input is a small program over a pool of live
// tensors: it makes tensors of any rank, size, stride, dtype and device, wraps them in subclasses,
// enters modes and no-grad regions, calls every op of the op table through the dispatcher with
// arguments drawn from the op's schema, calls the composites and data accessors a user calls directly,
// and runs backward passes. Any failure must be a strata::Error; everything else aborts (api_world.h).
#include <algorithm>
#include <memory>
#include <sstream>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/registration.h"
#include "autograd/variable.h"
#include "core/dispatch_trace.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "ops/op_table.h"
#include "tests/fuzz/api_calls.h"
#include "tests/fuzz/api_composites.h"
#include "tests/fuzz/api_known_bugs.h"
#include "tests/fuzz/api_subjects.h"
#include "tracer/logging_tensor.h"
#include "tracer/op_counter.h"

// Note [The API fuzzer's byte code]
// libFuzzer mutates bytes; read as a program, a mutated byte changes one operand or one instruction,
// so the corpus keeps meaning what it meant. Each instruction is an opcode byte (mod 16) and operands;
// reading past the end yields zeros, and a program runs at most kMaxInstructions. Slots are a byte
// mod 8. Value classes (sizes, ints, doubles, dtypes) are in api_bytes.h: a class byte >= 0xF8 is
// followed by an exact 8-byte value.
//   0 make      dst dtype device rank size... fill [fill operands]     (fresh tensor; see make())
//   1 undefined dst                                                     (Tensor())
//   2 view      dst src kind operands          (t, transpose, expand, as_strided, view, unsqueeze...)
//   3 wrap      dst src flags                  (bit 0: AliasingWrapper, else LoggingTensor; bit 1: requires grad)
//   4 requires_grad slot flag
//   5 mode      kind                           (push OpCounter, push KeepingMode, pop)
//   6 grad_mode kind                           (push no_grad, push enable_grad, pop)
//   7 call      op-index dst arg...            (all_ops()[index mod count], arguments per api_calls.cpp)
//   8 call_named length name dst arg...        ("aten::sum.dim_IntList": what the readable seeds use)
//   9 composite dst src kind [operands] [more srcs]                    (api_composites.cpp)
//  10 backward  root flags [gradient slot] [second root]
//  11 access    slot kind [operand]            (item, to_vector, data_ptr, printing, metadata)
//  12 grad      slot kind [operand]            (read .grad, set it to None, a tensor, zeros)
//  13 gradcheck inputs sizes... kind [op-index arg...]
//  14 trace                                    (dispatch trace on / off, into a string)
//  15 slot      kind a b                       (drop a, or copy a to b)
// An argument of a call is a class byte: below 0xE0 a value of the schema's type (its low bits pick
// how: a pool slot, a size list like the first tensor's, a dimension in range...), 0xE0-0xE7 the
// schema's default, 0xE8-0xEF a value of another type on purpose, 0xF0 + k an exactly spelled value of
// kind k (0 None, 1 slot, 2 int64, 3 double, 4 bool, 5 int list, 6 dtype, 7 device, 8 memory format,
// 9 string, 10 default, 11 tensor list, 12 generator, 13 object), 0xFE the end of the arguments.
// tests/fuzz/api_seed.py writes programs from a readable text form (tests/fuzz/api_seeds/).

namespace strata::fuzz {
namespace {

constexpr int kMaxInstructions = 64;
constexpr std::int64_t kMaxGradcheckOutputs = 16;

class Interpreter {
 public:
  Interpreter(bool skip_known_bugs, bool verbose) : verbose_(verbose) {
    w_.skip_known_bugs = skip_known_bugs;
    w_.verbose = verbose;
  }
  ~Interpreter();
  void run(ByteReader& r);

 private:
  void make(ByteReader& r);
  void fill(ByteReader& r, const Tensor& t, std::uint8_t kind);
  void view(ByteReader& r);
  void wrap(ByteReader& r);
  void mode(ByteReader& r);
  void grad_mode(ByteReader& r);
  void backward(ByteReader& r);
  void access(ByteReader& r);
  void grad(ByteReader& r);
  void gradcheck(ByteReader& r);
  void trace();
  void keep_leaf(const Tensor& t) {
    if (t.defined()) w_.leaves.push_back(t);
  }

  void describe(int step, std::uint8_t opcode) const;

  World w_;
  bool verbose_;
  std::vector<std::unique_ptr<DispatchMode>> modes_;
  std::vector<std::unique_ptr<ModeGuard>> mode_guards_;
  std::vector<std::unique_ptr<autograd::GradModeGuard>> grad_guards_;
  std::ostringstream trace_out_;
  std::unique_ptr<DispatchTraceGuard> trace_;
};

Interpreter::~Interpreter() {
  trace_.reset();
  while (!mode_guards_.empty()) mode_guards_.pop_back();
  modes_.clear();
  while (!grad_guards_.empty()) grad_guards_.pop_back();
  // A gradient's history may hold its own leaf (backward with create_graph, or a grad set to a
  // function of the leaf): a reference cycle PyTorch documents. Clearing the grads breaks it.
  for (const Tensor& leaf : w_.leaves) attempt("clearing a grad", [&] { set_grad(leaf, Tensor()); });
}

void Interpreter::run(ByteReader& r) {
  for (int step = 0; step < kMaxInstructions && !r.empty(); ++step) {
    if (trace_out_.tellp() > (1 << 20)) trace_out_.str("");
    const std::uint8_t opcode = r.u8() % 16;
    if (verbose_) describe(step, opcode);
    switch (opcode) {
      case 0: make(r); break;
      case 1: w_.slot(r.u8()) = Slot{}; break;
      case 2: view(r); break;
      case 3: wrap(r); break;
      case 4: {
        const Tensor t = w_.slot(r.u8()).tensor;
        const bool flag = r.u8() & 1;
        if (attempt("requires_grad_", [&] { requires_grad_(t, flag); }) && flag) keep_leaf(t);
        break;
      }
      case 5: mode(r); break;
      case 6: grad_mode(r); break;
      case 7: {
        const auto& ops = all_ops();
        call_op(w_, r, ops[r.u8() % ops.size()]);
        break;
      }
      case 8: {
        const std::string name(r.bytes(r.u8()));
        const std::size_t dot = name.find('.', name.find("::") == std::string::npos ? 0 : name.find("::"));
        const auto op = Dispatcher::singleton().find(name.substr(0, dot), dot == std::string::npos ? "" : name.substr(dot + 1));
        if (op) call_op(w_, r, *op);
        break;
      }
      case 9: call_composite(w_, r); break;
      case 10: backward(r); break;
      case 11: access(r); break;
      case 12: grad(r); break;
      case 13: gradcheck(r); break;
      case 14: trace(); break;
      default: {
        const std::uint8_t kind = r.u8(), a = r.u8(), b = r.u8();
        if (kind & 1) w_.slot(b) = w_.slot(a);
        else w_.slot(a) = Slot{};
      }
    }
  }
}

// STRATA_FUZZ_VERBOSE=1: each instruction and the pool before it, on stderr (for reading a seed).
void Interpreter::describe(int step, std::uint8_t opcode) const {
  static constexpr const char* kNames[] = {"make", "undefined", "view", "wrap", "requires_grad", "mode", "grad_mode", "call",
                                           "call_named", "composite", "backward", "access", "grad", "gradcheck", "trace", "slot"};
  std::fprintf(stderr, "step %d: %s\n", step, kNames[opcode]);
  for (std::size_t i = 0; i < kSlots; ++i) {
    const Tensor& t = w_.slots[i].tensor;
    if (!t.defined()) continue;
    std::fprintf(stderr, "  %%%zu %s %s %s%s%s%s%s\n", i, shape_str(t.sizes()).c_str(), std::string(dtype_name(t.dtype())).c_str(),
                 std::string(device_name(t.device())).c_str(), t.subclass() ? " wrapper" : "",
                 t.impl()->has_storage() || t.subclass() || t.is_meta() ? "" : " NO STORAGE", t.requires_grad() ? " requires_grad" : "",
                 w_.slots[i].tainted ? " tainted" : "");
  }
}

// make: dst dtype device rank size... fill. Sizes that overflow or are negative must be refused;
// a CPU tensor of more than kMaxElements is made on meta instead.
void Interpreter::make(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const ScalarType dtype = dtype_value(r.u8());
  Device device = r.u8() % 8 == 7 ? Device::Meta : Device::CPU;
  DimVector sizes;
  for (std::size_t n = r.pick(7); n > 0; --n) sizes.push_back(size_value(r));
  const std::uint8_t fill_kind = r.u8();
  // PyTorch's rule: a negative size, a product of sizes that overflows uint64 at any step (so
  // [2^40, 2^40, 0] is refused and [2^62, 2, 0] is not), or more bytes than int64 counts.
  std::uint64_t numel = 1;
  bool bad = false;
  for (std::int64_t s : sizes) bad |= s < 0 || mul_overflows(numel, static_cast<std::uint64_t>(s), &numel);
  bad |= contiguous_bytes_overflow(numel, element_size(dtype));
  if (!bad && device == Device::CPU && numel > kMaxElements) device = Device::Meta;
  Tensor t;
  const bool made = attempt("empty", [&] { t = empty(sizes, {.dtype = dtype, .device = device}); });
  if (made && bad) fail("empty", "accepted sizes that overflow or are negative", shape_str(sizes).c_str());
  if (!made) return;
  if (device == Device::CPU && numel > 0) fill(r, t, fill_kind);
  store(w_, dst, t, false);
}

// Fills a fresh CPU tensor: random, zeros, one value, a pattern of values (NaN and infinities
// included), a ramp, or nothing (uninitialised, as empty() leaves it).
void Interpreter::fill(ByteReader& r, const Tensor& t, std::uint8_t kind) {
  const bool floating = is_floating_point(t.dtype());
  const bool integral_target = t.dtype() == ScalarType::Int64 && w_.skip_known_bugs;
  attempt("filling a tensor", [&] {
    switch (kind % 8) {
      case 0: floating ? normal_(t) : zero_(t); break;
      case 1: zero_(t); break;
      case 2: fill_(t, floating ? Scalar(double_value(r)) : Scalar(int_value(r))); break;
      case 3:
      case 4:
      case 7: {
        std::vector<double> pattern;
        for (std::size_t n = 1 + r.pick(8); n > 0; --n) {
          double v = kind % 8 == 3 ? double_value(r) : kind % 8 == 4 ? static_cast<double>(pattern.size()) * 0.5 - 1.0
                                                                    : static_cast<double>(int_value(r) % 7);
          if (integral_target && !(std::abs(v) < 1e9)) v = 0;  // known bug: NaN and inf to int64
          pattern.push_back(v);
        }
        std::vector<double> values(static_cast<std::size_t>(t.numel()));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = pattern[i % pattern.size()];
        copy_(t, tensor<double>(values, t.sizes()));
        break;
      }
      case 5: floating ? uniform_(t, -2, 2) : fill_(t, 1); break;
      default:
        if (w_.skip_known_bugs && t.dtype() == ScalarType::Bool) zero_(t);  // known bug: uninitialised bools
        break;
    }
  });
}

// view: dst src kind operands. Geometry through the front-end view functions.
void Interpreter::view(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const Slot src = w_.slot(r.u8());
  const Tensor& x = src.tensor;
  const std::uint8_t kind = r.u8();
  const std::int64_t rank = x.defined() ? x.dim() : 0;
  auto dim = [&] {
    const std::uint8_t b = r.u8();
    return b >= kExplicit ? r.i64() : static_cast<std::int64_t>(b % (2 * rank + 3)) - rank - 1;
  };
  Tensor out;
  const bool ok = attempt("a view", [&] {
    switch (kind % 10) {
      case 0: out = t(x); break;
      case 1: {
        const std::int64_t d0 = dim(), d1 = dim();
        out = transpose(x, d0, d1);
        break;
      }
      case 2: {  // size-1 dims grow, a few new leading dims, some -1s; or (mode >= 0x80) a spelled target
        DimVector target;
        const std::uint8_t mode = r.u8();
        for (std::size_t n = mode >= 0x80 ? (mode & 0x7F) % 9 : mode % 3; n > 0; --n) target.push_back(size_value(r));
        if (x.defined() && mode < 0x80)
          for (std::int64_t s : x.sizes()) {
            const std::uint8_t b = r.u8();
            target.push_back(b % 4 == 0 ? -1 : s == 1 && b % 4 == 1 ? size_value(r) : s);
          }
        out = expand(x, target);
        break;
      }
      case 3: {
        DimVector sizes, strides;
        for (std::size_t n = r.pick(5); n > 0; --n) {
          sizes.push_back(size_value(r));
          const std::uint8_t b = r.u8();
          strides.push_back(b >= kExplicit ? r.i64() : b >= kHuge ? huge_value(b) : b % 4);
        }
        const std::uint8_t b = r.u8();
        const std::optional<std::int64_t> offset = b & 1 ? std::nullopt : std::optional<std::int64_t>(int_value(r));
        out = as_strided(x, sizes, strides, offset);
        break;
      }
      case 4: {
        DimVector shape;
        if (x.defined() && r.u8() & 1) {
          shape = DimVector(x.sizes());
          std::reverse(shape.begin(), shape.end());
        } else {
          for (std::size_t n = r.pick(4); n > 0; --n) shape.push_back(r.u8() & 1 ? -1 : size_value(r));
        }
        out = strata::view(x, shape);
        break;
      }
      case 5: out = unsqueeze(x, dim()); break;
      case 6: out = squeeze(x, dim()); break;
      case 7: out = detach(x); break;
      case 8: {  // x's own geometry, one dim broadcast (stride 0)
        if (!x.defined()) return;
        DimVector sizes(x.sizes()), strides(x.strides());
        if (!sizes.empty()) {
          const std::size_t d = r.pick(sizes.size());
          sizes[d] = size_value(r);
          strides[d] = 0;
        }
        out = as_strided(x, sizes, strides, x.storage_offset());
        break;
      }
      default: {
        DimVector shape;
        for (std::size_t n = r.pick(4); n > 0; --n) shape.push_back(size_value(r));
        out = _unsafe_view(x, shape);
      }
    }
  });
  if (ok && out.defined()) store(w_, dst, out, src.tainted);
}

void Interpreter::wrap(ByteReader& r) {
  const std::uint8_t dst = r.u8();
  const Slot src = w_.slot(r.u8());
  const std::uint8_t flags = r.u8();
  Tensor out;
  if (!attempt("wrapping a tensor", [&] {
        // Known bug: the views an AliasingWrapper takes below the interposer have no storage, and the
        // composites that take such views (linear's t) crash on them too.
        const bool aliasing = flags & 1 && !w_.skip_known_bugs;
        out = aliasing ? AliasingWrapper::wrap(src.tensor)
                        : tracer::LoggingTensor::wrap(src.tensor, std::make_shared<tracer::LoggingTensor::Log>());
        if (flags & 2) requires_grad_(out);
      }))
    return;
  if (flags & 2) keep_leaf(out);
  store(w_, dst, out, src.tainted);
}

void Interpreter::mode(ByteReader& r) {
  const std::uint8_t kind = r.u8() % 4;
  if (kind >= 2) {
    if (!mode_guards_.empty()) mode_guards_.pop_back();  // the mode object stays until the input ends
    return;
  }
  if (mode_guards_.size() >= 4) return;
  if (kind == 0) modes_.push_back(std::make_unique<tracer::OpCounter>());
  else modes_.push_back(std::make_unique<KeepingMode>());
  mode_guards_.push_back(std::make_unique<ModeGuard>(*modes_.back()));
}

void Interpreter::grad_mode(ByteReader& r) {
  const std::uint8_t kind = r.u8() % 3;
  if (kind == 2) {
    if (!grad_guards_.empty()) grad_guards_.pop_back();
  } else if (grad_guards_.size() < 4) {
    grad_guards_.push_back(std::make_unique<autograd::GradModeGuard>(kind == 1));
  }
}

// backward: root flags. flags: bits 0-1 the gradient (none, ones_like, a slot, zeros_like), bits 2-3
// retain_graph (default, true, false), bit 4 create_graph, bit 5 a second root (vector form).
void Interpreter::backward(ByteReader& r) {
  const Slot root = w_.slot(r.u8());
  const std::uint8_t flags = r.u8();
  if (!root.tensor.defined() || root.tainted) return;
  Tensor gradient;
  switch (flags % 4) {
    case 1: attempt("ones_like for a gradient", [&] { gradient = ones_like(root.tensor); }); break;
    case 2: {
      const Slot& g = w_.slot(r.u8());
      if (g.tainted) return;
      gradient = g.tensor;
      break;
    }
    case 3: attempt("zeros_like for a gradient", [&] { gradient = zeros_like(root.tensor); }); break;
    default: break;
  }
  const std::uint8_t retain_bits = (flags >> 2) % 4;
  const std::optional<bool> retain = retain_bits == 1 ? std::optional<bool>(true)
                                   : retain_bits == 2 ? std::optional<bool>(false)
                                                      : std::nullopt;
  const bool create = flags & 0x10;
  if (flags & 0x20) {
    const Slot other = w_.slot(r.u8());
    if (other.tainted) return;
    attempt("backward of two roots", [&] {
      strata::backward(std::vector<Tensor>{root.tensor, other.tensor}, std::vector<Tensor>{gradient, Tensor()}, retain, create);
    });
    return;
  }
  attempt("backward", [&] { strata::backward(root.tensor, gradient, retain, create); });
}

// A tensor with elements whose data pointer is null would crash the caller who reads it.
void check_pointer(const Tensor& t, const void* data) {
  if (!data && t.numel() > 0) fail("data_ptr", "a null data pointer for a tensor with elements", shape_str(t.sizes()).c_str());
}

// access: slot kind. What a user reads from a tensor directly.
void Interpreter::access(ByteReader& r) {
  const Slot& s = w_.slot(r.u8());
  const Tensor t = s.tensor;
  const std::uint8_t kind = r.u8() % 12;
  const bool small = !t.defined() || t.numel() <= kMaxElements;
  attempt("reading a tensor", [&] {
    switch (kind) {
      case 0: t.item(); break;
      case 1: if (small) t.to_vector<float>(); break;
      case 2: if (small) t.to_vector<double>(); break;
      case 3:
        if (small && !(w_.skip_known_bugs && known_bugs::float_to_int64({t}, true))) t.to_vector<std::int64_t>();
        break;
      case 4: if (small) t.to_vector<bool>(); break;
      case 5:
        if (!t.defined()) return;
        visit_dtype(t.dtype(), [&](auto zero) { check_pointer(t, t.data_ptr<decltype(zero)>()); });
        break;
      case 6: visit_dtype(dtype_value(r.u8()), [&](auto zero) { check_pointer(t, t.data_ptr<decltype(zero)>()); }); break;
      case 7: check_pointer(t, t.raw_data()); break;
      case 8:
        if (!(w_.skip_known_bugs && known_bugs::print_huge(t))) t.str();
        break;
      case 9:
        if (!(w_.skip_known_bugs && known_bugs::print_huge(t))) {
          std::ostringstream out;
          out << t;
        }
        break;
      case 10:
        if (const autograd::Node* node = t.grad_fn()) (void)node->name();
        (void)t.is_leaf();
        (void)t.requires_grad();
        break;
      default: {
        if (!t.defined()) return;
        const std::int64_t d = int_value(r);
        (void)t.is_contiguous();
        (void)t.is_non_overlapping_and_dense();
        (void)t.storage_offset();
        (void)t.size(d);
        (void)t.stride(d);
      }
    }
  });
}

// grad: slot kind [operand]. kind 0 reads .grad into slot `operand`; 1 sets it to None; 2 to a pool
// tensor; 3 to zeros_like.
void Interpreter::grad(ByteReader& r) {
  const Slot s = w_.slot(r.u8());
  const Tensor& t = s.tensor;
  switch (r.u8() % 4) {
    case 0: {
      const std::uint8_t dst = r.u8();
      store(w_, dst, t.grad(), s.tainted);
      break;
    }
    case 1: attempt("set_grad(None)", [&] { set_grad(t, Tensor()); }); break;
    case 2: {
      const Slot& g = w_.slot(r.u8());
      if (attempt("set_grad", [&] { set_grad(t, g.tensor); })) keep_leaf(t);
      break;
    }
    default:
      if (s.tainted || is_huge(t)) return;
      if (attempt("set_grad(zeros_like)", [&] { set_grad(t, zeros_like(t)); })) keep_leaf(t);
  }
}

// gradcheck: count, per input a rank and sizes (1 to 3), kind, then an op and its arguments over a
// pool of just the inputs. kind 0xFF makes the function return an undefined tensor (a known bug).
void Interpreter::gradcheck(ByteReader& r) {
  std::vector<Tensor> inputs;
  World scratch;
  scratch.skip_known_bugs = w_.skip_known_bugs;
  for (std::size_t n = 1 + r.pick(2); n > 0; --n) {
    DimVector sizes;
    for (std::size_t k = r.pick(3); k > 0; --k) sizes.push_back(1 + r.pick(3));
    Tensor x = randn(sizes, {.dtype = ScalarType::Float64});
    requires_grad_(x);
    inputs.push_back(x);
  }
  for (std::size_t i = 0; i < kSlots; ++i) scratch.slots[i].tensor = inputs[i % inputs.size()];
  const std::uint8_t kind = r.u8();
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  if (kind == 0xFF && !w_.skip_known_bugs) {
    fn = [](const std::vector<Tensor>& in) { return in[0].defined() ? Tensor() : in[0]; };
  } else {
    const auto& ops = all_ops();
    const OperatorHandle op = ops[r.u8() % ops.size()];
    const Stack args = read_arguments(scratch, r, op);
    if (args.size() != op.schema().arguments().size() || op.schema().returns().empty()) return;
    if (!rehearse_call(op, args).affordable) return;
    fn = [op, args](const std::vector<Tensor>&) {
      Stack stack = args;
      op.call(stack);
      return stack[0].is_tensor() ? stack[0].to_tensor() : Tensor();
    };
    Tensor probe;
    if (!attempt("a gradcheck probe", [&] { probe = fn(inputs); })) return;
    if (!probe.defined() || probe.numel() > kMaxGradcheckOutputs || probe.device() != Device::CPU) return;
    if (w_.skip_known_bugs && known_bugs::storage_less_cpu_tensor(probe)) return;
  }
  attempt("gradcheck", [&] { autograd::gradcheck(fn, inputs); });
}

void Interpreter::trace() {
  if (trace_) trace_.reset();
  else trace_ = std::make_unique<DispatchTraceGuard>(trace_out_);
}

}  // namespace
}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto flag = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v && *v != '0';
  };
  static const bool skip_known_bugs = [&] {
    strata::ops::register_ops();
    strata::autograd::register_autograd();
    return flag("STRATA_FUZZ_SKIP_KNOWN_BUGS");
  }();
  static const bool verbose = flag("STRATA_FUZZ_VERBOSE");
  strata::manual_seed(0);
  strata::fuzz::ByteReader r(data, size);
  strata::fuzz::Interpreter(skip_known_bugs, verbose).run(r);
  return 0;
}
