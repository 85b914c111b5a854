// tests/tracer/cli/cli_test_helpers.h: what the strata-trace tests share: running the CLI in-process,
// scratch directories, and looking at what a run left in them.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
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
