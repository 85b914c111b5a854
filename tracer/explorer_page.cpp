// tracer/explorer_page.cpp: the explorer's HTML page: the style and scripts of tracer/explorer/ (built
// into explorer_assets.h) and the records as JSON, in one file.
#include "tracer/explorer.h"

#include "explorer_assets.h"
#include "tracer/explorer_data.h"
#include "io/atomic_file.h"

namespace strata::tracer {

namespace {

// Note [The page's data cannot end its element]
// The records are JSON inside <script type="application/json">, which the page reads with JSON.parse.
// The HTML parser ends that element at the first "</script" and treats "<!--" specially, whatever the
// JSON means, so every '<', '>' and '&' is written as a \u escape (inside a JSON string, the only place
// they can be, that is the same text). U+2028 and U+2029 are escaped too, for any reader that takes
// JSON as JavaScript. Bytes that are not UTF-8 (a name is any bytes) become U+FFFD as the JSON is
// written, so the page is always valid UTF-8.
std::string escaped_json(const nlohmann::ordered_json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// The title as HTML text.
std::string html_text(std::string_view text) {
  const std::string valid = nlohmann::ordered_json(std::string(text)).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  const std::string decoded = nlohmann::ordered_json::parse(valid).get<std::string>();
  std::string out;
  for (const char c : decoded) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string explorer_html(const std::vector<nlohmann::ordered_json>& ranks, std::string_view title) {
  const nlohmann::ordered_json data = detail::encode_page_data(ranks, std::string(title));
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  page += html_text(title);
  page += "</title>\n<style>\n";
  page += detail::kExplorerCss;
  page += "</style>\n</head>\n<body>\n<script type=\"application/json\" id=\"explorer-data\">\n";
  page += escaped_json(data);
  page += "\n</script>\n<script>\n";
  page += detail::kExplorerJs;
  // The second script draws the rest of the call tree: the page paints before it runs, and every
  // row is in the page when it has loaded (Note [The explorer's first paint], main.js).
  page += "</script>\n<script>\nX.completeTree();\n</script>\n</body>\n</html>\n";
  return page;
}

void write_explorer_html(const std::string& path, const std::vector<nlohmann::ordered_json>& ranks,
                         std::string_view title) {
  AtomicFile file(path, "--html");
  file.write(explorer_html(ranks, title));
  file.publish();
}

}  // namespace strata::tracer
