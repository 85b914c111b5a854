// nn/mod_tracker.cpp: module names and the running set (Note [Module names of a tracker]).
#include "nn/mod_tracker.h"

#include "nn/module.h"

namespace strata::nn {

void ModTracker::enter() {
  STRATA_CHECK(!entered_, "ModTracker: already entered");
  pre_handle_ = register_module_forward_pre_hook([this](Module& m, const Tensor& in) -> std::optional<Tensor> {
    pre_forward(m, in);
    return std::nullopt;
  });
  post_handle_ = register_module_forward_hook(
      [this](Module& m, const Tensor& in, const Tensor& out) -> std::optional<Tensor> {
        post_forward(m, in, out);
        return std::nullopt;
      },
      /*always_call=*/true);
  entered_ = true;
}

void ModTracker::exit() {
  if (!entered_) return;
  pre_handle_.remove();
  post_handle_.remove();
  entered_ = false;
}

std::set<std::string> ModTracker::parents() const {
  std::set<std::string> out{"Global"};
  for (const auto& [name, count] : active_) out.insert(name);
  return out;
}

const std::string& ModTracker::fqn(const Module& module) {
  auto it = known_.find(&module);
  if (it == known_.end()) it = known_.emplace(&module, module.type_name()).first;
  if (seen_.insert(&module).second) {
    const std::string name = it->second;  // naming the children may rehash known_
    for (const auto& [child_name, child] : module.named_children()) {
      known_[child.get()] = name + "." + child_name;
      fqn(*child);
    }
  }
  return known_.at(&module);
}

const std::string* ModTracker::known_fqn(const Module& module) const {
  auto it = known_.find(&module);
  return it == known_.end() ? nullptr : &it->second;
}

void ModTracker::register_user_hooks(PreHook pre_fw_hook, PostHook post_fw_hook) {
  STRATA_CHECK(!(pre_fw_hook && user_pre_) && !(post_fw_hook && user_post_),
               "Only one pre_fw_hook and one post_fw_hook can be registered at a time. Clear the existing hook by "
               "calling ``clear_user_hooks`` before registering a new one");
  if (pre_fw_hook) user_pre_ = std::move(pre_fw_hook);
  if (post_fw_hook) user_post_ = std::move(post_fw_hook);
}

void ModTracker::clear_user_hooks() {
  user_pre_ = nullptr;
  user_post_ = nullptr;
}

void ModTracker::pre_forward(Module& module, const Tensor& input) {
  const std::string& name = fqn(module);
  ++active_[name];
  if (user_pre_) user_pre_(module, input);
}

void ModTracker::post_forward(Module& module, const Tensor& input, const Tensor& output) {
  const std::string name = fqn(module);
  // Leave the running set even if the user hook throws: the set must match the calls in flight.
  struct Leave {
    std::map<std::string, int>& active;
    const std::string& name;
    ~Leave() {
      auto it = active.find(name);
      if (it != active.end() && --it->second == 0) active.erase(it);
    }
  } leave{active_, name};
  if (user_post_) user_post_(module, input, output);
}

}  // namespace strata::nn
