// distributed/fake_process_group.h: a process group that only pretends (upstream's fake backend,
// torch/testing/_internal/distributed/fake_pg.py and c10d's FakeProcessGroup): this process is rank r
// of a world of N, and every collective returns at once, with its output shaped as a real one's,
// without communicating. With FakeTensorMode it lets one process trace one rank of a mesh far larger
// than the machine.
#pragma once

#include <memory>
#include <string>

#include "process_group.h"

namespace strata::distributed {

// Note [What the fake group writes]
// As upstream's fake backend: all_gather_into_tensor copies this rank's input into each of the
// output's `size()` pieces (as if every rank held the same tensor, which lets code that checks its
// ranks agree pass); all_reduce and broadcast leave the result equal to this rank's input (upstream
// reduces in place and does nothing); reduce_scatter_tensor and all_to_all_single do not write their
// output (upstream's leave the freshly allocated buffer as it is). A tensor without data (a fake or
// meta tensor) is never read or written, so FakeTensorMode programs run on it without a byte of data.
// Splitting it makes fake groups of the members' sizes, with no other rank to ask: a (32, 32) mesh
// of rank 5 is built in one process at once.
std::shared_ptr<ProcessGroup> make_fake_process_group(int rank, int size, std::string name);

// Registers a fake world of `world_size` ranks as this thread's group "0", this process acting as
// `rank` (upstream's init_process_group("fake", rank=r, world_size=N)), after forgetting the
// thread's groups (destroy_process_groups); the destructor forgets them again, subgroups included.
// An error if the world size is below 1 or the rank outside it.
class FakeWorld {
 public:
  FakeWorld(int rank, int world_size);
  ~FakeWorld();
  FakeWorld(const FakeWorld&) = delete;
  FakeWorld& operator=(const FakeWorld&) = delete;
};

}  // namespace strata::distributed
