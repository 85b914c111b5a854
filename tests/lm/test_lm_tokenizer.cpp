// tests/lm/test_lm_tokenizer.cpp: lm::Tokenizer on a vocabulary written here, laid out as
// SentencePiece's export for llama2.c lays one out (<unk>, BOS, EOS, 256 byte tokens, then pieces):
// run.c's encode (dummy prefix, code points, byte fallback, greedy merges by score) and decode
// (the space after BOS, raw bytes), and its errors for damaged or mismatched files.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <strata/core/util/error.h>

#include "../../lm/tokenizer.h"
#include "lm_test_files.h"
#include "test_vocabulary.h"

namespace test_lm_tokenizer {

using namespace lm_test_vocabulary;
constexpr int kVocab = kPieces;

const lm::Tokenizer& tokenizer() {
  static const lm::Tokenizer t =
      lm::Tokenizer::load(lm_test_files::write_bytes("tok.bin", tokenizer_bytes(vocabulary())), kVocab);
  return t;
}

using Ids = std::vector<int>;

TEST_CASE("encode: dummy prefix, then the best-scoring merge first") {
  const lm::Tokenizer& t = tokenizer();
  CHECK(t.encode("", true, false) == Ids{1});
  CHECK(t.encode("", false, false) == Ids{});
  CHECK(t.encode("", true, true) == Ids{1, 2});
  // " a" (-3) merges before "ab" (-5); then " ab" (-4); "abc" is never reached.
  CHECK(t.encode("abc", true, false) == Ids{1, kSpaceAB, kC});
  CHECK(t.encode("abc", false, true) == Ids{kSpaceAB, kC, 2});
  CHECK(t.encode("b", true, false) == Ids{1, kSpace, kB});
  // Ties go to the first pair: "aa" (-3) and " a" (-3) in " aaa": " a" is leftmost.
  CHECK(t.encode("aaa", false, false) == Ids{kSpaceA, kAA});
  // "  " is the dummy prefix and two spaces: three " ", whose leftmost pair merges first (run.c).
  CHECK(t.encode("  ", false, false) == Ids{kTwoSpaces, kSpace});
}

TEST_CASE("encode: code points in the vocabulary, bytes otherwise") {
  const lm::Tokenizer& t = tokenizer();
  CHECK(t.encode("\xC3\xA9", false, false) == Ids{kSpace, kEAcute});               // é is a piece
  CHECK(t.encode("\xC3\xBC", false, false) == Ids{kSpace, 0xC3 + 3, 0xBC + 3});    // ü falls back to its bytes
  CHECK(t.encode("\xF0\x9F\x98\x80", false, false) == Ids{kSpace, 0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3});
  // Stray continuation bytes: at most four per lookup, as run.c groups them.
  CHECK(t.encode("\x80\x80\x80\x80\x80", false, false) == Ids{kSpace, 0x83, 0x83, 0x83, 0x83, 0x83});
  CHECK(t.encode("\n", false, false) == Ids{kSpace, '\n' + 3});
  // run.c reads a C string: the text ends at a NUL.
  CHECK(t.encode(std::string_view("b\0a", 3), false, false) == Ids{kSpace, kB});
}

TEST_CASE("decode: the space after BOS goes, raw bytes come back as bytes") {
  const lm::Tokenizer& t = tokenizer();
  CHECK(t.decode(1, kSpaceA) == "a");
  CHECK(t.decode(kB, kSpaceA) == " a");
  CHECK(t.decode(1, kA) == "a");
  CHECK(t.decode(kA, 'A' + 3) == "A");
  CHECK(t.decode(kA, 0xC3 + 3) == "\xC3");
  CHECK(t.decode(kA, 3).empty());  // <0x00>: run.c's piece is an empty C string
  CHECK(t.decode(kA, 0) == "<unk>");
  CHECK_THROWS_WITH_AS(t.decode(kA, kVocab), doctest::Contains("tok.bin: token 270 is outside the vocabulary [0, 270)"), strata::Error);
  CHECK(t.piece(kAB) == "ab");
  CHECK(t.score(kAB) == -5.0f);
}

TEST_CASE("run.c's safe printing: a lone byte only when printable or whitespace") {
  CHECK(lm::is_printable_piece("a"));
  CHECK(lm::is_printable_piece(" "));
  CHECK(lm::is_printable_piece("\n"));
  CHECK(lm::is_printable_piece("\t"));
  CHECK(lm::is_printable_piece("ab"));
  CHECK(lm::is_printable_piece("\xC3\xA9"));
  CHECK_FALSE(lm::is_printable_piece(""));
  CHECK_FALSE(lm::is_printable_piece("\x01"));
  CHECK_FALSE(lm::is_printable_piece("\x7F"));
  CHECK_FALSE(lm::is_printable_piece("\xC3"));
}

TEST_CASE("a damaged or mismatched tokenizer.bin is refused, naming the file") {
  const std::vector<char> good = tokenizer_bytes(vocabulary());
  auto error_of = [](const std::string& path, std::int64_t vocab) -> std::string {
    try {
      lm::Tokenizer::load(path, vocab);
    } catch (const strata::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string path = lm_test_files::write_bytes("tok_ok.bin", good);
  CHECK(error_of(path, kVocab + 1) == path + ": ends after 270 pieces, but the model's vocabulary has 271 (a tokenizer for "
                                             "another model, or a truncated file)");
  CHECK(error_of(path, kVocab - 1) == path + ": more than the model's 269 pieces (bytes left after the last): a tokenizer for "
                                             "another model");
  const std::string cut = lm_test_files::write_bytes("tok_cut.bin", std::vector<char>(good.begin(), good.end() - 1));
  CHECK(error_of(cut, kVocab) == cut + ": truncated inside piece 269 (2 bytes expected)");
  const std::string empty = lm_test_files::write_bytes("tok_empty.bin", {});
  CHECK(error_of(empty, kVocab) == empty + ": too short for a tokenizer.bin (expected an int32 max_token_length first)");
  const std::string zero = lm_test_files::write_bytes("tok_zero.bin", tokenizer_bytes(vocabulary(), 0));
  CHECK(error_of(zero, kVocab) == zero + ": not a tokenizer.bin: max_token_length is 0, expected a positive number");
  const std::string longer = lm_test_files::write_bytes("tok_long.bin", tokenizer_bytes(vocabulary(), 2));
  CHECK(error_of(longer, kVocab) == longer + ": piece 0 has length 5, expected 0 to max_token_length 2 (a damaged file)");
  const std::string missing = lm_test_files::temp_path("no-tokenizer.bin");
  CHECK(error_of(missing, kVocab) == missing + ": cannot open: No such file or directory");
  // A vocabulary without " " cannot add the dummy prefix; one too small for byte fallback cannot
  // encode unknown bytes.
  const std::vector<Piece> full = vocabulary();
  const std::vector<Piece> small(full.begin(), full.begin() + 100);
  const std::string small_path = lm_test_files::write_bytes("tok_small.bin", tokenizer_bytes(small));
  const lm::Tokenizer s = lm::Tokenizer::load(small_path, 100);
  CHECK_THROWS_WITH_AS(s.encode("a", false, false), (small_path + ": no piece \" \" for the dummy prefix (not a "
                                                     "SentencePiece-exported vocabulary)").c_str(), strata::Error);
  CHECK(s.encode("", true, false) == Ids{1});
}

}  // namespace test_lm_tokenizer
