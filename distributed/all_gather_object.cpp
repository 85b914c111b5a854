// distributed/all_gather_object.cpp: words and strings gathered over a group (all_gather_object.h).
#include "distributed/all_gather_object.h"

#include <algorithm>
#include <cstring>

#include "core/util/error.h"
#include "ops/functions.h"
#include "ops/tensor_literal.h"

namespace strata::distributed {

std::vector<std::int64_t> all_gather_words(ProcessGroup& group, const std::vector<std::int64_t>& mine) {
  const Tensor out = empty({static_cast<std::int64_t>(mine.size()) * group.size()}, TensorOptions{ScalarType::Int64, {}});
  group.all_gather_into_tensor(tensor(mine), out)->wait();
  return out.to_vector<std::int64_t>();
}

std::vector<std::string> all_gather_strings(ProcessGroup& group, std::string_view mine) {
  const std::vector<std::int64_t> lengths = all_gather_words(group, {static_cast<std::int64_t>(mine.size())});
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const auto per_rank = static_cast<std::size_t>((longest + 7) / 8);  // words
  std::vector<std::int64_t> words(per_rank, 0);
  if (!mine.empty()) std::memcpy(words.data(), mine.data(), mine.size());
  const std::vector<std::int64_t> all = all_gather_words(group, words);
  const auto* bytes = reinterpret_cast<const char*>(all.data());
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.emplace_back(bytes + r * per_rank * 8, static_cast<std::size_t>(lengths[r]));
  return out;
}

}  // namespace strata::distributed
