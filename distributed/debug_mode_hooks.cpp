// distributed/debug_mode_hooks.cpp: the thread's redistribution listeners (Note [DebugMode's hooks
// live below it], debug_mode_hooks.h).
#include "distributed/debug_mode_hooks.h"

#include <algorithm>

namespace strata::distributed {

namespace {
std::vector<RedistributeListener*>& listeners() {
  thread_local std::vector<RedistributeListener*> list;
  return list;
}
}  // namespace

namespace detail {
std::atomic<int> redistribute_listeners_alive{0};

RedistributeListener* thread_redistribute_listener() {
  const auto& list = listeners();
  return list.empty() ? nullptr : list.front();
}
}  // namespace detail

void add_redistribute_listener(RedistributeListener* listener) {
  listeners().push_back(listener);
  detail::redistribute_listeners_alive.fetch_add(1, std::memory_order_relaxed);
}

void remove_redistribute_listener(RedistributeListener* listener) {
  auto& list = listeners();
  if (auto it = std::find(list.rbegin(), list.rend(), listener); it != list.rend()) {
    list.erase(std::next(it).base());
    detail::redistribute_listeners_alive.fetch_sub(1, std::memory_order_relaxed);
  }
}

void close_redistribute(RedistributeListener* listener) {
  const auto& list = listeners();
  if (std::find(list.begin(), list.end(), listener) != list.end()) listener->exit_redistribute();
}

}  // namespace strata::distributed
