// lm/sentencepiece_tokenizer.cpp: SentencePiece's tokenizer.model through the library.
#include "sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <strata/core/util/error.h>

namespace lm {
namespace {

// "<0xE2>" -> 0xE2.
char byte_of_piece(const std::string& piece) {
  return static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16));
}

std::string replace_meta_spaces(const std::string& piece) {
  static const std::string kMetaSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
  std::string text;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kMetaSpace.size(), kMetaSpace) == 0) {
      text += ' ';
      i += kMetaSpace.size();
    } else {
      text += piece[i++];
    }
  }
  return text;
}

}  // namespace

// Note [Streaming SentencePiece's decoding]
// SentencePiece decodes a whole sequence at once; the app prints token by token. Each token's text is
// fixed once at load: a normal piece with its meta spaces (U+2581) as spaces, a byte piece <0xXX> as that
// raw byte (consecutive ones rebuild a UTF-8 character on the terminal), control tokens (BOS, EOS) as
// nothing, the unknown token as SentencePiece's " \u2047 ". The one context rule is SentencePiece's
// removal of the dummy prefix: the first piece after BOS loses its leading space, as run.c's decode
// does. The concatenation of a valid sequence's pieces then equals SentencePiece's Decode (tested).
SentencePieceTokenizer SentencePieceTokenizer::load(const std::string& path, std::int64_t vocab_size) {
  SentencePieceTokenizer t;
  t.processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = t.processor_->Load(path);
  STRATA_CHECK(status.ok(), "strata-lm: cannot read the SentencePiece model ", path, ": ", status.ToString());
  const int pieces = t.processor_->GetPieceSize();
  STRATA_CHECK(pieces == vocab_size, "strata-lm: the SentencePiece model ", path, " has ", pieces,
               " pieces, but the model's vocabulary has ", vocab_size);
  t.bos_id_ = t.processor_->bos_id();
  t.surfaces_.reserve(static_cast<std::size_t>(pieces));
  for (int id = 0; id < pieces; ++id) {
    const std::string& piece = t.processor_->IdToPiece(id);
    if (t.processor_->IsControl(id)) {
      t.surfaces_.emplace_back();
    } else if (t.processor_->IsUnknown(id)) {
      t.surfaces_.emplace_back(" \xE2\x81\x87 ");
    } else if (t.processor_->IsByte(id)) {
      t.surfaces_.emplace_back(1, byte_of_piece(piece));
    } else {
      t.surfaces_.push_back(replace_meta_spaces(piece));
    }
  }
  return t;
}

SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int> SentencePieceTokenizer::encode(std::string_view text, bool bos, bool eos) const {
  std::vector<int> pieces;
  const auto status = processor_->Encode(text, &pieces);
  STRATA_CHECK(status.ok(), "strata-lm: SentencePiece cannot encode the prompt: ", status.ToString());
  std::vector<int> ids;
  ids.reserve(pieces.size() + 2);
  if (bos) ids.push_back(bos_id_);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  if (eos) ids.push_back(processor_->eos_id());
  return ids;
}

std::string_view SentencePieceTokenizer::decode(int prev_token, int token) const {
  STRATA_CHECK(token >= 0 && token < vocab_size(), "strata-lm: token ", token, " is outside the vocabulary [0, ",
               vocab_size(), ")");
  std::string_view surface = surfaces_[static_cast<std::size_t>(token)];
  if (prev_token == bos_id_ && !surface.empty() && surface.front() == ' ' && !processor_->IsUnknown(token)) {
    surface.remove_prefix(1);
  }
  return surface;
}

}  // namespace lm
