// lm/text_tokenizer.h: the tokenizer a run uses, whichever format it comes in: llama2.c's
// tokenizer.bin (lm::Tokenizer, encoding as run.c does) or a SentencePiece tokenizer.model
// (lm::SentencePieceTokenizer, as Hugging Face folders ship it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sentencepiece_tokenizer.h"
#include "tokenizer.h"

namespace lm {

class TextTokenizer {
 public:
  // A path ending in ".model" is SentencePiece's; anything else is read as a tokenizer.bin.
  static TextTokenizer load(const std::string& path, std::int64_t vocab_size);
  // The tokenizer a checkpoint comes with when -z does not name one: a Hugging Face folder's
  // tokenizer.model, else run.c's default, tokenizer.bin in the working directory.
  static std::string default_path(const std::string& model_path);

  std::vector<int> encode(std::string_view text, bool bos, bool eos) const;
  std::string_view decode(int prev_token, int token) const;
  // Whether the piece is printed: run.c's safe_printf rule for tokenizer.bin (a lone byte only when
  // printable or whitespace); every byte for SentencePiece, whose byte pieces rebuild UTF-8 text.
  bool printable(std::string_view piece) const;

 private:
  explicit TextTokenizer(std::variant<Tokenizer, SentencePieceTokenizer> impl) : impl_(std::move(impl)) {}
  std::variant<Tokenizer, SentencePieceTokenizer> impl_;
};

}  // namespace lm
