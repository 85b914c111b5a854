// tests/browser/explorer_pages.cpp: writes the explorer pages the browser test loads besides the MLP
// step's (which strata-trace --html writes): DIR/hostile.html, whose module and subclass names try to
// end the page's script, and DIR/long.html, a step of about 10,000 ops.
#include <iostream>

#include "tests/tracer/explorer_fixtures.h"

namespace explorer_pages {  // Note [Test files in unity builds]

int run(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: explorer_pages DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  strata::manual_seed(0);
  strata::tracer::write_explorer_html(dir + "/hostile.html", {explorer_fixtures::hostile_record()},
                                      explorer_fixtures::kHostile);
  strata::tracer::write_explorer_html(dir + "/long.html", {explorer_fixtures::long_record(10000)},
                                      "a chain of 5,000 multiplications and its backward");
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
