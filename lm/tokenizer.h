// lm/tokenizer.h: llama2.c's tokenizer.bin (int32 max_token_length, then per token a float32 score,
// an int32 length and that many bytes), encoding and decoding exactly as run.c does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lm {

class Tokenizer {
 public:
  // Reads `vocab_size` pieces from `path` (the file does not store the count: the model's vocab
  // decides it, as in run.c). Errors name the file, the piece and what was expected.
  static Tokenizer load(const std::string& path, std::int64_t vocab_size);
  // Move-only: the lookup table holds views of the pieces' strings.
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // run.c's encode: BOS (1) when `bos`, the dummy prefix " " for non-empty text, one token per UTF-8
  // code point found in the vocabulary (else its bytes as <0xXX> tokens, id byte + 3), then greedy
  // merges of the adjacent pair whose merged piece has the best score; EOS (2) when `eos`.
  std::vector<int> encode(std::string_view text, bool bos, bool eos) const;

  // run.c's decode: token's piece, without its leading space right after BOS, and the raw byte for a
  // <0xXX> piece.
  std::string_view decode(int prev_token, int token) const;

  std::int64_t vocab_size() const { return static_cast<std::int64_t>(pieces_.size()); }
  const std::string& piece(int token) const { return pieces_.at(static_cast<std::size_t>(token)); }
  float score(int token) const { return scores_.at(static_cast<std::size_t>(token)); }

 private:
  Tokenizer() = default;
  int lookup(std::string_view piece) const;  // the id of an exact piece, or -1

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string_view, int> ids_;  // views into pieces_ (the lowest id on duplicates)
  std::uint32_t max_token_length_ = 0;
  std::string path_;  // for messages
};

// run.c's safe_printf rule: a one-byte piece is printed only when it is printable or whitespace.
bool is_printable_piece(std::string_view piece);

}  // namespace lm
