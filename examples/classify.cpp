// examples/classify.cpp: loads the weights train_classifier saved into the same model and prints the
// class of each point it reads ("x y" per line, from FILE or stdin), one per line. Inference only:
// eval mode and no autograd recording.
//
//   classify WEIGHTS.safetensors [POINTS]
//
// Exit status: 0; 1 when the weights cannot be loaded; 2 for a usage error or a line that is not two
// finite numbers (one line on stderr naming it).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spiral_classifier.h"

using namespace strata;

namespace {

// Appends the two coordinates of `line` to `xy`; false when it is not two finite numbers.
bool parse_point(const std::string& line, std::vector<float>& xy) {
  std::istringstream in(line);
  double x, y;
  std::string rest;
  if (!(in >> x >> y) || (in >> rest) || !std::isfinite(x) || !std::isfinite(y)) return false;
  xy.push_back(static_cast<float>(x));
  xy.push_back(static_cast<float>(y));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: classify WEIGHTS.safetensors [POINTS]  (points: \"x y\" per line; stdin without POINTS)\n";
    return 2;
  }
  auto model = spiral::make_classifier();
  try {
    SafetensorsFile file = load_safetensors(argv[1]);
    model->load_state_dict(file.tensors, /*strict=*/true);
  } catch (const std::exception& e) {
    std::cerr << "classify: cannot load " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  model->eval();

  std::ifstream file;
  if (argc == 3) {
    file.open(argv[2]);
    if (!file) {
      std::cerr << "classify: cannot open " << argv[2] << "\n";
      return 2;
    }
  }
  std::istream& input = argc == 3 ? static_cast<std::istream&>(file) : std::cin;
  std::vector<float> xy;
  std::string line;
  for (long number = 1; std::getline(input, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines
    if (!parse_point(line, xy)) {
      std::cerr << "classify: line " << number << ": expected two numbers \"x y\", got \"" << line << "\"\n";
      return 2;
    }
  }

  const auto n = static_cast<std::int64_t>(xy.size() / 2);
  if (n == 0) return 0;
  InferenceMode guard;  // no autograd recording, no version counting
  std::string out;
  for (std::int64_t c : spiral::predicted_classes((*model)(tensor(xy, {n, 2})))) {
    out += static_cast<char>('0' + c);
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
