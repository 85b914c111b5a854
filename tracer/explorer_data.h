// tracer/explorer_data.h: the explorer page's data (docs/explorer.md, "The page's data"): the records
// of ExplorerRecorder::finish in the page's compact form, and back. Internal to the explorer: the page
// writer (explorer_page.cpp) encodes, the tests decode what a page holds; the page's script
// (tracer/explorer/util.js) decodes it the same way.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace strata::tracer::detail {

// Note [The page's compact data]
// A step of 10,000 ops records 15,000 calls, 30,000 dispatch steps and as many profiler events, and
// the browser reads the whole page before it paints: as objects with repeated keys and repeated text
// the data was 7 MB. The page holds the same facts, still as readable JSON (no compression, no
// encoding of bytes), in columns: each table (calls, steps, nodes, timeline) is one array per field,
// every string is an index into the page's one "strings" table (a dispatch key, handler, op name,
// shape or tensor id is written once), a dispatch step's op, arguments, keys, key, handler and notes
// are one index into the rank's distinct step kinds, links to a parent are distances back (small
// numbers), and the profiler's times are whole nanoseconds, each start from the previous event's.
// Absent facts are -1 (an index, a FLOP count, a node) or a sparse list (kwargs, unrecorded ops).
// decode_page_data(encode_page_data(r)) gives the records back, key order aside (tested).
nlohmann::ordered_json encode_page_data(const std::vector<nlohmann::ordered_json>& ranks, const std::string& title);
// The records and title of encode_page_data's result.
std::vector<nlohmann::ordered_json> decode_page_data(const nlohmann::ordered_json& data);

}  // namespace strata::tracer::detail
