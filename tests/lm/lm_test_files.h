// tests/lm/lm_test_files.h: files the lm tests write and read: a temporary folder per process, the
// synthetic checkpoints (written once per config), and byte-level edits for damaged-file cases.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "synthetic_weights.h"

namespace lm_test_files {

// A folder removed at exit, one per process (the suites may run in parallel).
inline const std::filesystem::path& temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      path = std::filesystem::temp_directory_path() / ("strata-lm-test-" + std::to_string(::getpid()));
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string temp_path(const std::string& name) { return (temp_dir() / name).string(); }

// docs/lm.md's config `name` ("tiny", "tiny_gqa") as a llama2.c .bin, written on first use.
inline std::string checkpoint(const std::string& name) {
  static std::map<std::string, std::string> written;
  auto it = written.find(name);
  if (it != written.end()) return it->second;
  const std::string path = temp_path(name + ".bin");
  lm_synthetic::write_llama2c_bin(path, lm_synthetic::config_named(name));
  return written[name] = path;
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string write_bytes(const std::string& name, const std::vector<char>& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A copy of checkpoint `config` with header field `field` (0..6) set to `value`.
inline std::string with_header_field(const std::string& config, int field, std::int32_t value, const std::string& name) {
  std::vector<char> bytes = read_bytes(checkpoint(config));
  std::memcpy(bytes.data() + 4 * field, &value, sizeof value);
  return write_bytes(name, bytes);
}

}  // namespace lm_test_files
