// distributed/fake_process_group.cpp: the fake backend (Note [What the fake group writes]).
#include "distributed/fake_process_group.h"

#include <algorithm>
#include <cstring>

#include "core/shape.h"
#include "core/util/error.h"
#include "distributed/thread_world.h"

namespace strata::distributed {

namespace {

class DoneWork final : public Work {
 public:
  void wait() override {}
};

bool has_data(const Tensor& t) { return t.impl()->has_data(); }

// Copies `input`'s elements, row-major, into each of `copies` consecutive pieces of contiguous
// `output`, when both hold data.
void copy_into(const Tensor& input, const Tensor& output, std::int64_t copies, const char* collective) {
  STRATA_CHECK(input.dtype() == output.dtype() && input.numel() * copies == output.numel(), "fake process group: ",
               collective, ": the output (", output.dtype(), shape_str(output.sizes()), ") does not hold ", copies,
               " copies of the input (", input.dtype(), shape_str(input.sizes()), ")");
  STRATA_CHECK(output.is_contiguous(), "fake process group: ", collective, ": the output must be contiguous");
  if (!has_data(input) || !has_data(output) || input.numel() == 0) return;
  detail::Buffer row_major;
  row_major.size = static_cast<std::size_t>(input.numel()) * element_size(input.dtype());
  const std::byte* from = static_cast<const std::byte*>(input.impl()->data());
  if (!input.is_contiguous()) {
    row_major.bytes.reset(new std::byte[row_major.size]);
    row_major.capacity = row_major.size;
    detail::copy_row_major(input, row_major);
    from = row_major.data();
  }
  auto* to = static_cast<std::byte*>(output.impl()->data());
  if (to == from) return;  // in place (all_reduce_)
  for (std::int64_t i = 0; i < copies; ++i) std::memcpy(to + static_cast<std::size_t>(i) * row_major.size, from, row_major.size);
}

class FakeGroup final : public ProcessGroup {
 public:
  FakeGroup(int rank, int size, std::string name) : ProcessGroup(rank, size, std::move(name)) {}

  bool accepts_data_less_tensors() const override { return true; }
  std::shared_ptr<Work> all_reduce(const Tensor& input, const Tensor& output, ReduceOp) override {
    copy_into(input, output, 1, "all_reduce");
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<Work> all_gather_into_tensor(const Tensor& input, const Tensor& output) override {
    copy_into(input, output, size(), "all_gather_into_tensor");
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<Work> reduce_scatter_tensor(const Tensor&, const Tensor&, ReduceOp) override {
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<Work> all_to_all_single(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef) override {
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<Work> broadcast(const Tensor& input, const Tensor& output, int src) override {
    STRATA_CHECK(src >= 0 && src < size(), "fake process group: broadcast: src ", src, " is not a rank of group '",
                 name(), "' (it has ", size(), " ranks)");
    copy_into(input, output, 1, "broadcast");
    return std::make_shared<DoneWork>();
  }
  std::shared_ptr<ProcessGroup> make_subgroup(const std::vector<int>& members, const std::string& name, int) override {
    const auto me = std::find(members.begin(), members.end(), rank());
    if (me == members.end()) return nullptr;
    return std::make_shared<FakeGroup>(static_cast<int>(me - members.begin()), static_cast<int>(members.size()), name);
  }
};

}  // namespace

std::shared_ptr<ProcessGroup> make_fake_process_group(int rank, int size, std::string name) {
  STRATA_CHECK(size >= 1, "fake process group: the world size must be positive, got ", size);
  STRATA_CHECK(rank >= 0 && rank < size, "fake process group: rank ", rank, " is not in a world of ", size, " ranks");
  return std::make_shared<FakeGroup>(rank, size, std::move(name));
}

FakeWorld::FakeWorld(int rank, int world_size) {
  std::shared_ptr<ProcessGroup> world = make_fake_process_group(rank, world_size, "0");
  destroy_process_groups();
  register_process_group(std::move(world));
}

FakeWorld::~FakeWorld() { destroy_process_groups(); }

}  // namespace strata::distributed
