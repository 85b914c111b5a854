// lm/module_scope.cpp: the thread's observer and its stack of open module scopes.
#include "module_scope.h"

#include <vector>

#include <strata/core/util/error.h>

namespace lm {

namespace {

struct ScopeState {
  ModuleScopeObserver* observer = nullptr;
  std::vector<std::string> open;  // the fully qualified names of the open scopes, innermost last
};

ScopeState& state() {
  thread_local ScopeState s;
  return s;
}

}  // namespace

ObserveModuleScopes::ObserveModuleScopes(ModuleScopeObserver& observer) {
  ScopeState& s = state();
  STRATA_CHECK(s.observer == nullptr, "lm::ObserveModuleScopes: this thread already has a module scope observer");
  s.observer = &observer;
  s.open.clear();
}

ObserveModuleScopes::~ObserveModuleScopes() {
  ScopeState& s = state();
  s.observer = nullptr;
  s.open.clear();
}

bool ModuleScope::observed() { return state().observer != nullptr; }

void ModuleScope::open_observed(std::string_view name, std::int64_t index) {
  ScopeState& s = state();
  std::string fqn = s.open.empty() ? std::string() : s.open.back() + ".";
  fqn += name;
  if (index >= 0) fqn += "." + std::to_string(index);
  s.observer->enter(fqn);
  s.open.push_back(std::move(fqn));
  open_ = true;
}

void ModuleScope::close_open() noexcept {
  open_ = false;
  ScopeState& s = state();
  if (s.observer == nullptr || s.open.empty()) return;  // the observer left while the scope was open
  s.observer->exit(s.open.back());
  s.open.pop_back();
}

}  // namespace lm
