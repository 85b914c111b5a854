// tests/ops/test_reference_coverage.cpp: every op in the op table has a reference case, and every
// op a reference case names is in the op table (Note [Every op has a reference case], op_harness.h).
#include <map>
#include <set>

#include "ops/op_table.h"
#include "tests/ops/op_harness.h"

using namespace strata;

TEST_CASE("every op in the op table has a reference case") {
  ops::register_ops();
  std::set<std::string> table;
  for (const OperatorHandle& op : Dispatcher::singleton().ops())
    if (op.name().ns != "test")
      table.insert(op.name().qualified() + (op.name().overload.empty() ? "" : "." + op.name().overload));
  std::map<std::string, std::string> covered;
  for (const testing::ReferenceCase& c : testing::reference_cases()) covered.emplace(c.op, c.title);
  for (const std::string& op : table) {
    INFO(op);
    CHECK_MESSAGE(covered.count(op) == 1, "no REFERENCE_CASE names ", op);
  }
  for (const auto& entry : covered) {
    const std::string& op = entry.first;  // not a structured binding: INFO captures it (clang 14)
    INFO(entry.second);
    CHECK_MESSAGE(table.count(op) == 1, op, " is not an op of the op table");
  }
}
