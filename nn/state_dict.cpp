// nn/state_dict.cpp: Module::state_dict and Module::load_state_dict with PyTorch's key names and
// error messages.
#include "autograd/grad_mode.h"
#include "core/util/error.h"
#include "core/shape.h"
#include "nn/module.h"
#include "ops/detach.h"
#include "ops/functions.h"

namespace strata::nn {

namespace {

std::string torch_size(IntArrayRef sizes) { return "torch.Size(" + shape_str(sizes) + ")"; }

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) out += (i ? ", \"" : "\"") + keys[i] + "\"";
  return out;
}

}  // namespace

void Module::collect_modules(const std::string& prefix, std::vector<std::pair<std::string, const Module*>>& out) const {
  out.emplace_back(prefix, this);
  for (const auto& [child_name, child] : children_) child->collect_modules(prefix + child_name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::state_dict() const {
  std::vector<std::pair<std::string, const Module*>> modules;
  collect_modules("", modules);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [prefix, module] : modules)
    for (const auto& [name, param] : module->params_) out.emplace_back(prefix + name, detach(param));
  return out;
}

// Note [load_state_dict checks before it copies]
// The checks and messages are PyTorch's _load_from_state_dict and load_state_dict: walking the
// modules in order, an entry whose key has a module's prefix but whose next name part is neither a
// parameter nor a child of that module is unexpected; a parameter without an entry is missing; an
// entry of another shape is a size mismatch (always an error). The message lists missing keys, then
// unexpected ones, then the mismatches. PyTorch copies the matching entries before it raises; strata
// checks everything first, so a failed load leaves the module as it was.
IncompatibleKeys Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  std::vector<std::pair<std::string, const Module*>> modules;
  collect_modules("", modules);
  IncompatibleKeys result;
  std::vector<std::string> mismatches;
  std::vector<std::pair<Tensor, Tensor>> copies;  // (parameter, source)
  for (const auto& [prefix, module] : modules) {
    for (const auto& [name, param] : module->params_) {
      const std::string key = prefix + name;  // STRATA_CHECK's lambda cannot capture a structured binding (clang 14)
      const auto it = state.find(key);
      if (it == state.end()) {
        result.missing_keys.push_back(prefix + name);
        continue;
      }
      const Tensor& source = it->second;
      STRATA_CHECK(source.defined() && !source.is_meta(), "load_state_dict: the entry for ", key, " has no data");
      if (source.sizes().vec() != param.sizes().vec()) {
        mismatches.push_back("size mismatch for " + prefix + name + ": copying a param with shape " + torch_size(source.sizes()) +
                             " from checkpoint, the shape in current model is " + torch_size(param.sizes()) + ".");
        continue;
      }
      copies.emplace_back(param, source);
    }
    for (const auto& [key, value] : state) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string head = key.substr(prefix.size(), key.find('.', prefix.size()) - prefix.size());
      const auto named = [&](const auto& entries) {
        for (const auto& entry : entries)
          if (entry.first == head) return true;
        return false;
      };
      if (!named(module->params_) && !named(module->children_)) result.unexpected_keys.push_back(key);
    }
  }
  std::string errors;
  if (strict && !result.missing_keys.empty()) errors += "\n\tMissing key(s) in state_dict: " + quoted_list(result.missing_keys) + ". ";
  if (strict && !result.unexpected_keys.empty()) errors += "\n\tUnexpected key(s) in state_dict: " + quoted_list(result.unexpected_keys) + ". ";
  for (const std::string& mismatch : mismatches) errors += "\n\t" + mismatch;
  STRATA_CHECK(errors.empty(), "Error(s) in loading state_dict for ", type_name(), ":", errors);
  autograd::NoGradGuard no_grad;
  for (const auto& [param, source] : copies) copy_(param, source);
  return result;
}

}  // namespace strata::nn
