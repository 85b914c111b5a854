// distributed/all_gather_object.h: upstream's all_gather_object for what strata's own code gathers
// between ranks outside the traced program (from_local's metadata check, the explorer's records
// under mpirun): every rank's int64 words, or every rank's bytes, on every rank, over a group's
// all-gather. No op is dispatched, so no mode sees them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "process_group.h"

namespace strata::distributed {

// Every rank's `mine`, concatenated in rank order; every rank passes the same number of words.
std::vector<std::int64_t> all_gather_words(ProcessGroup& group, const std::vector<std::int64_t>& mine);

// Every rank's `mine`, one string per rank in rank order; the lengths may differ (each rank's length
// is gathered first, then the bytes, padded to the longest).
std::vector<std::string> all_gather_strings(ProcessGroup& group, std::string_view mine);

}  // namespace strata::distributed
