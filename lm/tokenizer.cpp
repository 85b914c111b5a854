// lm/tokenizer.cpp: llama2.c's tokenizer.bin and run.c's encode and decode, rewritten over
// std::string (the same results; no fixed buffers).
#include "tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <strata/core/util/error.h>

namespace lm {

namespace {

constexpr int kBos = 1, kEos = 2;
constexpr int kByteTokenOffset = 3;  // byte-fallback tokens follow <unk>, <s>, </s>

template <typename T>
bool read_value(std::istream& in, T& value) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&value), sizeof value));
}

// run.c's sscanf(piece, "<0x%02hhX>", &byte) == 1: "<0x" then one or two hex digits (the closing '>'
// is not needed for sscanf to return 1).
bool parse_byte_piece(std::string_view piece, unsigned char& byte) {
  if (piece.substr(0, 3) != "<0x") return false;
  auto hex = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  int value = 0, digits = 0;
  for (std::size_t i = 3; i < piece.size() && digits < 2 && hex(piece[i]) >= 0; ++i, ++digits) value = value * 16 + hex(piece[i]);
  if (digits == 0) return false;
  byte = static_cast<unsigned char>(value);
  return true;
}

// The 256 one-byte strings decode returns for <0xXX> pieces (run.c's byte_pieces).
const char* byte_strings() {
  static const auto table = [] {
    static char bytes[512];
    for (int i = 0; i < 256; ++i) bytes[2 * i] = static_cast<char>(i), bytes[2 * i + 1] = '\0';
    return bytes;
  }();
  return table;
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path, std::int64_t vocab_size) {
  STRATA_CHECK(vocab_size > 0, path, ": a tokenizer needs a positive vocabulary size, got ", vocab_size);
  std::ifstream in(path, std::ios::binary);
  STRATA_CHECK(in.is_open(), path, ": cannot open: ", std::strerror(errno));
  Tokenizer t;
  t.path_ = path;
  std::int32_t max_len = 0;
  STRATA_CHECK(read_value(in, max_len), path, ": too short for a tokenizer.bin (expected an int32 max_token_length first)");
  STRATA_CHECK(max_len > 0, path, ": not a tokenizer.bin: max_token_length is ", max_len, ", expected a positive number");
  t.max_token_length_ = static_cast<std::uint32_t>(max_len);
  t.pieces_.reserve(static_cast<std::size_t>(vocab_size));
  t.scores_.reserve(static_cast<std::size_t>(vocab_size));
  for (std::int64_t i = 0; i < vocab_size; ++i) {
    float score = 0;
    std::int32_t len = 0;
    STRATA_CHECK(read_value(in, score) && read_value(in, len), path, ": ends after ", i, " pieces, but the model's vocabulary has ",
                 vocab_size, " (a tokenizer for another model, or a truncated file)");
    STRATA_CHECK(len >= 0 && len <= max_len, path, ": piece ", i, " has length ", len,
                 ", expected 0 to max_token_length ", max_len, " (a damaged file)");
    std::string piece(static_cast<std::size_t>(len), '\0');
    STRATA_CHECK(in.read(piece.data(), len), path, ": truncated inside piece ", i, " (", len, " bytes expected)");
    piece.resize(std::strlen(piece.c_str()));  // run.c's pieces are C strings: a NUL ends one
    t.pieces_.push_back(std::move(piece));
    t.scores_.push_back(score);
  }
  in.peek();
  STRATA_CHECK(in.eof(), path, ": more than the model's ", vocab_size,
               " pieces (bytes left after the last): a tokenizer for another model");
  for (std::size_t i = 0; i < t.pieces_.size(); ++i) t.ids_.emplace(t.pieces_[i], static_cast<int>(i));
  return t;
}

int Tokenizer::lookup(std::string_view piece) const {
  const auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int> Tokenizer::encode(std::string_view text, bool bos, bool eos) const {
  text = text.substr(0, std::min(text.size(), text.find('\0')));  // run.c reads a C string
  std::vector<int> tokens;
  if (bos) tokens.push_back(kBos);
  if (!text.empty()) {
    const int prefix = lookup(" ");
    STRATA_CHECK(prefix >= 0, path_, ": no piece \" \" for the dummy prefix (not a SentencePiece-exported vocabulary)");
    tokens.push_back(prefix);
  }
  // One token per UTF-8 code point (a lead byte and up to three continuation bytes) found in the
  // vocabulary; its bytes as byte-fallback tokens otherwise.
  std::string code_point;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte & 0xC0) != 0x80) code_point.clear();
    code_point.push_back(static_cast<char>(byte));
    const bool next_continues = i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
    if (next_continues && code_point.size() < 4) continue;
    const int id = lookup(code_point);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (const char ch : code_point) {
        const int fallback = static_cast<unsigned char>(ch) + kByteTokenOffset;
        STRATA_CHECK(fallback < vocab_size(), path_, ": byte ", static_cast<int>(static_cast<unsigned char>(ch)),
                     " of the text is not in the vocabulary, and its byte-fallback token ", fallback, " is outside it (",
                     vocab_size(), " pieces)");
        tokens.push_back(fallback);
      }
    }
    code_point.clear();
  }
  // Merge the adjacent pair whose concatenation is the best-scoring piece (the first such pair on a
  // tie), until no adjacent pair concatenates to a piece.
  // (BOS's piece takes part, as in run.c.)
  std::string merged;
  while (tokens.size() >= 2) {
    float best_score = -1e10f;
    int best_id = -1;
    std::size_t best_index = 0;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      merged.assign(piece(tokens[i]));
      merged += piece(tokens[i + 1]);
      const int id = lookup(merged);
      if (id >= 0 && scores_[static_cast<std::size_t>(id)] > best_score) {
        best_score = scores_[static_cast<std::size_t>(id)];
        best_id = id;
        best_index = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_index] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_index) + 1);
  }
  if (eos) tokens.push_back(kEos);
  return tokens;
}

std::string_view Tokenizer::decode(int prev_token, int token) const {
  STRATA_CHECK(token >= 0 && token < vocab_size(), path_, ": token ", token, " is outside the vocabulary [0, ",
               vocab_size(), ")");
  std::string_view p = pieces_[static_cast<std::size_t>(token)];
  if (prev_token == kBos && !p.empty() && p[0] == ' ') p.remove_prefix(1);  // SentencePiece strips it after BOS
  unsigned char byte = 0;
  if (parse_byte_piece(p, byte)) return byte == 0 ? std::string_view() : std::string_view(byte_strings() + 2 * byte, 1);
  return p;
}

bool is_printable_piece(std::string_view piece) {
  if (piece.empty() || piece[0] == '\0') return false;
  if (piece.size() == 1) {
    const auto b = static_cast<unsigned char>(piece[0]);
    const bool print = b >= 0x20 && b < 0x7F;                    // isprint in the C locale
    const bool space = b == ' ' || (b >= '\t' && b <= '\r');     // isspace in the C locale
    return print || space;
  }
  return true;
}

}  // namespace lm
