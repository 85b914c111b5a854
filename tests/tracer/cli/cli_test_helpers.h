// tests/tracer/cli/cli_test_helpers.h: what the strata-trace tests share: running the CLI in-process,
// checking what it refuses, scratch directories, and looking at what a run left in them.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_helpers.h"
#include "tracer/cli/trace_cli.h"

namespace strata::testing {

struct CliRun {
  int code;
  std::string out, err;
};

inline CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = tracer::run_trace_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// strata-trace's arguments, each with the error it must be refused with.
using RefusedArgs = std::vector<std::pair<std::vector<std::string>, std::string>>;

// Runs each case and checks that it is refused as every error is: exit code 2, nothing on stdout, and
// "strata-trace: error: <message>" as the one line on stderr.
inline void check_refused(const RefusedArgs& cases) {
  for (const auto& c : cases) {  // not a structured binding: INFO captures it (clang 14)
    std::string args;
    for (const std::string& a : c.first) args += (args.empty() ? "" : " ") + a;
    INFO(args);
    const CliRun r = run_cli(c.first);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "strata-trace: error: " + c.second + "\n");
  }
}

// A new empty directory under the system's temporary directory, unique to this process and call.
inline std::filesystem::path scratch_dir() {
  static int n = 0;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("strata-cli-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::size_t entries(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

inline struct stat stat_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st;
}

inline unsigned file_mode(const std::filesystem::path& p) { return stat_of(p).st_mode & 07777; }

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

}  // namespace strata::testing
