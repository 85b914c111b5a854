// tests/browser/explorer_pages.cpp: writes the explorer pages the browser test loads besides the MLP
// step's (which strata-trace --html writes): DIR/hostile.html, whose module and subclass names try to
// end the page's script, and DIR/long.html, a step of about 10,000 ops; beside each its record as
// JSON (DIR/hostile.json, DIR/long.json), which the page's decoded data must equal.
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "tests/tracer/explorer_fixtures.h"

namespace explorer_pages {  // Note [Test files in unity builds]

int run(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: explorer_pages DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  strata::manual_seed(0);
  const auto write = [&](const std::string& name, const nlohmann::ordered_json& record, const std::string& title) {
    strata::tracer::write_explorer_html(dir + "/" + name + ".html", {record}, title);
    std::ofstream json(dir + "/" + name + ".json");
    json << record.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    if (!json.flush()) throw std::runtime_error("cannot write " + dir + "/" + name + ".json");
  };
  write("hostile", explorer_fixtures::hostile_record(), explorer_fixtures::kHostile);
  write("long", explorer_fixtures::long_record(10000), "a chain of 5,000 multiplications and its backward");
  return 0;
}

}  // namespace explorer_pages

int main(int argc, char** argv) {
  try {
    return explorer_pages::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "explorer_pages: " << e.what() << "\n";
    return 2;
  }
}
