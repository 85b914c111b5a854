// tests/nn/test_safetensors_io.cpp: safetensors files at scale and under limits: a header of 10^5
// entries loads in linear time, a save that cannot fit (disk, RLIMIT_FSIZE) is refused up front and
// leaves no temporary file, the copying load, and LibTorch's save/load spelling.
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "io/atomic_file.h"
#include "nn/safetensors.h"
#include "ops/functions.h"
#include "tests/nn/safetensors_test_helpers.h"
#include "tests/test_helpers.h"

namespace test_safetensors_io {  // Note [Test files in unity builds]

using namespace strata;
using namespace strata::testing;

TEST_CASE("load_safetensors reads a header of 10^5 entries in time linear in its size") {
  // Note [Parsing the header in linear time]: before, 40,000 entries took 10 s and 10^5 minutes.
  constexpr int kEntries = 100'000;
  std::string header = "{";
  char name[32];
  for (int i = 0; i < kEntries; ++i) {
    std::snprintf(name, sizeof name, "t%06d", i);
    header += std::string(i ? "," : "") + "\"" + name + R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  }
  header += "}";
  const SafetensorsFile file = load_safetensors_from_bytes(file_bytes(header, ""), "many");
  REQUIRE(file.tensors.size() == kEntries);
  CHECK(file.tensors.at("t099999").sizes().vec() == std::vector<std::int64_t>{0});
  // A duplicate key is still refused, however far in (a header of 10 entries: the parse stops there).
  std::string twice = header.substr(0, header.find(",\"t000010\""));
  twice += R"(,"t000007":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})";
  CHECK_THROWS_WITH_AS(load_safetensors_from_bytes(file_bytes(twice, ""), "many"),
                       "load_safetensors: 'many': duplicate key 't000007' in the header", Error);
}

namespace {

// Runs `body` in a forked child with SIGXFSZ at its default action (it kills) and the file-size limit
// set to `limit` bytes; returns the child's wait status. `body` returns the exit code.
template <typename Body>
int in_child_with_file_limit(rlim_t limit, Body body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_DFL);
    rlimit rl{};
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
    int code = 125;
    try {
      code = body();
    } catch (...) {
    }
    _exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

}  // namespace

TEST_CASE("save_safetensors refuses a file bigger than its file system's free space, before writing") {
  TempDir dir;
  // 2^50 float32 elements from one: 4 PiB of file, which no test machine has free. Before, the whole
  // file was built in memory first: std::bad_alloc.
  const Tensor huge = expand(scalar_tensor(1.0, ScalarType::Float32), {std::int64_t{1} << 50});
  const std::string path = dir.file("huge.safetensors");
  try {
    save_safetensors(path, {{"huge", huge}});
    FAIL("saved 4 PiB");
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string start = "save_safetensors: cannot write '" + path + "': the file is ";
    REQUIRE(message.rfind(start, 0) == 0);
    const std::uint64_t size = std::stoull(message.substr(start.size()));
    CHECK(size > (std::uint64_t{1} << 52));  // the data, and the header
    CHECK(size < (std::uint64_t{1} << 52) + 128);
    CHECK(contains(message, " bytes, but its file system has "));
  }
  CHECK(dir.entries() == 0);  // no temporary left
}

TEST_CASE("save_safetensors streams views and expanded tensors in parts and loads them back") {
  TempDir dir;
  // 3 MiB of float32 from 12 bytes (several chunks of the writer's buffer), a transposed view, bools
  // with a byte other than 0 and 1, and a scalar.
  const Tensor wide = expand(tensor<float>({1.5f, -2.f, 3.f}, {3, 1}), {3, 1 << 18});
  const Tensor transposed = t(tensor<std::int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}));
  const std::string path = dir.file("views.safetensors");
  save_safetensors(path, {{"wide", wide}, {"t", transposed}, {"s", scalar_tensor(2.0, ScalarType::Float64)}});
  const SafetensorsFile file = load_safetensors(path);
  CHECK(file.tensors.at("wide").to_vector<float>() == wide.to_vector<float>());
  CHECK(file.tensors.at("t").to_vector<std::int64_t>() == transposed.to_vector<std::int64_t>());
  CHECK(file.tensors.at("s").to_vector<double>() == std::vector<double>{2.0});
  CHECK(read_bytes(path) == serialize_safetensors({{"wide", wide}, {"t", transposed}, {"s", scalar_tensor(2.0, ScalarType::Float64)}}));
}

TEST_CASE("a hard-linked file bigger than the in-place hold is rewritten as it streams, under both names") {
  TempDir dir;
  const std::string path = dir.file("linked.safetensors"), other = dir.file("other-name.safetensors");
  save_safetensors(path, {{"old", tensor<float>({1, 2})}});
  REQUIRE(link(path.c_str(), other.c_str()) == 0);  // two names: a rename would split them
  // 64 MiB + 1 MiB of float32 from one element: past the hold, so written before publish.
  const std::int64_t n = static_cast<std::int64_t>(tracer::AtomicFile::kInPlaceHoldBytes / 4) + (1 << 18);
  const Tensor big = expand(tensor<float>({2.5f}), {n});
  save_safetensors(path, {{"big", big}, {"small", tensor<float>({7, 8})}});
  const SafetensorsFile file = load_safetensors(other);  // the other name sees the new content
  CHECK(file.tensors.count("old") == 0);
  REQUIRE(file.tensors.at("big").numel() == n);
  CHECK(file.tensors.at("big")[n - 1].item<float>() == 2.5f);
  CHECK(file.tensors.at("small").to_vector<float>() == std::vector<float>{7, 8});
}

TEST_CASE("save_safetensors under a file-size limit is refused with both sizes and leaves no temporary") {
  TempDir dir;
  const std::string path = dir.file("big.safetensors");
  const Tensor big = zeros({1 << 18});  // 1 MiB of data
  // Before, the write ran into the limit and SIGXFSZ killed the process, leaving big.safetensors.tmp.XXXXXX.
  const int status = in_child_with_file_limit(4096, [&] {
    try {
      save_safetensors(path, {{"big", big}});
    } catch (const Error& e) {
      const std::string message = e.what();
      return contains(message, "over the file-size limit (RLIMIT_FSIZE, ulimit -f) of 4096 bytes") &&
                     contains(message, "the file is " + std::to_string(serialize_safetensors({{"big", big}}).size()) + " bytes")
                 ? 0
                 : 3;
    }
    return 4;
  });
  CHECK(exited_with(status, 0));
  CHECK(dir.entries() == 0);
}

TEST_CASE("a write past the file-size limit fails with an Error and removes the temporary file") {
  // Past check_fits (the limit lowered after it, or a file written without it): the write fails with
  // EFBIG, the SIGXFSZ it raised is taken back, and the temporary file goes.
  TempDir dir;
  const std::string path = dir.file("out.bin");
  const int status = in_child_with_file_limit(100, [&] {
    try {
      tracer::AtomicFile file(path, "label");
      file.write(std::string(1000, 'x'));
    } catch (const Error& e) {
      return contains(e.what(), "label: cannot write '" + path + "': File too large") ? 0 : 3;
    }
    return 4;
  });
  CHECK(exited_with(status, 0));
  CHECK(dir.entries() == 0);
}

TEST_CASE("load_safetensors with mmap=false owns its bytes: rewriting the file in place changes nothing") {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  save_safetensors(path, {{"a", tensor<float>({1, 2, 3, 4})}, {"b", tensor<float>({5, 6})}});
  const SafetensorsFile copied = load_safetensors(path, {.mmap = false});
  const SafetensorsFile mapped = load_safetensors(path);
  // Both wrap one buffer each: b's data follows a's, byte for byte.
  CHECK(static_cast<const char*>(copied.tensors.at("b").raw_data()) - static_cast<const char*>(copied.tensors.at("a").raw_data()) == 16);
  // Another writer rewrites the data in place (same inode, not truncated): a with 9s.
  std::string bytes = read_bytes(path);
  const std::size_t data = bytes.size() - 24;
  const float nine = 9;
  for (std::size_t i = 0; i < 4; ++i) std::memcpy(bytes.data() + data + 4 * i, &nine, 4);  // a comes first
  {
    std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  CHECK(copied.tensors.at("a").to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(copied.tensors.at("b").to_vector<float>() == std::vector<float>{5, 6});
  // The documented property of the mapping (Note [A mapping shows later writes to the file]).
  CHECK(mapped.tensors.at("a").to_vector<float>() == std::vector<float>{9, 9, 9, 9});
  // The copying load validates as the mapped one does.
  write_bytes(path, bytes.substr(0, bytes.size() - 4));
  CHECK_THROWS_WITH_AS(load_safetensors(path, {.mmap = false}), doctest::Contains("run past the end of the data"), Error);
}

TEST_CASE("save and load: LibTorch's spelling for one tensor and a vector, round trip and errors") {
  TempDir dir;
  const std::string path = dir.file("a.pt");
  const Tensor a = t(tensor<float>({1.5f, -2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3}));  // a view: saved in its own row-major order
  save(a, path);  // torch::save(a, "a.pt")
  Tensor b;
  load(b, path);  // torch::load(b, "a.pt")
  CHECK(b.sizes().vec() == std::vector<std::int64_t>{3, 2});
  CHECK(b.to_vector<float>() == a.to_vector<float>());
  CHECK(load_safetensors(path).tensors.count("0") == 1);  // LibTorch's key

  const std::string many = dir.file("v.pt");
  save(std::vector<Tensor>{tensor<std::int64_t>({7, 8}), tensor<bool>({true}), scalar_tensor(0.25, ScalarType::Float64)}, many);
  std::vector<Tensor> loaded;
  load(loaded, many);
  REQUIRE(loaded.size() == 3);
  CHECK(loaded[0].to_vector<std::int64_t>() == std::vector<std::int64_t>{7, 8});
  CHECK(loaded[1].to_vector<bool>() == std::vector<bool>{true});
  CHECK(loaded[2].to_vector<double>() == std::vector<double>{0.25});
  load(b, many);  // a vector's first tensor is the one tensor's key
  CHECK(b.to_vector<std::int64_t>() == std::vector<std::int64_t>{7, 8});

  // The file is read, not mapped: zeroing its 25 bytes of data in place changes nothing loaded.
  {
    std::fstream out(many, std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(static_cast<std::streamoff>(read_bytes(many).size() - 25));
    out.write(std::string(25, '\0').data(), 25);
  }
  CHECK(load_safetensors(many).tensors.at("0").to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 0});
  CHECK(loaded[0].to_vector<std::int64_t>() == std::vector<std::int64_t>{7, 8});

  CHECK_THROWS_WITH_AS(load(b, dir.file("missing.pt")),
                       ("load_safetensors: '" + dir.file("missing.pt") + "': cannot open: No such file or directory").c_str(), Error);
  write_bytes(dir.file("damaged.pt"), read_bytes(many).substr(0, 40));
  CHECK_THROWS_WITH_AS(load(loaded, dir.file("damaged.pt")), doctest::Contains(("load_safetensors: '" + dir.file("damaged.pt") + "': ").c_str()), Error);
  save_safetensors(dir.file("named.safetensors"), {{"w", tensor<float>({1})}});
  CHECK_THROWS_WITH_AS(load(b, dir.file("named.safetensors")),
                       ("load: '" + dir.file("named.safetensors") + "' holds no tensor under the key '0' that save writes (its keys: 'w')").c_str(),
                       Error);
  save_safetensors(dir.file("gap.safetensors"), {{"0", tensor<float>({1})}, {"2", tensor<float>({2})}});
  CHECK_THROWS_WITH_AS(load(loaded, dir.file("gap.safetensors")),
                       doctest::Contains("holds keys other than the '0', '1', ... that save writes (its keys: '0', '2')"), Error);
  CHECK(loaded.size() == 3);  // unchanged by the failed load
  CHECK_THROWS_WITH_AS(save(Tensor(), dir.file("u.pt")), "save_safetensors: tensor '0' is undefined", Error);
}

}  // namespace test_safetensors_io
