// lm/scope_tools.cpp: ScopeTools, the observer that opens each tool's own module scope.
#include "scope_tools.h"

#include <algorithm>

namespace lm {

ScopeTools::~ScopeTools() {
  // Scopes still open (an error inside the forward unwound past them) close innermost first.
  while (!debug_scopes_.empty()) debug_scopes_.pop_back();
  while (!profiler_scopes_.empty()) profiler_scopes_.pop_back();
}

void ScopeTools::enter(const std::string& fqn) {
  if (std::find(modules_.begin(), modules_.end(), fqn) == modules_.end()) modules_.push_back(fqn);
  const std::size_t debug_open = debug_scopes_.size(), profiler_open = profiler_scopes_.size();
  try {
    if (options_.profiler_scopes) profiler_scopes_.push_back(std::make_unique<strata::profiler::record_function>(fqn));
    if (options_.debug_mode) debug_scopes_.push_back(options_.debug_mode->record_module_call(fqn));
    if (options_.flop_counter) options_.flop_counter->enter_module(fqn);
  } catch (...) {  // the scope stays closed: close what it opened
    while (debug_scopes_.size() > debug_open) debug_scopes_.pop_back();
    while (profiler_scopes_.size() > profiler_open) profiler_scopes_.pop_back();
    throw;
  }
}

void ScopeTools::exit(const std::string& fqn) noexcept {
  try {
    if (options_.flop_counter) options_.flop_counter->exit_module(fqn);
  } catch (...) {
    if (!error_) error_ = std::current_exception();
  }
  if (options_.debug_mode && !debug_scopes_.empty()) debug_scopes_.pop_back();
  if (options_.profiler_scopes && !profiler_scopes_.empty()) {
    try {
      profiler_scopes_.back()->exit();  // an op: it may throw, which the destructor would not report
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
    profiler_scopes_.pop_back();
  }
}

void ScopeTools::check() const {
  if (error_) std::rethrow_exception(error_);
}

}  // namespace lm
