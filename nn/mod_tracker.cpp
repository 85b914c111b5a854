// nn/mod_tracker.cpp: module names and the running set (Note [Module names of a tracker]), and the
// gradient hooks that carry it through the backward (Note [A module's backward]).
#include "nn/mod_tracker.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autograd/graph.h"
#include "nn/module.h"

namespace strata::nn {

// Note [A tracker sees its own thread's modules]
// The module hooks are global (every thread's calls: nn/module_hooks.h), but a tracker's state is
// one thread's: where thread ranks each run a model under their own tracker (a DebugMode per rank,
// strata-trace --html --world-size), a call on another thread would enter this tracker's running set
// and race its user hooks. So the hooks skip calls from threads other than the one that entered.
struct ModTracker::State {
  std::thread::id thread;  // the thread that entered the tracker
  std::unordered_map<const Module*, std::string> known;
  std::unordered_set<const Module*> seen;
  std::map<std::string, int> active;  // name -> how many calls (forward or backward) of it are open
  PreHook user_pre;
  PostHook user_post;
  BwHook user_pre_bw, user_post_bw;

  // Gradient hooks registered by forward calls, by id; swept of expired ones as they grow.
  std::uint64_t next_id = 1;
  std::vector<std::pair<std::uint64_t, autograd::MultiGradHandle>> grad_hooks;
  std::size_t sweep_at = 64;
  // Modules whose input needed no gradient: left at the end of the next backward pass.
  std::vector<std::pair<std::uint64_t, std::string>> leave_after_backward;
  bool has_callback = false;
  std::int64_t callback_pass = -1;
  // The forward calls in flight: what each one's pre-forward registered (0: nothing).
  struct Call {
    const Module* module;
    std::uint64_t registered;
  };
  std::vector<Call> calls;

  void enter(const std::string& name) { ++active[name]; }
  void leave(const std::string& name) {
    auto it = active.find(name);
    if (it != active.end() && --it->second == 0) active.erase(it);
  }
  std::uint64_t add_grad_hook(autograd::MultiGradHandle handle) {
    if (grad_hooks.size() >= sweep_at) {
      std::erase_if(grad_hooks, [](const auto& h) { return h.second.expired(); });
      sweep_at = std::max<std::size_t>(64, 2 * grad_hooks.size());
    }
    grad_hooks.emplace_back(next_id, std::move(handle));
    return next_id++;
  }
  // Undoes what a forward call's pre-forward registered (the call threw).
  void unregister(std::uint64_t id) {
    for (auto& [hook_id, handle] : grad_hooks)
      if (hook_id == id) handle.remove();
    std::erase_if(grad_hooks, [&](const auto& h) { return h.first == id; });
    std::erase_if(leave_after_backward, [&](const auto& l) { return l.first == id; });
  }
};

namespace {

using State = std::shared_ptr<ModTracker::State>;

// Upstream's _maybe_set_engine_callback: once per pass, the leavings queued by forward calls (last
// first), then the reset of parents().
void maybe_set_engine_callback(const State& state) {
  const std::int64_t pass = autograd::current_graph_task_id();
  if (state->has_callback && state->callback_pass == pass) return;
  for (auto it = state->leave_after_backward.rbegin(); it != state->leave_after_backward.rend(); ++it)
    autograd::queue_callback([state, name = it->second] {
      if (state->user_post_bw) state->user_post_bw(name, {});
      state->leave(name);
    });
  state->leave_after_backward.clear();
  autograd::queue_callback([state, pass] {
    state->active.clear();
    if (state->callback_pass == pass) state->has_callback = false;
  });
  state->has_callback = true;
  state->callback_pass = pass;
}

// Upstream's _get_append_fn(..., is_bw=True): the module's output gradient arrived.
void enter_backward(const State& state, const std::string& name, std::span<const Tensor> grads) {
  maybe_set_engine_callback(state);
  state->enter(name);
  if (state->user_pre_bw) state->user_pre_bw(name, grads);
}

// Upstream's _get_pop_fn(..., is_bw=True): the module's input gradient is computed.
void leave_backward(const State& state, const std::string& name, std::span<const Tensor> grads) {
  if (state->user_post_bw) state->user_post_bw(name, grads);
  state->leave(name);  // a module never entered in this backward (an output without gradient) is ignored
}

}  // namespace

ModTracker::ModTracker() : state_(std::make_shared<State>()) {}

void ModTracker::enter() {
  STRATA_CHECK(!entered_, "ModTracker: already entered");
  // The module hooks live while the tracker is entered; the tracker is not movable, so they hold `this`.
  state_->thread = std::this_thread::get_id();
  pre_handle_ = register_module_forward_pre_hook([this](Module& module, const Tensor& input) -> std::optional<Tensor> {
    State& s = *state_;
    if (std::this_thread::get_id() != s.thread) return std::nullopt;
    const std::string name = fqn(module);  // a copy: the user hook may name other modules
    s.enter(name);
    s.calls.push_back({&module, 0});
    if (s.user_pre) s.user_pre(module, input);
    if (is_bw()) return std::nullopt;
    std::uint64_t id = 0;
    if (input.defined() && input.requires_grad()) {
      const Tensor inputs[] = {input};
      id = s.add_grad_hook(autograd::register_multi_grad_hook(
          inputs, [state = state_, name](std::span<const Tensor> grads) { leave_backward(state, name, grads); }));
    } else {
      id = s.next_id++;
      s.leave_after_backward.emplace_back(id, name);
    }
    s.calls.back().registered = id;
    return std::nullopt;
  });
  post_handle_ = register_module_forward_hook(
      [this](Module& module, const Tensor& input, const Tensor& output) -> std::optional<Tensor> {
        State& s = *state_;
        if (std::this_thread::get_id() != s.thread) return std::nullopt;
        const std::string name = fqn(module);
        // Leave the running set and close the call even if the user hook throws: the set must match
        // the calls in flight. A call that threw, or whose output needs no gradient (no backward can
        // enter the module), takes back what its pre-forward registered for leaving it; a call whose
        // pre-forward did not run (an earlier pre-hook threw) has nothing to close.
        struct Leave {
          State& s;
          const Module& module;
          const std::string& name;
          bool has_backward;
          ~Leave() {
            if (s.calls.empty() || s.calls.back().module != &module) return;
            s.leave(name);
            if (!has_backward && s.calls.back().registered != 0) s.unregister(s.calls.back().registered);
            s.calls.pop_back();
          }
        } leave{s, module, name, output.defined() && output.requires_grad()};
        if (s.calls.empty() || s.calls.back().module != &module) return std::nullopt;
        if (s.user_post) s.user_post(module, input, output);
        if (!is_bw() && output.defined() && output.requires_grad()) {
          const Tensor outputs[] = {output};
          s.add_grad_hook(autograd::register_multi_grad_hook(
              outputs, [state = state_, name](std::span<const Tensor> grads) { enter_backward(state, name, grads); },
              autograd::MultiGradMode::Any));
        }
        return std::nullopt;
      },
      /*always_call=*/true);
  entered_ = true;
}

void ModTracker::exit() {
  if (!entered_) return;
  pre_handle_.remove();
  post_handle_.remove();
  State& s = *state_;
  for (auto& [id, handle] : s.grad_hooks) handle.remove();
  s.grad_hooks.clear();
  s.leave_after_backward.clear();
  s.calls.clear();
  entered_ = false;
}

std::set<std::string> ModTracker::parents() const {
  std::set<std::string> out{"Global"};
  for (const auto& [name, count] : state_->active) out.insert(name);
  return out;
}

bool ModTracker::is_bw() { return autograd::current_graph_task_id() != -1; }

const std::string& ModTracker::fqn(const Module& module) {
  auto& known = state_->known;
  auto it = known.find(&module);
  if (it == known.end()) it = known.emplace(&module, module.type_name()).first;
  if (state_->seen.insert(&module).second) {
    const std::string name = it->second;  // naming the children may rehash known
    for (const auto& [child_name, child] : module.named_children()) {
      known[child.get()] = name + "." + child_name;
      fqn(*child);
    }
  }
  return known.at(&module);
}

const std::string* ModTracker::known_fqn(const Module& module) const {
  auto it = state_->known.find(&module);
  return it == state_->known.end() ? nullptr : &it->second;
}

void ModTracker::register_user_hooks(PreHook pre_fw_hook, PostHook post_fw_hook, BwHook pre_bw_hook,
                                     BwHook post_bw_hook) {
  State& s = *state_;
  STRATA_CHECK(!(pre_fw_hook && s.user_pre) && !(post_fw_hook && s.user_post),
               "Only one pre_fw_hook and one post_fw_hook can be registered at a time. Clear the existing hook by "
               "calling ``clear_user_hooks`` before registering a new one");
  STRATA_CHECK(!(pre_bw_hook && s.user_pre_bw) && !(post_bw_hook && s.user_post_bw),
               "Only one pre_bw_hook and one post_bw_hook can be registered at a time. Clear the existing hook by "
               "calling ``clear_user_hooks`` before registering a new one");
  if (pre_fw_hook) s.user_pre = std::move(pre_fw_hook);
  if (post_fw_hook) s.user_post = std::move(post_fw_hook);
  if (pre_bw_hook) s.user_pre_bw = std::move(pre_bw_hook);
  if (post_bw_hook) s.user_post_bw = std::move(post_bw_hook);
}

void ModTracker::clear_user_hooks() {
  State& s = *state_;
  s.user_pre = nullptr;
  s.user_post = nullptr;
  s.user_pre_bw = nullptr;
  s.user_post_bw = nullptr;
}

}  // namespace strata::nn
