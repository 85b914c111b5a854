// tests/fuzz/trace_cli_fuzzer.cpp: strata-trace's command line, fuzzed in-process through
// run_trace_cli (what strata-trace's main calls), in a private scratch directory.
//
// Input: the arguments separated by NUL bytes (an argument holds any other byte, newlines included; a
// trailing NUL ends with an empty argument; no bytes, no arguments); at most 64 arguments of at most
// 8 KiB, else the input is skipped. Leading arguments that start with '@' set up the scratch
// directory and are not passed on (Note [Fuzzing strata-trace's setup]). The run's working directory
// is the scratch directory (Note [The working directory of a fuzzed run]): output paths (--json-out,
// --dump-tensors, --profile, --graph) are relative to it, and one that is absolute (but /dev/null and /dev/full) or
// climbs out of it skips the input, so no input writes outside.
// Bounded work: when the command line parses, a run of more than 8 layers or more than kMaxWork
// parameters + activations is skipped (the CLI's own limits are 2^26, 2^40 with --fake; a run at
// this budget takes a few milliseconds under the sanitizers). Inputs the CLI refuses always run:
// refusing is cheap.
// Invariants, each an abort (a crash for libFuzzer, a failed test for the replay): the exit code is 0
// or 2; on 2 stderr is exactly one line "strata-trace: error: ..." (no internal error, no out of
// memory), and an output path it names as unwritable is one open(O_CREAT) refuses for the same reason
// (or a write failed: /dev/full); on 0 stderr is empty, a regular --json-out file holds what stdout
// got, a regular --dump-tensors file holds tensors, a regular --profile file a Chrome trace and a
// regular --graph file a digraph; no temporary file is left, registered or on
// disk; no symlink, FIFO or hard-linked file was replaced (open() writes through them). Sanitizer
// reports, escaping exceptions and hangs are libFuzzer's to catch.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/error.h"
#include "io/temp_file_registry.h"
#include "tracer/cli/trace_cli.h"

namespace fs = std::filesystem;
using strata::tracer::TraceOptions;

namespace {

constexpr std::size_t kMaxArgs = 64;
constexpr std::size_t kMaxArgBytes = 8192;
constexpr std::int64_t kMaxLayers = 8;
constexpr std::int64_t kMaxWork = 4096;  // parameters + batch x sum(sizes); keeps a FIFO's output under 1 MiB
const std::string kError = "strata-trace: error: ";

// Note [The working directory of a fuzzed run]
// Relative names are what users type and where strata-trace once went wrong ("o.json" and "./o.json"
// were compared before either was made absolute), so a run's working directory is the scratch
// directory and output paths stay as given. It is changed back after every input, and before an
// invariant aborts. libFuzzer writes a crash's input while the run is still in progress (from its
// signal handlers, or its RSS thread), so LLVMFuzzerInitialize makes -artifact_prefix and
// -exact_artifact_path absolute (and sets the prefix to the starting directory when none is given):
// the input lands where the fuzzer was started, not in the scratch directory.
int g_home = -1;  // the working directory to go back to
const fs::path& scratch();

void go_home() {
  if (g_home >= 0 && fchdir(g_home) != 0) std::abort();
}

[[noreturn]] void violation(const std::string& what, const std::vector<std::string>& args, const std::string& err) {
  go_home();
  std::fprintf(stderr, "trace_cli invariant broken: %s\n  stderr: %s\n  args:", what.c_str(), err.c_str());
  for (const std::string& a : args) std::fprintf(stderr, " '%s'", strata::tracer::escape_control_chars(a).c_str());
  std::fprintf(stderr, "\n");
  std::error_code ec;
  fs::remove_all(scratch(), ec);  // abort skips the exit handler
  std::abort();
}

// Made once per process, removed at exit (never destroyed: the exit handler still needs it). In
// /dev/shm when there is one: on a disk, the fsync of every output would take most of the time.
const fs::path& scratch() {
  static const fs::path* const dir = [] {
    const fs::path base = access("/dev/shm", W_OK | X_OK) == 0 ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string templ = (base / "strata-fuzz-trace-cli-XXXXXX").string();
    if (!mkdtemp(templ.data())) std::abort();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return new fs::path(templ);
  }();
  return *dir;
}

void for_each_entry(const std::function<void(const fs::path&)>& visit) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(scratch(), ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    visit(it->path());
}

void clear_scratch() {
  for_each_entry([](const fs::path& p) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) chmod(p.c_str(), 0755);  // @rodir
  });
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scratch(), ec)) fs::remove_all(entry.path(), ec);
}

// How deep below the directory it is taken from a relative path goes, lexically: its lowest and its
// final depth. ".." is one up, "." and empty parts stay.
struct Depth {
  int lowest = 0, last = 0;
  bool climbs = false;  // has a ".." part
};
Depth depth_of(std::string_view path) {
  Depth d;
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    if (part == "..") --d.last, d.climbs = true;
    else if (!part.empty() && part != ".") ++d.last;
    d.lowest = std::min(d.lowest, d.last);
    start = slash + 1;
  }
  return d;
}

// A relative path that stays inside the scratch directory. Lexical, and exact here: every symlink
// points sideways or down (Note [Fuzzing strata-trace's setup]), so the kernel never resolves a
// path higher than its text says.
bool stays_inside(std::string_view path) { return !path.empty() && path.front() != '/' && depth_of(path).lowest >= 0; }

// A symlink's target that points sideways or down: relative, no "..", not the link's own directory.
bool points_sideways_or_down(std::string_view target) {
  const Depth d = depth_of(target);
  return !target.empty() && target.front() != '/' && !d.climbs && d.last >= 1;
}

bool is_device_we_allow(std::string_view path) { return path == "/dev/null" || path == "/dev/full"; }

// A stream whose every write fails, like std::cout on a full disk.
struct FailingBuf : std::streambuf {
  int overflow(int) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

// Note [Fuzzing strata-trace's setup]
// Each leading '@' argument is one command, its words separated by spaces, run in the scratch
// directory; a command that fails (mkdir over a file...) is ignored, a malformed one skips the input.
//   @dir P       a directory            @file P      a file holding "old"
//   @ro P        a read-only file       @rodir P     a read-only directory (mode 0555)
//   @link P T    a symlink P -> T       @hard P Q    Q, a hard link to P
//   @fifo P      a FIFO with a reader (the target's, non-blocking, 1 MiB, drained after the run)
//   @fail-stdout the CLI's stdout fails every write
// P and Q stay inside the scratch directory. T is /dev/null, /dev/full, or relative with no ".."
// that names something other than the link's own directory (a sibling, or below one): a symlink then
// resolves no higher than its own name, so a path the kernel resolves is never higher than its text
// says and stays_inside is enough. T may name the link itself (a loop) or nothing (dangling, also
// into a missing directory).
struct Setup {
  bool fail_stdout = false;
  std::vector<int> fifo_readers;
  std::set<std::string> created;  // names the target made, which may look like temporary files

  ~Setup() {
    for (int fd : fifo_readers) close(fd);
  }

  // False when the command is malformed (the input is skipped).
  bool apply(const std::string& command) {
    std::vector<std::string> w;
    std::istringstream words(command);
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) return false;
    if (w[0] == "@fail-stdout") return fail_stdout = w.size() == 1;
    if (w.size() < 2 || !stays_inside(w[1])) return false;
    const char* p = w[1].c_str();
    created.insert(fs::path(w[1]).filename().string());
    if (w.size() == 2 && w[0] == "@dir") return mkdir(p, 0755), true;
    if (w.size() == 2 && w[0] == "@rodir") return mkdir(p, 0555), true;
    if (w.size() == 2 && (w[0] == "@file" || w[0] == "@ro")) {
      const int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, w[0] == "@ro" ? 0444 : 0644);
      if (fd >= 0) (void)!write(fd, "old", 3), close(fd);
      return true;
    }
    if (w.size() == 2 && w[0] == "@fifo") {
      if (mkfifo(p, 0644) != 0) return true;
      const int fd = open(p, O_RDWR | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) fifo_readers.push_back(fd);
      return fd >= 0 && fcntl(fd, F_SETPIPE_SZ, 1 << 20) >= 0;  // else the input is skipped: no hang
    }
    if (w.size() == 3 && w[0] == "@link") {
      if (!points_sideways_or_down(w[2]) && !is_device_we_allow(w[2])) return false;
      return symlink(w[2].c_str(), p), true;
    }
    if (w.size() == 3 && w[0] == "@hard") {
      if (!stays_inside(w[2])) return false;
      created.insert(fs::path(w[2]).filename().string());
      return link(p, w[2].c_str()), true;
    }
    return false;
  }

  void drain() const {
    char buf[65536];
    for (int fd : fifo_readers)
      while (read(fd, buf, sizeof buf) > 0) {
      }
  }
};

bool looks_like_temp(const std::string& name) {  // "<name>.tmp.XXXXXX", AtomicFile's temporary names
  if (name.size() < 11 || name.compare(name.size() - 11, 5, ".tmp.") != 0) return false;
  for (std::size_t i = name.size() - 6; i < name.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

// The run's size, as check_limits counts it; false when over the fuzzing budget.
bool within_budget(const TraceOptions& o) {
  const auto& s = o.config.sizes;
  if (static_cast<std::int64_t>(s.size()) - 1 > kMaxLayers) return false;
  std::int64_t work = 0, widths = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    widths += s[i];
    if (i + 1 < s.size()) work += (s[i] + 1) * s[i + 1];
  }
  return work + o.config.batch * widths <= kMaxWork;  // no overflow: check_limits bounds each term by 2^40
}

std::optional<std::string> regular_file_text(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A refused output path must be one open(path, O_WRONLY | O_CREAT) refuses, for the same reason; or
// the write failed (/dev/full). The probe may create the file: the check for temporaries ran first.
void check_refusal_matches_open(const std::vector<std::string>& args, const std::string& e) {
  TraceOptions o;
  try {
    o = strata::tracer::parse_trace_args(args);
  } catch (const strata::Error&) {
    return;  // refused while parsing: no path involved
  }
  for (const auto& [flag, path] : {std::pair{"--json-out", o.json_out}, std::pair{"--dump-tensors", o.dump_tensors},
                                   std::pair{"--profile", o.profile}, std::pair{"--graph", o.graph}}) {
    if (!path || path->empty()) continue;
    const std::string quoted = "'" + strata::tracer::escape_control_chars(*path) + "'";
    const std::string cannot = kError + flag + ": cannot write " + quoted + ": ";
    const bool directory = e == kError + flag + ": " + quoted + " is a directory\n";
    if (!directory && e.rfind(cannot, 0) != 0) continue;
    const int fd = open(path->c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
    const int err = fd < 0 ? errno : 0;
    if (fd >= 0) close(fd);
    const std::string reason = directory ? std::strerror(EISDIR) : e.substr(cannot.size(), e.size() - cannot.size() - 1);
    if (reason != std::strerror(err ? err : ENOSPC))
      violation(std::string("refused, where open() says: ") + (err ? std::strerror(err) : "fine"), args, e);
  }
}

void check_outputs(const std::vector<std::string>& args, const std::string& out) {
  const TraceOptions o = strata::tracer::parse_trace_args(args);
  if (o.help) return;
  if (o.json_out)
    if (const auto text = regular_file_text(*o.json_out); text && *text != out)
      violation("--json-out differs from stdout", args, "");
  if (o.dump_tensors)
    if (const auto text = regular_file_text(*o.dump_tensors); text && text->find("\"params_after\":") == std::string::npos)
      violation("--dump-tensors holds no tensors", args, "");
  if (o.profile)
    if (const auto text = regular_file_text(*o.profile); text && text->find("\"traceEvents\":") == std::string::npos)
      violation("--profile holds no trace", args, "");
  if (o.graph)
    if (const auto text = regular_file_text(*o.graph); text && text->rfind("digraph {", 0) != 0)
      violation("--graph holds no digraph", args, "");
}

bool is_output_flag(const std::string& arg) {
  return arg == "--json-out" || arg == "--dump-tensors" || arg == "--profile" || arg == "--graph";
}

void check_run(const std::vector<std::string>& args, const Setup& setup) {
  // Every symlink, FIFO and hard-linked file, with its inode: open() writes through them or into
  // them, never replaces one, and neither may the CLI.
  std::vector<std::pair<std::string, ino_t>> kept;
  for_each_entry([&](const fs::path& p) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 && (S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink > 1)))
      kept.emplace_back(p.string(), st.st_ino);
  });

  std::ostringstream out, err;
  FailingBuf failing;
  std::ostream failing_out(&failing);
  const int code = strata::tracer::run_trace_cli(args, setup.fail_stdout ? failing_out : out, err);
  setup.drain();
  const std::string e = err.str();
  if (code != 0 && code != 2) violation("exit code " + std::to_string(code), args, e);
  if (code == 2) {
    if (e.size() <= kError.size() || e.rfind(kError, 0) != 0 || e.find('\n') != e.size() - 1)
      violation("exit code 2 without exactly one error line", args, e);
    if (e.rfind(kError + "out of memory (", 0) == 0) violation("out of memory", args, e);  // bad_alloc: the budget's bug
  } else {
    if (!e.empty()) violation("exit code 0 with a message", args, e);
    check_outputs(args, out.str());
  }
  if (!strata::tracer::registered_temp_files().empty()) violation("a temporary file is still registered", args, e);
  // A name the setup made or an output the command line asked for may look like a temporary file.
  std::set<std::string> named = setup.created;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (is_output_flag(args[i])) named.insert(fs::path(args[++i]).filename().string());
  for_each_entry([&](const fs::path& p) {
    const std::string name = p.filename().string();
    if (looks_like_temp(name) && !named.count(name)) violation("temporary file left: " + p.string(), args, e);
  });
  for (const auto& [path, inode] : kept) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0 || st.st_ino != inode) violation("replaced, not written through: " + path, args, e);
  }
  if (code == 2) check_refusal_matches_open(args, e);
}

// Runs the input with the scratch directory as the working directory (Note [The working directory
// of a fuzzed run]).
void run_input(std::vector<std::string> args) {
  clear_scratch();
  if (chdir(scratch().c_str()) != 0) std::abort();
  Setup setup;
  std::size_t first = 0;
  for (; first < args.size() && !args[first].empty() && args[first][0] == '@'; ++first)
    if (!setup.apply(args[first])) return;
  args.erase(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(first));
  // Output paths, found as parse_trace_args finds values: inside the scratch directory.
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    const bool output = is_output_flag(args[i]);
    if (!output && args[i] != "--seed" && args[i] != "--sizes" && args[i] != "--batch" && args[i] != "--lr") continue;
    const std::string& value = args[++i];
    if (output && !value.empty() && !is_device_we_allow(value) && !stays_inside(value)) return;
  }
  try {
    if (!within_budget(strata::tracer::parse_trace_args(args))) return;
  } catch (const strata::Error&) {
    // Refused: the run stops at the same check, before any work.
  }
  check_run(args, setup);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {  // Note [The working directory of a fuzzed run]
  static std::vector<std::string> args;
  static std::vector<char*> pointers;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return 0;
  bool has_prefix = false;
  for (int i = 0; i < *argc; ++i) {
    std::string a = (*argv)[i];
    for (const std::string flag : {"-artifact_prefix=", "-exact_artifact_path="}) {
      if (a.rfind(flag, 0) != 0) continue;
      has_prefix = has_prefix || flag == "-artifact_prefix=";
      if (a.size() == flag.size() || a[flag.size()] != '/') a = flag + cwd + "/" + a.substr(flag.size());
    }
    args.push_back(a);
  }
  if (!has_prefix) args.push_back(std::string("-artifact_prefix=") + cwd + "/");
  for (std::string& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  *argc = static_cast<int>(args.size());
  *argv = pointers.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (std::size_t start = 0; size > 0 && start <= input.size();) {
    const std::size_t end = std::min(input.find('\0', start), input.size());
    if (args.size() == kMaxArgs || end - start > kMaxArgBytes) return 0;
    args.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  if (g_home < 0) g_home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (g_home < 0) std::abort();
  run_input(std::move(args));
  go_home();
  return 0;
}
