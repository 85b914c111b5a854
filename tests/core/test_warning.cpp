// tests/core/test_warning.cpp: warnings (core/util/warning.h): the calling thread's handler gets them, a
// guard installs one for a scope, the default handler prints "Warning: <message>" to stderr, and
// STRATA_WARN_ONCE warns once per place it is written, even when threads race to it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/util/warning.h"

namespace test_warning {  // Note [Test files in unity builds]

using namespace strata;

namespace {

struct Collector : WarningHandler {
  std::mutex mutex;
  std::vector<std::string> messages;
  std::vector<std::string> functions;
  void process(const Warning& w) override {
    const std::lock_guard<std::mutex> lock(mutex);
    messages.push_back(w.msg());
    functions.push_back(w.source_location().function);
  }
};

void warn_once_here(int value) { STRATA_WARN_ONCE("warned once, first with ", value); }

}  // namespace

TEST_CASE("a warning goes to the calling thread's handler; a guard installs one for its scope") {
  Collector outer;
  Collector inner;
  WarningHandler* const before = get_warning_handler();
  {
    const WarningHandlerGuard guard(&outer);
    CHECK(get_warning_handler() == &outer);
    STRATA_WARN("first ", 1);
    {
      const WarningHandlerGuard nested(&inner);
      STRATA_WARN("second");
    }
    STRATA_WARN("third");
  }
  CHECK(get_warning_handler() == before);
  CHECK(outer.messages == std::vector<std::string>{"first 1", "third"});
  CHECK(inner.messages == std::vector<std::string>{"second"});
  CHECK(outer.functions[0] == std::string(__func__));  // where it was raised, as c10's SourceLocation
  set_warning_handler(&outer);
  set_warning_handler(nullptr);  // back to the default
  CHECK(get_warning_handler() == before);
}

TEST_CASE("a handler that throws makes the warning an error of the call that warned") {
  struct Thrower : WarningHandler {
    void process(const Warning& w) override { throw Error("warning as error: " + w.msg()); }
  } thrower;
  const WarningHandlerGuard guard(&thrower);
  CHECK_THROWS_WITH_AS(STRATA_WARN("careful"), "warning as error: careful", Error);
}

TEST_CASE("the default handler writes one line, Warning: <message>, to stderr") {
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  std::fflush(stderr);
  const int saved = dup(2);
  REQUIRE(saved >= 0);
  REQUIRE(dup2(fileno(capture), 2) == 2);
  STRATA_WARN("to stderr, ", 42);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  char buffer[128] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof(buffer) - 1, capture);
  std::fclose(capture);
  CHECK(std::string(buffer, n) == "Warning: to stderr, 42\n");
}

TEST_CASE("STRATA_WARN_ONCE warns once per place, even when threads race to it" * doctest::test_suite("threads")) {
  // The handler is per thread, so each thread installs the same collector.
  Collector collector;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const WarningHandlerGuard guard(&collector);
      ready.fetch_add(1);
      while (ready.load() < 4) {
      }
      for (int i = 0; i < 100; ++i) warn_once_here(t);
    });
  for (std::thread& t : threads) t.join();
  {
    const WarningHandlerGuard guard(&collector);
    warn_once_here(7);
  }
  REQUIRE(collector.messages.size() == 1);
  CHECK(collector.messages[0].rfind("warned once, first with ", 0) == 0);
}

}  // namespace test_warning
