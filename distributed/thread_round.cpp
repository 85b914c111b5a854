// distributed/thread_round.cpp: the work of a complete round of the thread backend: checking that
// the ranks agree, each share of each collective (reductions in rank order, copies between the
// ranks' tensors), who does the shares, and when a round is dropped. When a round is complete, and
// who waits for whom, is thread_backend.cpp's.
#include "distributed/thread_world.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/util/error.h"
#include "core/util/wrapping_math.h"

namespace strata::distributed::detail {

// Copies t's elements, row-major, into `out` (out.size bytes).
void copy_row_major(const Tensor& t, Buffer& out) {
  const std::size_t item = element_size(t.dtype());
  if (out.empty()) return;
  const auto* base = static_cast<const std::byte*>(t.impl()->data());
  if (t.is_contiguous()) {
    std::memcpy(out.data(), base, out.size);
    return;
  }
  const std::size_t dims = t.sizes().size();
  std::vector<std::int64_t> index(dims, 0);
  for (std::size_t k = 0; k < static_cast<std::size_t>(t.numel()); ++k) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < dims; ++d) offset += index[d] * t.strides()[d];
    std::memcpy(out.data() + k * item, base + offset * static_cast<std::int64_t>(item), item);
    for (std::size_t d = dims; d-- > 0;) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
}

namespace {

// out = in[0] f in[1] f ... in rank order, a whole row at a time (the first two ranks fused) so each
// loop vectorises.
template <typename T, typename F>
void reduce_with(T* out, const std::vector<const T*>& in, std::size_t n, F f) {
  if (in.size() == 1) {
    std::copy(in[0], in[0] + n, out);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = f(in[0][i], in[1][i]);
  for (std::size_t r = 2; r < in.size(); ++r)
    for (std::size_t i = 0; i < n; ++i) out[i] = f(out[i], in[r][i]);
}

template <typename T>
void reduce_rows(T* out, const std::vector<const T*>& in, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    // Note [Integer kernels wrap]: int64 sums and products wrap around, as Gloo's and MPI's do.
    case ReduceOp::Avg: reduce_with(out, in, n, [](T a, T b) { return wrapping_add(a, b); }); break;
    case ReduceOp::Product: reduce_with(out, in, n, [](T a, T b) { return wrapping_mul(a, b); }); break;
    case ReduceOp::Min: reduce_with(out, in, n, [](T a, T b) { return b < a ? b : a; }); break;
    case ReduceOp::Max: reduce_with(out, in, n, [](T a, T b) { return b > a ? b : a; }); break;
  }
  if (op == ReduceOp::Avg) {
    const T count = static_cast<T>(in.size());
    for (std::size_t i = 0; i < n; ++i) out[i] = out[i] / count;
  }
}

// Reduces `count` elements starting at element `first` of every rank's data into `out`.
void reduce_into(std::byte* out, const std::vector<Contribution>& ranks, std::size_t first, std::size_t count,
                 ScalarType dtype, ReduceOp op) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T*> in;
    for (const Contribution& c : ranks) in.push_back(reinterpret_cast<const T*>(c.in) + first);
    reduce_rows(reinterpret_cast<T*>(out), in, count, op);
  };
  switch (dtype) {
    case ScalarType::Float32: return run(float{});
    case ScalarType::Float64: return run(double{});
    case ScalarType::Int64: return run(std::int64_t{});
    default: STRATA_CHECK(false, "reduction of ", dtype, " tensors is not supported");
  }
}

}  // namespace

void check_agreement(const Round& round, std::uint64_t number) {
  const Contribution& first = round.ranks[0];
  for (std::size_t r = 1; r < round.ranks.size(); ++r) {
    const Contribution& c = round.ranks[r];
    STRATA_CHECK(c.collective == first.collective, "collective #", number, ": rank 0 called ", first.collective, " but rank ",
                 r, " called ", c.collective, " (every rank must call the same collectives in the same order)");
    STRATA_CHECK(c.dtype == first.dtype, first.collective, " (collective #", number, "): rank 0's tensor is ", first.dtype,
                 " but rank ", r, "'s is ", c.dtype);
    // all_to_all_single's ranks send different numbers of rows, but rows of one size.
    const bool rows_only = first.collective == "all_to_all_single";
    const bool same_sizes = rows_only ? c.sizes.size() == first.sizes.size() &&
                                            std::equal(c.sizes.begin() + 1, c.sizes.end(), first.sizes.begin() + 1)
                                      : c.sizes == first.sizes;
    STRATA_CHECK(same_sizes, first.collective, " (collective #", number, "): rank 0's tensor has sizes ", shape_str(first.sizes),
                 " but rank ", r, "'s has ", shape_str(c.sizes), rows_only ? " (all but the first must match)" : "");
    STRATA_CHECK(c.op == first.op, first.collective, " (collective #", number, "): rank 0 reduces with ",
                 reduce_op_name(first.op), " but rank ", r, " with ", reduce_op_name(c.op));
    STRATA_CHECK(c.src == first.src, "broadcast (collective #", number, "): rank 0 broadcasts from rank ", first.src,
                 " but rank ", r, " from rank ", c.src);
  }
  if (first.collective != "all_to_all_single") return;
  const std::size_t n = round.ranks.size();
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < n; ++j) {
      const std::int64_t sent = round.ranks[j].input_splits[r], received = round.ranks[r].output_splits[j];
      STRATA_CHECK(sent == received, "all_to_all_single (collective #", number, "): rank ", j, " sends ", sent,
                   " rows to rank ", r, ", which expects ", received);
    }
}

void compute_share(const Round& round, int share) {
  const int rank = share;
  const auto r = static_cast<std::size_t>(rank);
  const Contribution& mine = round.ranks[r];
  std::byte* out = mine.out;
  const std::size_t item = element_size(mine.dtype);
  const std::size_t n = round.ranks.size();
  const std::size_t elems = mine.in_bytes / item;
  const std::size_t row = mine.sizes.empty() || mine.sizes[0] == 0 ? 0 : elems / static_cast<std::size_t>(mine.sizes[0]);
  if (mine.collective == "all_reduce") {
    // Note [An all_reduce share is reduced a block at a time]
    // This rank's slice of every input is reduced and written to every output one cache-sized block
    // at a time: the block is reduced into a small buffer and copied out while it is still in cache,
    // so each input byte is read once from memory and each output byte written once, and all_reduce_
    // (where this rank's output is an input another rank still reads) needs no slice-sized scratch.
    const std::size_t begin = r * elems / n, end = (r + 1) * elems / n;
    constexpr std::size_t kBlockBytes = std::size_t{64} << 10;
    const std::size_t block = std::max<std::size_t>(1, kBlockBytes / item);
    alignas(64) static thread_local std::byte reduced[kBlockBytes];
    for (std::size_t first = begin; first < end; first += block) {
      const std::size_t count = std::min(block, end - first), bytes = count * item;
      reduce_into(reduced, round.ranks, first, count, mine.dtype, mine.op);
      for (std::size_t k = 0; k < n; ++k) std::memcpy(round.ranks[k].out + first * item, reduced, bytes);
    }
  } else if (mine.collective == "all_gather_into_tensor") {
    if (mine.in_bytes)
      for (std::size_t k = 0; k < n; ++k) std::memcpy(round.ranks[k].out + r * mine.in_bytes, mine.in, mine.in_bytes);
  } else if (mine.collective == "reduce_scatter_tensor") {
    const std::size_t chunk = elems / n;
    if (chunk) reduce_into(out, round.ranks, r * chunk, chunk, mine.dtype, mine.op);
  } else if (mine.collective == "broadcast") {
    const Contribution& src = round.ranks[static_cast<std::size_t>(mine.src)];
    if (src.in_bytes) std::memcpy(out, src.in, src.in_bytes);
  } else {  // all_to_all_single: from each rank j, the rows it sends this rank
    std::size_t written = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const Contribution& from = round.ranks[j];
      std::int64_t skip = 0;
      for (int k = 0; k < rank; ++k) skip += from.input_splits[static_cast<std::size_t>(k)];
      const std::size_t bytes = static_cast<std::size_t>(from.input_splits[r]) * row * item;
      if (bytes) std::memcpy(out + written, from.in + static_cast<std::size_t>(skip) * row * item, bytes);
      written += bytes;
    }
  }
}

std::string rank_list(const std::vector<int>& ranks) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ranks.size(); ++i) out << (i ? ", " : "") << ranks[i];
  return out.str();
}

void do_shares(World& world, Round& round, int prefer, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    int share = round.claimed[static_cast<std::size_t>(prefer)] ? -1 : prefer;
    for (std::size_t k = 0; share < 0 && k < round.claimed.size(); ++k)
      if (!round.claimed[k]) share = static_cast<int>(k);
    if (share < 0) return;
    round.claimed[static_cast<std::size_t>(share)] = true;
    lock.unlock();
    std::optional<std::string> failed;
    try {
      compute_share(round, share);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    lock.lock();
    if (failed && !round.error) round.error = std::move(failed);
    ++round.finished;
    world.changed.notify_all();
  }
}

// A rank's tensors are dropped by its own leave when it can (on its own thread, whose allocator
// cache takes them back for its next collective).
void leave(World& world, std::uint64_t number, int rank) {
  const auto it = world.rounds.find(number);
  if (it == world.rounds.end()) return;
  Round& round = it->second;
  const auto r = static_cast<std::size_t>(rank);
  if (round.left[r]) return;
  round.left[r] = true;
  if (round.done()) {
    round.ranks[r].input = Tensor();
    round.ranks[r].output = Tensor();
  }
  if (round.done() && std::find(round.left.begin(), round.left.end(), false) == round.left.end()) {
    world.recycle(round);
    world.rounds.erase(it);
  }
}

}  // namespace strata::distributed::detail
