// tracer/explorer_trace.cpp: parsing dispatch-trace lines into steps (explorer_trace.h).
#include "tracer/explorer_trace.h"

namespace strata::tracer::detail {

std::streambuf::int_type TraceSteps::overflow(int_type c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  if (ch == '\n') {
    line(pending_);
    pending_.clear();
  } else {
    pending_.push_back(ch);
  }
  return c;
}

std::streamsize TraceSteps::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
  return n;
}

// A line is two spaces per level of nesting, then either a step, written by the dispatcher as
// `<op><args> <keys> -> <key>: <what runs there>` (Dispatcher::run_slow), or a note a handler wrote.
// A note belongs to the step one level out. A line that does not parse as a step is a note: a name
// with " -> " in it cannot make a step of a note, as a step's op is a schema name, without spaces.
void TraceSteps::line(const std::string& text) {
  std::size_t indent = 0;
  while (indent < text.size() && text[indent] == ' ') ++indent;
  const std::size_t depth = indent / 2;
  const std::string body = text.substr(indent);
  const std::size_t arrow = body.rfind(" -> ");
  const std::size_t paren = body.find('(');
  const std::size_t keys = arrow == std::string::npos ? std::string::npos : body.rfind(" [", arrow);
  const std::size_t colon = arrow == std::string::npos ? std::string::npos : body.find(": ", arrow);
  const bool is_step = paren != std::string::npos && paren > 0 && body.find(' ') > paren &&
                       keys != std::string::npos && keys > paren && colon != std::string::npos;
  if (!is_step) {
    if (depth == 0 || open_.size() < depth) return;  // outside any step: not about an op
    const std::size_t owner = open_[depth - 1];
    steps_[owner].notes.push_back(body);
    if (on_note_) on_note_(owner, body);
    return;
  }
  TraceStep step;
  step.op = body.substr(0, paren);
  step.args = body.substr(paren, keys - paren);
  step.keys = body.substr(keys + 1, arrow - keys - 1);
  step.key = body.substr(arrow + 4, colon - arrow - 4);
  step.handler = body.substr(colon + 2);
  if (depth > 0 && open_.size() >= depth) step.parent = open_[depth - 1];
  open_.resize(depth);
  open_.push_back(steps_.size());
  steps_.push_back(std::move(step));
}

}  // namespace strata::tracer::detail
