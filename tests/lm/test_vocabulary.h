// tests/lm/test_vocabulary.h: a small vocabulary laid out as SentencePiece's export for llama2.c lays
// one out (<unk>, BOS, EOS, the 256 byte tokens <0x00>..<0xFF>, then pieces with scores), written as a
// tokenizer.bin, for the tokenizer's and the CLI's tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lm_test_vocabulary {

struct Piece {
  std::string text;
  float score;
};

// tokenizer.bin's bytes: int32 max_token_length, then per piece float32 score, int32 length, bytes.
inline std::vector<char> tokenizer_bytes(const std::vector<Piece>& pieces, std::int32_t max_len = 16) {
  std::vector<char> out;
  auto put = [&](const void* p, std::size_t n) {
    out.insert(out.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  };
  put(&max_len, 4);
  for (const Piece& piece : pieces) {
    const auto len = static_cast<std::int32_t>(piece.text.size());
    put(&piece.score, 4);
    put(&len, 4);
    put(piece.text.data(), piece.text.size());
  }
  return out;
}

constexpr int kSpace = 259, kA = 260, kB = 261, kC = 262, kAB = 263, kSpaceA = 264, kABC = 265, kEAcute = 266,
              kSpaceAB = 267, kAA = 268, kTwoSpaces = 269;
constexpr int kPieces = 270;  // without padding

// The vocabulary (ids above), padded to `size` pieces with "w0", "w1", ... (score -10).
inline std::vector<Piece> vocabulary(int size = kPieces) {
  std::vector<Piece> v = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.push_back({name, 0});
  }
  const std::vector<Piece> pieces = {{" ", -1}, {"a", -2},  {"b", -2},           {"c", -2},  {"ab", -5}, {" a", -3},
                                     {"abc", -6}, {"\xC3\xA9", -2}, {" ab", -4}, {"aa", -3}, {"  ", -3}};
  v.insert(v.end(), pieces.begin(), pieces.end());
  for (int i = 0; static_cast<int>(v.size()) < size; ++i) v.push_back({"w" + std::to_string(i), -10});
  v.resize(static_cast<std::size_t>(size));
  return v;
}

}  // namespace lm_test_vocabulary
