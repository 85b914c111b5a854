#!/usr/bin/env python3
"""tests/docs/doc_snippets.py: turns the C++ code blocks of strata's Markdown documents into one
doctest file, so the README and docs/ cannot drift from the code (the `docs` test compiles and runs it).

usage: doc_snippets.py OUTPUT.cpp ROOT DOC.md [DOC.md ...]   (ROOT: the source tree; DOCs relative to it)

A block's info string says what it is (the first word keeps GitHub's highlighting):
  ```cpp            statements: a test case of its own, run in a scope of their own
  ```cpp continued  statements appended to the previous block's test case (it sees its variables)
  ```cpp top        declarations at namespace scope (functions, classes) for the blocks below it
  ```cpp excerpt F  a verbatim excerpt of source file F: the test checks F still contains it
                    (whitespace-insensitive), so a quoted piece of code cannot go stale
  ```text output    what the block of statements before it prints to std::cout, exactly
Other blocks (sh, text, json, ...) are prose. Hidden code goes in an HTML comment, which GitHub
does not render: `<!--cpp` ... `-->` right after a block (blank lines between at most) adds statements
to it (CHECKs of what it did); anywhere else it holds setup put before the next block's statements.
`<!--cpp top` ... `-->` holds declarations. `#include` lines anywhere are
hoisted to the top of the file. Every block is compiled with `#line` pointing at the document, so
a compiler error names the README line.
"""
import re
import sys
from pathlib import Path

FENCE = re.compile(r"^(\s*)```(.*)$")


def blocks(text):
    """(kind, arg, first_line, code) for each C++ block and hidden block, in document order; a hidden
    block of statements right after a block is of kind "checks"."""
    last_end = -10  # index of the closing line of the last fenced or hidden block
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        hidden = re.match(r"^\s*<!--cpp(?:\s+(top))?\s*$", line)
        if m and m.group(2).strip():
            info = m.group(2).split()
            end = i + 1
            while end < len(lines) and not FENCE.match(lines[end]):
                end += 1
            if end == len(lines):
                raise SystemExit(f"unterminated code block at line {i + 1}")
            if info[0] == "text" and info[1:] == ["output"]:
                yield "output", None, i + 2, "\n".join(lines[i + 1:end])
            elif info[0] == "cpp":
                kind = info[1] if len(info) > 1 else "statements"
                if kind not in ("statements", "continued", "top", "excerpt"):
                    raise SystemExit(f"line {i + 1}: unknown cpp block kind '{kind}'")
                arg = info[2] if kind == "excerpt" and len(info) > 2 else None
                if kind == "excerpt" and arg is None:
                    raise SystemExit(f"line {i + 1}: an excerpt names its source file: ```cpp excerpt path/to/file.cpp")
                yield kind, arg, i + 2, "\n".join(lines[i + 1:end])
            last_end = end
            i = end + 1
        elif hidden:
            end = i + 1
            while end < len(lines) and lines[end].strip() != "-->":
                end += 1
            if end == len(lines):
                raise SystemExit(f"unterminated <!--cpp comment at line {i + 1}")
            kind = "hidden-top" if hidden.group(1) else "hidden"
            if kind == "hidden" and all(not l.strip() for l in lines[last_end + 1:i]):
                kind = "checks"
            yield kind, None, i + 2, "\n".join(lines[i + 1:end])
            last_end = end
            i = end + 1
        else:
            i += 1


def split_includes(code):
    includes = [l for l in code.split("\n") if l.lstrip().startswith("#include")]
    body = "\n".join("" if l.lstrip().startswith("#include") else l for l in code.split("\n"))
    return includes, body


def cpp_string(s):
    return "R\"strata_doc(" + s + ")strata_doc\""


def generate(root, docs):
    includes = ["#include <doctest/doctest.h>", "#include <strata/strata.h>"]
    units = []
    for doc in docs:
        text = (root / doc).read_text()
        ns = "doc_" + re.sub(r"\W", "_", doc)
        top, cases, excerpts, pending = [], [], [], []
        try:
            for kind, arg, line, code in blocks(text):
                inc, body = split_includes(code)
                includes += [i for i in inc if i not in includes]
                located = f'#line {line} "{doc}"\n{body}\n'
                if kind in ("top", "hidden-top"):
                    top.append(located)
                elif kind == "hidden":
                    pending.append(located)
                elif kind == "checks":
                    if not cases:
                        raise SystemExit(f"line {line - 1}: hidden checks need a block of statements before them")
                    cases[-1][1].append(located)
                elif kind == "output":
                    if not cases:
                        raise SystemExit(f"line {line - 1}: an output block needs a block of statements before it")
                    if cases[-1][2] is not None:
                        raise SystemExit(f"line {line - 1}: a block of statements has one output block")
                    cases[-1] = (cases[-1][0], cases[-1][1], code)
                elif kind == "excerpt":
                    excerpts.append((line, arg, code))
                elif kind == "continued":
                    if not cases:
                        raise SystemExit(f"line {line - 1}: a 'continued' block needs a block before it")
                    cases[-1][1].extend(pending + [located])
                    pending = []
                else:
                    cases.append((line - 1, pending + [located], None))
                    pending = []
            if pending:
                raise SystemExit("hidden setup with no block after it")
        except SystemExit as e:
            raise SystemExit(f"{doc}: {e}")
        out = [f"namespace {ns} {{", "using namespace strata;", *top]
        for n, (line, parts, output) in enumerate(cases):
            body = "".join(parts)
            if output is not None:  # the block's std::cout, captured and compared
                body = ("strata_doc_test::CoutCapture capture;\n{\n" + body + "}\n"
                        "const std::string printed = capture.finish();\n"
                        f"CHECK(printed == {cpp_string(output + chr(10))});\n")
            out.append(f"void block_{n}() {{\n{body}}}")
        out.append(f"}}  // namespace {ns}")
        for n, (line, _, _) in enumerate(cases):
            out.append(f'TEST_CASE("{doc}:{line}: the code block compiles and runs") {{ {ns}::block_{n}(); }}')
        for line, path, code in excerpts:
            out.append(f'TEST_CASE("{doc}:{line - 1}: the excerpt of {path} is still in it") {{\n'
                       f'  CHECK(strata_doc_test::contains_excerpt("{path}", {cpp_string(code)}));\n}}')
        units.append("\n".join(out))
    helper = r'''
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
namespace strata_doc_test {
// Captures std::cout from its construction to finish() (or its end, if the block threw).
class CoutCapture {
 public:
  CoutCapture() : saved_(std::cout.rdbuf(text_.rdbuf())) {}
  ~CoutCapture() { finish(); }
  std::string finish() {
    if (saved_) std::cout.rdbuf(std::exchange(saved_, nullptr));
    return text_.str();
  }
 private:
  std::ostringstream text_;
  std::streambuf* saved_;
};
// `text` with every run of whitespace made one space, and none at either end.
inline std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}
inline bool contains_excerpt(const std::string& path, const std::string& excerpt) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/" + path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream all;
  all << in.rdbuf();
  return squeeze(all.str()).find(squeeze(excerpt)) != std::string::npos;
}
}  // namespace strata_doc_test
'''
    header = "// Generated by tests/docs/doc_snippets.py from " + ", ".join(docs) + ": do not edit.\n"
    return header + "\n".join(includes) + "\n" + helper + "\n" + "\n\n".join(units) + "\n"


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    out, root, docs = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    text = generate(root, docs)
    if not out.exists() or out.read_text() != text:
        out.write_text(text)


if __name__ == "__main__":
    main()
