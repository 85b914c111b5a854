// modes/flop_counter.cpp: the formulas (Note [FLOP formulas]), counting, and upstream's table.
#include "modes/flop_counter.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace strata::tracer {

namespace {

// A product of FLOP factors; counts past int64 (only fake tensors can be that large) are an error.
std::int64_t checked_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t n = 1;
  for (std::int64_t f : factors)
    STRATA_CHECK(!__builtin_mul_overflow(n, f, &n), "FlopCounterMode: a FLOP count overflows int64");
  return n;
}

// A matrix product's FLOPs from its operands' shapes, or 0 when they are not what the op accepts.
std::int64_t mm_flops(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dim() != 2 || b.dim() != 2 || a.size(1) != b.size(0)) return 0;
  return checked_product({a.size(0), b.size(1), 2, a.size(1)});
}
std::int64_t bmm_flops(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dim() != 3 || b.dim() != 3 || a.size(0) != b.size(0) || a.size(2) != b.size(1))
    return 0;
  return checked_product({a.size(0), a.size(1), b.size(2), 2, a.size(2)});
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const FlopFormula>> formulas;
  std::atomic<std::uint64_t> version{0};
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: modes may count during static destruction
    auto tensor = [](const IValue* args, int i) { return args[i].is_tensor() ? args[i].to_tensor() : Tensor(); };
    reg->formulas["aten::mm"] = std::make_shared<FlopFormula>(
        [tensor](const IValue* a) { return mm_flops(tensor(a, 0), tensor(a, 1)); });
    reg->formulas["aten::addmm"] = std::make_shared<FlopFormula>(
        [tensor](const IValue* a) { return mm_flops(tensor(a, 1), tensor(a, 2)); });
    reg->formulas["aten::bmm"] = std::make_shared<FlopFormula>(
        [tensor](const IValue* a) { return bmm_flops(tensor(a, 0), tensor(a, 1)); });
    reg->formulas["aten::baddbmm"] = std::make_shared<FlopFormula>(
        [tensor](const IValue* a) { return bmm_flops(tensor(a, 1), tensor(a, 2)); });
    return reg;
  }();
  return *r;
}

std::shared_ptr<const FlopFormula> find_formula(const OperatorHandle& op) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.formulas.find(op.name().qualified());
  return it == r.formulas.end() ? nullptr : it->second;
}

// The formulas each op index resolved to, per thread, rebuilt when the registry changes.
struct FormulaCache {
  std::uint64_t version = ~std::uint64_t{0};
  std::vector<std::uint8_t> known;
  std::vector<std::shared_ptr<const FlopFormula>> formulas;
  const FlopFormula* get(const OperatorHandle& op) {
    const std::uint64_t v = registry().version.load(std::memory_order_acquire);
    if (v != version) known.assign(known.size(), 0), version = v;
    const std::size_t i = op.index();
    if (i >= known.size()) known.resize(i + 1, 0), formulas.resize(i + 1);
    if (!known[i]) formulas[i] = find_formula(op), known[i] = 1;
    return formulas[i].get();
  }
};
FormulaCache& formula_cache() {
  thread_local FormulaCache cache;
  return cache;
}

}  // namespace

std::optional<std::int64_t> registered_flops(const OperatorHandle& op, const IValue* args) {
  const FlopFormula* formula = formula_cache().get(op);
  if (!formula) return std::nullopt;
  return (*formula)(args);
}

namespace {

// An op's name as upstream's table shows its OpOverloadPacket: "aten.addmm".
std::string packet_name(const OperatorHandle& op) { return op.name().ns + "." + op.name().name; }

std::int64_t total_of(const FlopCounterMode::OpCounts& ops) {
  std::int64_t n = 0;
  for (const auto& [op, flops] : ops)
    STRATA_CHECK(!__builtin_add_overflow(n, flops, &n), "FlopCounterMode: the FLOP total overflows int64");
  return n;
}

// Note [The FLOP table's numbers]
// Upstream picks one suffix for the whole table from the total's digit count (so 1.01B shows as
// 1010.000M), prints each count divided by 1000^i with three decimals, and percentages with two.
// tabulate then parses numeric-looking cells: when the suffix is empty every FLOP cell is a number
// ("512.000") and tabulate prints the column in its "g" format ("512"), which this reproduces.
constexpr std::array<const char*, 5> kSuffixes = {"", "K", "M", "B", "T"};
std::size_t suffix_index(std::int64_t total) {
  const auto digits = static_cast<std::int64_t>(std::to_string(total).size());
  return static_cast<std::size_t>(std::max<std::int64_t>(0, std::min<std::int64_t>(4, (digits - 2) / 3)));
}
std::string with_suffix(std::int64_t n, std::size_t index) {
  double divisor = 1;
  for (std::size_t i = 0; i < index; ++i) divisor *= 1000;
  char buf[64];
  if (index == 0) std::snprintf(buf, sizeof buf, "%g", static_cast<double>(n));  // tabulate's numparse
  else std::snprintf(buf, sizeof buf, "%.3f%s", static_cast<double>(n) / divisor, kSuffixes[index]);
  return buf;
}
std::string percent(std::int64_t n, std::int64_t total) {
  if (total == 0) return "0%";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", static_cast<double>(n) / static_cast<double>(total) * 100);
  return buf;
}

// tabulate's "simple" format with headers: columns two spaces apart, each as wide as its widest cell
// and at least its header plus two; the first column left-aligned, the others right-aligned.
using Row = std::array<std::string, 3>;
std::string tabulate_simple(const Row& header, const std::vector<Row>& rows) {
  std::array<std::size_t, 3> width{};
  for (std::size_t c = 0; c < 3; ++c) {
    width[c] = header[c].size() + 2;
    for (const Row& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const Row& r) {
    std::string out = r[0] + std::string(width[0] - r[0].size(), ' ');
    for (std::size_t c = 1; c < 3; ++c) out += "  " + std::string(width[c] - r[c].size(), ' ') + r[c];
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::string out = line(header) + "\n";
  out += std::string(width[0], '-') + "  " + std::string(width[1], '-') + "  " + std::string(width[2], '-');
  for (const Row& r : rows) out += "\n" + line(r);
  return out;
}

}  // namespace

void register_flop_formula(const std::string& qualified_name, FlopFormula formula) {
  STRATA_CHECK(static_cast<bool>(formula), "register_flop_formula(", qualified_name, "): expected a formula, got none");
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.formulas[qualified_name] = std::make_shared<FlopFormula>(std::move(formula));
  r.version.fetch_add(1, std::memory_order_release);
}

namespace {
// A formula's key: an op's qualified name without its overload ("aten::add"), as Note [FLOP
// formulas] keys them; a key with an overload would never match, so it is refused.
void check_formula_key(const std::string& key, const char* where) {
  const std::size_t colons = key.find("::");
  STRATA_CHECK(colons != std::string::npos && colons > 0 && colons + 2 < key.size() &&
                   key.find_first_of(".:", colons + 2) == std::string::npos,
               where, ": '", key, "' is not an op name such as 'aten::add' (namespace::name, without an overload: ",
               "a formula covers every overload of its op)");
}
}  // namespace

FlopCounterMode::FlopCounterMode(int depth, std::string phase, FlopFormulas custom_mapping)
    : depth_(depth), custom_mapping_(std::move(custom_mapping)) {
  for (const auto& entry : custom_mapping_) {
    check_formula_key(entry.first, "FlopCounterMode: custom_mapping");
    STRATA_CHECK(static_cast<bool>(entry.second), "FlopCounterMode: custom_mapping's formula for ", entry.first,
                 " is empty");
  }
  modules_.push_back(Counts{"Global", {}, {}});
  phases_.push_back(Counts{std::move(phase), {}, {}});
}

FlopCounterMode::Counts& FlopCounterMode::add(std::vector<Counts>& table, const std::string& name,
                                               const std::string& op, std::int64_t flops) {
  auto row = std::find_if(table.begin(), table.end(), [&](const Counts& c) { return c.name == name; });
  if (row == table.end()) row = table.insert(table.end(), Counts{name, {}, {}});
  auto cell = std::find_if(row->ops.begin(), row->ops.end(), [&](const auto& p) { return p.first == op; });
  if (cell == row->ops.end()) row->ops.emplace_back(op, flops);
  else STRATA_CHECK(!__builtin_add_overflow(cell->second, flops, &cell->second), "FlopCounterMode: the FLOP count of ",
                    op, " overflows int64");
  return *row;
}

void FlopCounterMode::add_to_module(const std::string& name, const std::string& op, std::int64_t flops) {
  Counts& row = add(modules_, name, op, flops);
  if (row.phase_totals.size() <= phase_) row.phase_totals.resize(phase_ + 1, 0);
  STRATA_CHECK(!__builtin_add_overflow(row.phase_totals[phase_], flops, &row.phase_totals[phase_]),
               "FlopCounterMode: the FLOP count of ", name, " overflows int64");
}

void FlopCounterMode::dispatch(const OperatorHandle& op, Stack& stack) {
  const FlopFormula* formula = nullptr;
  if (!custom_mapping_.empty()) {
    const auto custom = custom_mapping_.find(op.name().qualified());
    if (custom != custom_mapping_.end()) formula = &custom->second;
  }
  if (!formula) formula = formula_cache().get(op);
  if (!formula) {
    op.call(stack);
    return;
  }
  const std::int64_t flops = (*formula)(stack.data() + stack.size() - op.schema().arguments().size());
  op.call(stack);  // counted once it has run, as upstream counts after func(*args)
  const std::string packet = packet_name(op);
  std::set<std::string> parents = mod_tracker_->parents();  // "Global" among them
  parents.insert(parents_.begin(), parents_.end());
  add_to_module("Global", packet, flops);  // first, so that a module's count cannot overflow before Global's
  for (const std::string& name : parents)
    if (name != "Global") add_to_module(name, packet, flops);
  add(phases_, phases_[phase_].name, packet, flops);
}

void FlopCounterMode::set_phase(const std::string& phase) {
  for (std::size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i].name == phase) {
      phase_ = i;
      return;
    }
  phases_.push_back(Counts{phase, {}, {}});
  phase_ = phases_.size() - 1;
}

FlopCounterMode::Guard::Guard(FlopCounterMode& mode) : mode_(mode) {
  mode_.reset();
  mode_.mod_tracker_->enter();
  try {
    dispatch_.emplace(mode_);
  } catch (...) {
    mode_.mod_tracker_->exit();
    throw;
  }
}

FlopCounterMode::Guard::~Guard() {
  dispatch_.reset();
  mode_.mod_tracker_->exit();
}

void FlopCounterMode::reset() {
  modules_.assign(1, Counts{"Global", {}, {}});
  for (Counts& c : phases_) c.ops.clear();
}

void FlopCounterMode::enter_module(const std::string& fqn) { parents_.push_back(fqn); }

void FlopCounterMode::exit_module(const std::string& fqn) {
  const auto it = std::find(parents_.rbegin(), parents_.rend(), fqn);
  STRATA_CHECK(it != parents_.rend(), "FlopCounterMode: exit_module('", fqn, "') without a matching enter_module");
  parents_.erase(std::next(it).base());
}

std::int64_t FlopCounterMode::get_total_flops() const { return total_of(modules_.front().ops); }

std::vector<std::pair<std::string, FlopCounterMode::OpCounts>> FlopCounterMode::get_flop_counts() const {
  std::vector<std::pair<std::string, OpCounts>> out;
  for (const Counts& c : modules_)
    if (c.name != "Global" || !c.ops.empty()) out.emplace_back(c.name, c.ops);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<std::pair<std::string, FlopCounterMode::OpCounts>> FlopCounterMode::get_phase_counts() const {
  std::vector<std::pair<std::string, OpCounts>> out;
  for (const Counts& c : phases_) out.emplace_back(c.name, c.ops);
  return out;
}

std::string FlopCounterMode::get_table(std::optional<int> depth) const {
  const int max_depth = depth.value_or(depth_);
  const std::int64_t global = get_total_flops();
  const std::size_t suffix = suffix_index(global);
  bool global_subsumed = false;
  auto rows_of = [&](const std::string& name, const OpCounts& ops, std::size_t indent) {
    const std::int64_t total = total_of(ops);
    global_subsumed = global_subsumed || total >= global;
    const std::string pad(indent, ' ');
    std::vector<Row> rows{{pad + name, with_suffix(total, suffix), percent(total, global)}};
    for (const auto& [op, n] : ops) rows.push_back({pad + " - " + op, with_suffix(n, suffix), percent(n, global)});
    return rows;
  };
  std::vector<Row> rows;
  const auto counts = get_flop_counts();
  for (const auto& [name, ops] : counts) {
    if (name == "Global") continue;
    const auto module_depth = static_cast<int>(std::count(name.begin(), name.end(), '.')) + 1;
    if (module_depth > max_depth) continue;
    for (Row& r : rows_of(name, ops, static_cast<std::size_t>(module_depth - 1))) rows.push_back(std::move(r));
  }
  // Global is shown only when some of its FLOPs are outside every module shown.
  if (!modules_.front().ops.empty() && !global_subsumed) {
    for (Row& r : rows) r[0] = " " + r[0];
    std::vector<Row> all = rows_of("Global", modules_.front().ops, 0);
    all.insert(all.end(), rows.begin(), rows.end());
    rows = std::move(all);
  }
  if (rows.empty()) rows.push_back({"Global", "0", "0%"});
  return tabulate_simple({"Module", "FLOP", "% Total"}, rows);
}

std::string FlopCounterMode::get_phase_table() const {
  const std::int64_t global = get_total_flops();
  const std::size_t suffix = suffix_index(global);
  std::vector<Row> rows;
  for (const Counts& c : phases_) {
    rows.push_back({c.name, with_suffix(total_of(c.ops), suffix), percent(total_of(c.ops), global)});
    for (const auto& [op, n] : c.ops) rows.push_back({" - " + op, with_suffix(n, suffix), percent(n, global)});
  }
  return tabulate_simple({"Phase", "FLOP", "% Total"}, rows);
}

nlohmann::ordered_json FlopCounterMode::to_json() const {
  auto section = [](const OpCounts& ops) {
    nlohmann::ordered_json s;
    s["total"] = total_of(ops);
    s["ops"] = nlohmann::ordered_json::object();
    for (const auto& [op, n] : ops) s["ops"][op] = n;
    return s;
  };
  auto module_section = [&](const Counts& c) {
    nlohmann::ordered_json s = section(c.ops);
    s["phases"] = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < phases_.size(); ++i)
      s["phases"][phases_[i].name] = i < c.phase_totals.size() ? c.phase_totals[i] : 0;
    return s;
  };
  nlohmann::ordered_json out;
  out["total_flops"] = get_total_flops();
  out["phases"] = nlohmann::ordered_json::object();
  for (const Counts& c : phases_) out["phases"][c.name] = section(c.ops);
  out["modules"] = nlohmann::ordered_json::object();
  out["modules"]["Global"] = module_section(modules_.front());
  std::vector<const Counts*> others;
  for (const Counts& c : modules_)
    if (c.name != "Global") others.push_back(&c);
  std::sort(others.begin(), others.end(), [](const Counts* a, const Counts* b) { return a->name < b->name; });
  for (const Counts* c : others) out["modules"][c->name] = module_section(*c);
  return out;
}

}  // namespace strata::tracer
