// tests/tracer/cli/test_output_paths.cpp: where strata-trace's output files go. The same file under two
// names is refused; every path is written where open(path, "w") would write it, or refused with the
// error open() gives; where atomic replacement cannot give open()'s result the file is written in
// place. Permission cases run the built executable as an unprivileged user (root ignores modes).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <map>

#include "tests/tracer/cli/cli_test_helpers.h"
#include "tests/tracer/cli/subprocess.h"

namespace test_output_paths {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;
namespace fs = std::filesystem;

namespace {
// Every entry under `dir` (recursively, symlinks not followed) with its type and, for regular files,
// its content: a run that is refused must leave this unchanged.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const auto status = it->symlink_status();
    const std::string rel = it->path().lexically_relative(dir).string();
    if (fs::is_symlink(status)) out[rel] = "-> " + fs::read_symlink(it->path()).string();
    else if (fs::is_regular_file(status)) out[rel] = read_text(it->path().string());
    else out[rel] = fs::is_directory(status) ? "dir" : "other";
  }
  return out;
}

// Runs the CLI with `dir` as the working directory, so relative names land there.
CliRun run_in(const fs::path& dir, const std::vector<std::string>& args) {
  const int saved = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(saved >= 0);
  REQUIRE(::chdir(dir.c_str()) == 0);
  CliRun r = run_cli(args);
  REQUIRE(::fchdir(saved) == 0);
  ::close(saved);
  return r;
}

bool valid_report(const fs::path& p) {
  return nlohmann::json::parse(read_text(p.string()))["total_ops"] == 23;  // --sizes 3,2
}

std::string cannot_write(const std::string& flag, const std::string& path, const std::string& why) {
  return "strata-trace: error: " + flag + ": cannot write '" + path + "': " + why + "\n";
}
}  // namespace

TEST_CASE("the same file under two names is refused, however it is spelled") {
  const fs::path dir = scratch_dir();
  fs::create_directories(dir / "sub" / "deep");
  write_text(dir / "old.json", "old");
  fs::create_hard_link(dir / "old.json", dir / "hard.json");
  fs::create_symlink("old.json", dir / "link.json");
  fs::create_symlink("new.json", dir / "dangling.json");
  fs::create_symlink("dangling.json", dir / "chain.json");
  fs::create_symlink(dir / "sub", dir / "sublink");
  fs::create_symlink("sub/deep", dir / "deeplink");  // deeplink/.. is sub, not dir
  const auto before = snapshot(dir);
  const std::vector<std::pair<std::string, std::string>> same = {
      {"o.json", "./o.json"},
      {"o.json", "o.json"},
      {"o.json", ".//./o.json"},
      {"o.json", (dir / "o.json").string()},
      {(dir / "o.json").string(), "sub/../o.json"},
      {"sub/o.json", "sublink/o.json"},
      {"sub/o.json", "deeplink/../o.json"},
      {"old.json", "link.json"},
      {"old.json", "hard.json"},
      {"link.json", "hard.json"},
      {"new.json", "dangling.json"},
      {"chain.json", "./sub/../new.json"},
  };
  for (const auto& pair : same) {
    const auto& [a, b] = pair;
    INFO(pair.first, " and ", pair.second);  // INFO's lambda may not capture a structured binding (clang 14)
    const CliRun r = run_in(dir, {"--sizes", "3,2", "--json-out", a, "--dump-tensors", b});
    CHECK(r.code == 2);
    CHECK(r.err == "strata-trace: error: --dump-tensors: '" + b + "' is the same file as --json-out\n");
    CHECK(r.out.empty());
    CHECK(snapshot(dir) == before);
  }
  // Different files, though the names look alike: both written.
  const CliRun r = run_in(dir, {"--sizes", "3,2", "--json-out", "o.json", "--dump-tensors", "deeplink/../o.json"});
  CHECK(r.code == 0);
  CHECK(valid_report(dir / "o.json"));
  CHECK(fs::exists(dir / "sub" / "o.json"));
  // A device is not replaced by either output: both stream into it.
  CHECK(run_cli({"--sizes", "3,2", "--json-out", "/dev/null", "--dump-tensors", "/dev/null"}).code == 0);
  fs::remove_all(dir);
}

TEST_CASE("a symlink loop is ELOOP, as for open(), and stays a symlink") {
  const fs::path dir = scratch_dir();
  fs::create_symlink("self.json", dir / "self.json");
  fs::create_symlink("b.json", dir / "a.json");
  fs::create_symlink("a.json", dir / "b.json");
  const auto before = snapshot(dir);
  for (const std::string name : {"self.json", "a.json", "b.json"}) {
    const std::string path = (dir / name).string();
    INFO(path);
    const CliRun r = run_cli({"--sizes", "3,2", "--json-out", path});
    CHECK(r.code == 2);
    CHECK(r.err == cannot_write("--json-out", path, "Too many levels of symbolic links"));
    CHECK(snapshot(dir) == before);
  }
  fs::remove_all(dir);
}

TEST_CASE("names up to NAME_MAX are written, longer ones are ENAMETOOLONG, as for open()") {
  const fs::path dir = scratch_dir();
  for (const std::size_t length : {std::size_t{244}, std::size_t{245}, std::size_t{250}, std::size_t{NAME_MAX}}) {
    INFO(length);
    const fs::path path = dir / std::string(length, 'n');
    const CliRun r = run_cli({"--sizes", "3,2", "--json-out", path.string(), "--dump-tensors", (dir / "t.json").string()});
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(valid_report(path));
    CHECK(entries(dir) == 2);  // no temporary left
    // Replacing it works too (the temporary name is shortened, not the destination's).
    CHECK(run_cli({"--sizes", "3,2", "--json-out", path.string()}).code == 0);
    CHECK(entries(dir) == 2);
    fs::remove(path);
  }
  const std::string too_long = (dir / std::string(NAME_MAX + 1, 'n')).string();
  const CliRun r = run_cli({"--sizes", "3,2", "--json-out", too_long});
  CHECK(r.code == 2);
  CHECK(r.err == cannot_write("--json-out", too_long, "File name too long"));
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("dangling symlinks and chains are followed to the file open() would create") {
  const fs::path dir = scratch_dir();
  fs::create_directories(dir / "links");
  fs::create_directories(dir / "data");
  fs::create_symlink("new.json", dir / "dangling.json");
  // A chain across directories, each relative target read from its link's directory.
  fs::create_symlink("../data/l2", dir / "links" / "l1");
  fs::create_symlink("out.json", dir / "data" / "l2");
  write_text(dir / "data" / "real.json", "old");
  fs::create_symlink("r2", dir / "data" / "r1");
  fs::create_symlink(dir / "data" / "real.json", dir / "data" / "r2");
  const CliRun r = run_cli({"--sizes", "3,2", "--json-out", (dir / "dangling.json").string(), "--dump-tensors",
                            (dir / "links" / "l1").string()});
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir / "dangling.json"));
  CHECK(valid_report(dir / "new.json"));
  CHECK(fs::is_symlink(dir / "links" / "l1"));
  CHECK(fs::is_symlink(dir / "data" / "l2"));
  CHECK(nlohmann::json::parse(read_text((dir / "data" / "out.json").string()))["grads"].size() == 2);
  CHECK(run_cli({"--sizes", "3,2", "--json-out", (dir / "data" / "r1").string()}).code == 0);
  CHECK(fs::is_symlink(dir / "data" / "r1"));
  CHECK(valid_report(dir / "data" / "real.json"));
  CHECK(entries(dir) == 4);
  CHECK(entries(dir / "data") == 5);  // l2, out.json, real.json, r1, r2: no temporaries
  // A dangling link into a missing directory is ENOENT, as for open().
  fs::create_symlink("missing/x.json", dir / "nowhere.json");
  const CliRun missing = run_cli({"--json-out", (dir / "nowhere.json").string()});
  CHECK(missing.code == 2);
  CHECK(missing.err == cannot_write("--json-out", (dir / "nowhere.json").string(), "No such file or directory"));
  fs::remove_all(dir);
}

TEST_CASE("a path through a file is ENOTDIR, and a trailing slash is a directory, as for open()") {
  const fs::path dir = scratch_dir();
  write_text(dir / "file.json", "old");
  const std::string through = (dir / "file.json" / "x.json").string();
  const CliRun r = run_cli({"--json-out", through});
  CHECK(r.code == 2);
  CHECK(r.err == cannot_write("--json-out", through, "Not a directory"));
  // open("file.json/", O_CREAT) is EISDIR, not ENOTDIR.
  const std::string slash = (dir / "file.json").string() + "/";
  CHECK(run_cli({"--json-out", slash}).err == "strata-trace: error: --json-out: '" + slash + "' is a directory\n");
  CHECK(read_text((dir / "file.json").string()) == "old");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("a file with other hard links is written in place, so every name sees it") {
  const fs::path dir = scratch_dir();
  write_text(dir / "a.json", "old");
  fs::create_hard_link(dir / "a.json", dir / "b.json");
  const ino_t inode = stat_of(dir / "a.json").st_ino;
  CHECK(run_cli({"--sizes", "3,2", "--json-out", (dir / "a.json").string()}).code == 0);
  CHECK(stat_of(dir / "a.json").st_ino == inode);
  CHECK(valid_report(dir / "b.json"));
  CHECK(entries(dir) == 2);
  fs::remove_all(dir);
}

TEST_CASE("a replaced file keeps its owner and group") {
  if (::geteuid() != 0) return;  // only root can give a file to another user
  const fs::path dir = scratch_dir();
  write_text(dir / "a.json", "old");
  REQUIRE(::chown((dir / "a.json").c_str(), 65534, 65534) == 0);
  ::chmod((dir / "a.json").c_str(), 0640);
  CHECK(run_cli({"--sizes", "3,2", "--json-out", (dir / "a.json").string()}).code == 0);
  const struct stat st = stat_of(dir / "a.json");
  CHECK(st.st_uid == 65534);
  CHECK(st.st_gid == 65534);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(valid_report(dir / "a.json"));
  fs::remove_all(dir);
}

#ifdef STRATA_TRACE_EXE
namespace {
// Runs strata-trace as a user that modes apply to: "nobody" under root, else the current user.
uid_t unprivileged_user() { return ::geteuid() == 0 ? 65534 : ::geteuid(); }

CliRun run_unprivileged(const std::vector<std::string>& args, const fs::path& logs) {
  std::vector<std::string> argv{STRATA_TRACE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOptions options;
  if (::geteuid() == 0) options.user = unprivileged_user();
  const pid_t pid = spawn_child(argv, (logs / "out").string(), (logs / "err").string(), options);
  REQUIRE(pid > 0);
  const ChildExit e = wait_child(pid, std::chrono::seconds(60));
  REQUIRE(!e.signaled);
  return {e.code, read_text((logs / "out").string()), read_text((logs / "err").string())};
}
}  // namespace

TEST_CASE("permissions decide as for open(): a writable file in a read-only directory is written in place") {
  const fs::path dir = scratch_dir(), logs = scratch_dir();
  const uid_t user = unprivileged_user();
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  fs::create_directories(dir / "ro");
  fs::create_directories(dir / "rw");
  write_text(dir / "ro" / "w.json", "old");
  write_text(dir / "rw" / "r.json", "old");
  for (const char* p : {"ro/w.json", "rw", "rw/r.json"}) REQUIRE(::chown((dir / p).c_str(), user, user) == 0);
  REQUIRE(::chmod((dir / "ro" / "w.json").c_str(), 0644) == 0);
  REQUIRE(::chmod((dir / "rw" / "r.json").c_str(), 0444) == 0);
  REQUIRE(::chmod((dir / "ro").c_str(), 0555) == 0);  // nobody may add a file to it (but root)
  const ino_t inode = stat_of(dir / "ro" / "w.json").st_ino;

  // A failure before the outputs are published leaves the file as it was (not even truncated).
  const std::string w = (dir / "ro" / "w.json").string();
  CliRun r = run_unprivileged({"--sizes", "3,2", "--json-out", w, "--dump-tensors", (dir / "missing" / "t").string()}, logs);
  CHECK(r.code == 2);
  CHECK(read_text(w) == "old");

  r = run_unprivileged({"--sizes", "3,2", "--json-out", w}, logs);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(valid_report(w));
  CHECK(read_text(w) == r.out);
  CHECK(stat_of(w).st_ino == inode);
  CHECK(entries(dir / "ro") == 1);

  // A new file in that directory: EACCES, as for open().
  const std::string n = (dir / "ro" / "new.json").string();
  r = run_unprivileged({"--sizes", "3,2", "--json-out", n}, logs);
  CHECK(r.code == 2);
  CHECK(r.err == cannot_write("--json-out", n, "Permission denied"));
  CHECK(entries(dir / "ro") == 1);

  // A read-only file in a writable directory: EACCES, though a rename could replace it.
  const std::string ro = (dir / "rw" / "r.json").string();
  r = run_unprivileged({"--sizes", "3,2", "--json-out", ro}, logs);
  CHECK(r.code == 2);
  CHECK(r.err == cannot_write("--json-out", ro, "Permission denied"));
  CHECK(read_text(ro) == "old");
  CHECK(entries(dir / "rw") == 1);
  ::chmod((dir / "ro").c_str(), 0755);
  fs::remove_all(dir);
  fs::remove_all(logs);
}
#endif

}  // namespace test_output_paths
