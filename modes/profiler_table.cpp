// modes/profiler_table.cpp: key_averages(), PyTorch's key_averages().table() layout, and the Chrome
// trace document (torch.profiler's export_chrome_trace).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/util/error.h"
#include "modes/profiler.h"
#include "io/python_repr.h"

namespace strata::profiler {

namespace {

// Python's str() of a list of int lists: "[[5, 16], [16, 32], []]".
std::string shapes_text(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::string out = "[";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    out += i ? ", [" : "[";
    for (std::size_t j = 0; j < shapes[i].size(); ++j) out += (j ? ", " : "") + std::to_string(shapes[i][j]);
    out += "]";
  }
  return out + "]";
}

// PyTorch's _format_time, from nanoseconds.
std::string format_time(double ns) {
  const double us = ns / 1000.0;
  char buf[64];
  if (us >= 1e6) std::snprintf(buf, sizeof buf, "%.3fs", us / 1e6);
  else if (us >= 1e3) std::snprintf(buf, sizeof buf, "%.3fms", us / 1e3);
  else std::snprintf(buf, sizeof buf, "%.3fus", us);
  return buf;
}

std::string format_share(double part, double total) {
  if (total == 0) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", part * 100.0 / total);
  return buf;
}

// `text` right-aligned in `width` (Python's '{:>width}'), then the two spaces between columns.
void cell(std::string& line, const std::string& text, std::size_t width) {
  if (text.size() < width) line.append(width - text.size(), ' ');
  line += text;
  line += "  ";
}

}  // namespace

std::vector<EventAverage> key_averages(const std::vector<Event>& events, bool group_by_input_shape) {
  std::vector<EventAverage> rows;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const Event& e : events) {
    std::string shapes = group_by_input_shape ? shapes_text(e.input_shapes) : "";
    auto [it, fresh] = index.try_emplace({e.name, shapes}, rows.size());
    if (fresh) rows.push_back(EventAverage{e.name, std::move(shapes)});
    EventAverage& row = rows[it->second];
    ++row.count;
    row.self_cpu_time_total_ns += e.self_ns;
    row.cpu_time_total_ns += e.duration_ns();
  }
  return rows;
}

std::string table(std::vector<EventAverage> rows, std::string_view sort_by, std::int64_t row_limit) {
  if (rows.empty()) return "";
  if (!sort_by.empty()) {
    double (*key)(const EventAverage&) = nullptr;
    if (sort_by == "self_cpu_time_total") key = [](const EventAverage& r) { return double(r.self_cpu_time_total_ns); };
    else if (sort_by == "cpu_time_total") key = [](const EventAverage& r) { return double(r.cpu_time_total_ns); };
    else if (sort_by == "cpu_time") key = [](const EventAverage& r) { return r.cpu_time_avg_ns(); };
    else if (sort_by == "count") key = [](const EventAverage& r) { return double(r.count); };
    STRATA_CHECK(key != nullptr, "table: sort_by must be one of self_cpu_time_total, cpu_time_total, cpu_time, count; got '",
                 sort_by, "'");
    std::stable_sort(rows.begin(), rows.end(), [&](const EventAverage& a, const EventAverage& b) { return key(a) > key(b); });
  }
  constexpr std::size_t kMaxName = 55, kMaxShapes = 80, kColumn = 12;
  std::size_t name_width = 0, shapes_width = 0;
  bool has_shapes = false;
  for (const EventAverage& r : rows) {
    name_width = std::max(name_width, r.key.size() + 4);
    shapes_width = std::max(shapes_width, r.input_shapes.size() + 4);
    has_shapes = has_shapes || !r.input_shapes.empty();
  }
  name_width = std::min(name_width, kMaxName);
  shapes_width = std::min(shapes_width, kMaxShapes);
  const std::vector<std::string> headers = {"Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"};

  std::string sep(name_width, '-');
  sep += "  ";
  for (std::size_t i = 0; i < headers.size(); ++i) sep += std::string(kColumn, '-') + "  ";
  if (has_shapes) sep += std::string(shapes_width, '-') + "  ";

  std::string out = sep + "\n";
  std::string header;
  cell(header, "Name", name_width);
  for (const std::string& h : headers) cell(header, h, kColumn);
  if (has_shapes) cell(header, "Input Shapes", shapes_width);
  out += header + "\n" + sep + "\n";

  double sum_self = 0;
  for (const EventAverage& r : rows) sum_self += static_cast<double>(r.self_cpu_time_total_ns);
  std::int64_t printed = 0;
  for (const EventAverage& r : rows) {
    if (printed++ == row_limit) break;
    std::string name = r.key;
    if (name.size() >= kMaxName - 3) name = name.substr(0, kMaxName - 3) + "...";
    std::string line;
    cell(line, name, name_width);
    cell(line, format_share(static_cast<double>(r.self_cpu_time_total_ns), sum_self), kColumn);
    cell(line, format_time(static_cast<double>(r.self_cpu_time_total_ns)), kColumn);
    cell(line, format_share(static_cast<double>(r.cpu_time_total_ns), sum_self), kColumn);
    cell(line, format_time(static_cast<double>(r.cpu_time_total_ns)), kColumn);
    cell(line, format_time(r.cpu_time_avg_ns()), kColumn);
    cell(line, std::to_string(r.count), kColumn);
    if (has_shapes) cell(line, r.input_shapes.substr(0, shapes_width), shapes_width);
    out += line + "\n";
  }
  out += sep + "\n";
  out += "Self CPU time total: " + format_time(sum_self) + "\n";
  return out;
}

nlohmann::ordered_json chrome_trace(const std::vector<Event>& events) {
  const auto pid = static_cast<std::int64_t>(::getpid());
  nlohmann::ordered_json trace_events = nlohmann::ordered_json::array();
  for (const Event& e : events) {
    nlohmann::ordered_json j;
    j["ph"] = "X";
    j["cat"] = std::string(category_name(e.kind));
    std::string name;  // a record_function name is the caller's text: Note [Logged text is always valid UTF-8]
    tracer::append_python_str(name, e.name);
    j["name"] = std::move(name);
    j["pid"] = pid;
    j["tid"] = e.thread;
    j["ts"] = static_cast<double>(e.start_ns) / 1000.0;  // microseconds, as the format wants
    j["dur"] = static_cast<double>(e.duration_ns()) / 1000.0;
    nlohmann::ordered_json args = nlohmann::ordered_json::object();
    if (!e.input_types.empty() || e.kind == EventKind::Op) {
      if (!e.input_shapes.empty() || !e.input_types.empty()) {
        args["Input Dims"] = e.input_shapes;
        args["Input type"] = e.input_types;
      }
    }
    j["args"] = std::move(args);
    trace_events.push_back(std::move(j));
  }
  nlohmann::ordered_json doc;
  doc["schemaVersion"] = 1;
  doc["displayTimeUnit"] = "ms";
  doc["traceEvents"] = std::move(trace_events);
  return doc;
}

}  // namespace strata::profiler
