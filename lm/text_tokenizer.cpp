// lm/text_tokenizer.cpp: choosing and calling the tokenizer of a run.
#include "text_tokenizer.h"

#include "hf_checkpoint.h"

namespace lm {

TextTokenizer TextTokenizer::load(const std::string& path, std::int64_t vocab_size) {
  if (path.ends_with(".model")) return TextTokenizer(SentencePieceTokenizer::load(path, vocab_size));
  return TextTokenizer(Tokenizer::load(path, vocab_size));
}

std::string TextTokenizer::default_path(const std::string& model_path) {
  if (is_hf_folder(model_path)) return model_path + "/tokenizer.model";
  return "tokenizer.bin";
}

std::vector<int> TextTokenizer::encode(std::string_view text, bool bos, bool eos) const {
  return std::visit([&](const auto& t) { return t.encode(text, bos, eos); }, impl_);
}

std::string_view TextTokenizer::decode(int prev_token, int token) const {
  return std::visit([&](const auto& t) { return t.decode(prev_token, token); }, impl_);
}

bool TextTokenizer::printable(std::string_view piece) const {
  return std::holds_alternative<SentencePieceTokenizer>(impl_) || is_printable_piece(piece);
}

}  // namespace lm
