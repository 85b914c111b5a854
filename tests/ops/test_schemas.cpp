// tests/ops/test_schemas.cpp: the op table registers exactly the schemas listed in
// tests/golden/schemas.txt, each copied from PyTorch's native_functions.yaml; a new or edited
// schema must be listed there too, so a change to an op's signature is always a visible diff.
#include <algorithm>
#include <sstream>

#include "ops/op_table.h"
#include "tests/test_helpers.h"

namespace test_schemas {  // Note [Test files in unity builds]

using namespace strata;

TEST_CASE("registered schemas are exactly the listed ones") {
  std::vector<std::string> listed;
  std::istringstream in(testing::read_text(testing::golden_path("schemas.txt")));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) listed.push_back(line);
  std::vector<std::string> registered;
  ops::register_ops();
  for (const OperatorHandle& op : Dispatcher::singleton().ops())
    if (op.name().ns != "test") registered.push_back(op.name().ns + "::" + std::string(op.schema().text()));
  std::sort(listed.begin(), listed.end());
  std::sort(registered.begin(), registered.end());
  std::vector<std::string> missing, unlisted;
  std::set_difference(listed.begin(), listed.end(), registered.begin(), registered.end(), std::back_inserter(missing));
  std::set_difference(registered.begin(), registered.end(), listed.begin(), listed.end(), std::back_inserter(unlisted));
  CHECK_MESSAGE(missing.empty(), "listed but not registered: ", nlohmann::json(missing).dump());
  CHECK_MESSAGE(unlisted.empty(), "registered but not listed: ", nlohmann::json(unlisted).dump());
  CHECK(registered.size() == listed.size());
}

}  // namespace test_schemas
