// lm/sentencepiece_tokenizer.h: a Hugging Face folder's tokenizer.model, read and run by the
// SentencePiece library itself (Debian's libsentencepiece), with the same encode/decode calls as
// lm::Tokenizer so that the generation loop streams either.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace lm {

class SentencePieceTokenizer {
 public:
  // Reads `path`; its vocabulary must have `vocab_size` pieces (the model's). Errors name the file.
  static SentencePieceTokenizer load(const std::string& path, std::int64_t vocab_size);
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;
  ~SentencePieceTokenizer();

  // SentencePiece's encoding of `text`, with BOS first when `bos` and EOS last when `eos`.
  std::vector<int> encode(std::string_view text, bool bos, bool eos) const;

  // The text one token adds to the stream (Note [Streaming SentencePiece's decoding]).
  std::string_view decode(int prev_token, int token) const;

  std::int64_t vocab_size() const { return static_cast<std::int64_t>(surfaces_.size()); }
  int bos_id() const { return bos_id_; }

 private:
  SentencePieceTokenizer() = default;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::vector<std::string> surfaces_;  // per token: what it decodes to mid-text
  int bos_id_ = -1;
};

}  // namespace lm
