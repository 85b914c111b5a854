// tests/modes/test_debug_mode_dtensor_seed.cpp: the two programs of PyTorch PR 162665 (DebugMode for
// DTensor) on real DTensors over a fake world of 8 (Note [The DTensor examples]), against golden
// files: the pull request's text in the seed's format (PlacementFormat::Lists), and upstream's
// test_debug_mode.py (test_debug_mode_mm, test_debug_mode_einsum) in today's format (Joined).
//
// The pull request's text shows no indentation, so debug_mode_dtensor_*_seed.txt hold its lines as
// written and this file derives the indentation DebugMode gives them from the depth rules
// (docs/debug-mode.md, "Reading a line"): a torch function call at depth 0 (two spaces), an op on a
// DTensor one level below (four), inside it its redistributions and the handler's local call of the
// same op (six), and inside a redistribution its collectives and local ops (eight). The local call
// (`aten::bmm(t: ...)` under `aten::bmm(dt: ...)`) ends the redistributions; anything else on a
// plain tensor under a DTensor op is the op's own local call (a view's) at six.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "ops/functions.h"
#include "tests/test_helpers.h"
#include "tracer/cli/dtensor_examples.h"

namespace test_debug_mode_dtensor_seed {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::tracer;
using namespace strata::testing;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The op name of a line: "aten::bmm" of "aten::bmm(dt: ...)".
std::string name_of(const std::string& line) { return line.substr(0, line.find('(')); }

// The seed's unindented lines, indented by the depth rules of this file's header.
std::string indent_seed(const std::string& seed) {
  std::string out, dtensor_op;
  bool in_redistribution = false;
  for (const std::string& line : lines_of(seed)) {
    int depth = 3;
    if (line.rfind("torch.", 0) == 0) depth = 0, dtensor_op.clear();
    else if (line.find("(dt: ") != std::string::npos) depth = 1, dtensor_op = name_of(line), in_redistribution = false;
    else if (line.rfind("redistribute_input(", 0) == 0) depth = 2, in_redistribution = true;
    else if (!in_redistribution || name_of(line) == dtensor_op) depth = 2, in_redistribution = false;
    out += std::string(static_cast<std::size_t>(2 + 2 * depth), ' ') + line + "\n";
  }
  return out;
}

std::string run(DTensorExample example, PlacementFormat format, int rank, bool then_sum = false) {
  const auto mode = debug_dtensor_example(
      example, {.record_torchfunction = true, .record_output = false, .placement_format = format}, rank,
      then_sum ? [](const Tensor& out) { (void)out.sum(); } : std::function<void(const Tensor&)>{});
  return mode->debug_string() + "\n";
}

// Line by line, so that a failure names the first line that differs.
void check_lines(const std::string& actual, const std::string& expected) {
  const auto a = lines_of(actual), e = lines_of(expected);
  for (std::size_t i = 0; i < std::min(a.size(), e.size()); ++i) {
    INFO("line ", i + 1);
    REQUIRE(a[i] == e[i]);
  }
  CHECK(a.size() == e.size());
}

}  // namespace

TEST_CASE("the seed's indentation rule gives the stand-in test's mm log") {
  // The rule against a log whose indentation is known (test_debug_mode_dtensor.cpp's, PR 162665's mm).
  CHECK(indent_seed("torch.mm(dt: x)\naten::mm(dt: x)\nredistribute_input(1, [S(0)], [R])\n"
                    "_c10d_functional::all_gather_into_tensor(t: y)\n_c10d_functional::wait_tensor(t: z)\n"
                    "aten::mm(t: w)\n") ==
        "  torch.mm(dt: x)\n    aten::mm(dt: x)\n      redistribute_input(1, [S(0)], [R])\n"
        "        _c10d_functional::all_gather_into_tensor(t: y)\n        _c10d_functional::wait_tensor(t: z)\n"
        "      aten::mm(t: w)\n");
}

TEST_CASE("DTensor mm on a fake world of 8, rank 1: PR 162665's log in the seed's format") {
  check_lines(run(DTensorExample::Mm, PlacementFormat::Lists, 1),
              indent_seed(read_text(golden_path("debug_mode_dtensor_mm_seed.txt"))));
}

TEST_CASE("DTensor einsum on a (4, 2) mesh, rank 1: PR 162665's log in the seed's format") {
  check_lines(run(DTensorExample::Einsum, PlacementFormat::Lists, 1),
              indent_seed(read_text(golden_path("debug_mode_dtensor_einsum_seed.txt"))));
}

TEST_CASE("DTensor mm(...).sum(), rank 0: upstream's test_debug_mode_mm in the joined format") {
  check_lines(run(DTensorExample::Mm, PlacementFormat::Joined, 0, true),
              read_text(golden_path("debug_mode_dtensor_mm_upstream.txt")));
}

TEST_CASE("DTensor einsum, rank 0: upstream's test_debug_mode_einsum in the joined format") {
  check_lines(run(DTensorExample::Einsum, PlacementFormat::Joined, 0),
              read_text(golden_path("debug_mode_dtensor_einsum_upstream.txt")));
}

TEST_CASE("the JSON export of the DTensor mm holds its redistribution as a call of its own") {
  const auto mode = debug_dtensor_example(DTensorExample::Mm, {.record_torchfunction = true}, 1);
  const auto calls = mode->to_json()["calls"];
  REQUIRE(calls.size() == 6);
  const auto& r = calls[2];
  CHECK(r["kind"] == "redistribute");
  CHECK(r["name"] == "redistribute_input");
  CHECK(r["parent"] == 1);  // inside aten::mm(dt: ...)
  CHECK(r["depth"] == 2);
  CHECK(r["line"] == "redistribute_input(1, [S(0)], [R])");
  CHECK(r["redistribution"].dump() == "{\"arg_index\":1,\"path\":[[\"S(0)\"],[\"R\"]]}");
  CHECK(calls[3]["name"] == "_c10d_functional::all_gather_into_tensor");
  CHECK(calls[3]["parent"] == 2);
  CHECK(calls[4]["parent"] == 2);
  CHECK(calls[5]["name"] == "aten::mm");
  CHECK(calls[5]["parent"] == 1);
  CHECK(calls[5]["kind"] == "op");
}

TEST_CASE("the DTensor examples refuse a rank outside the world of 8") {
  CHECK_THROWS_WITH(debug_dtensor_example(DTensorExample::Mm, {}, 8),
                    "debug_dtensor_example: rank 8 is outside the world of 8");
  CHECK(dtensor_example_named("einsum") == DTensorExample::Einsum);
  CHECK_FALSE(dtensor_example_named("bmm").has_value());
}

}  // namespace test_debug_mode_dtensor_seed
