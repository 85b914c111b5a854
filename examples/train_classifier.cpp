// examples/train_classifier.cpp: trains the spiral classifier (examples/spiral_classifier.h) on three
// interleaved 2-D spirals that it makes from a fixed seed, prints the accuracy on the training points
// and on held-out points, and saves the weights as safetensors for examples/classify.cpp.
//
//   train_classifier WEIGHTS.safetensors [--holdout PREFIX]
//
// --holdout writes the held-out points to PREFIX.points ("x y" per line, classify's input) and their
// classes to PREFIX.labels, so that classify's answers can be checked.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "spiral_classifier.h"

using namespace strata;

namespace {

struct Dataset {
  Tensor points;  // [n, 2] float
  Tensor labels;  // [n] int64
};

// cs231n's spirals: class c's i-th point lies at radius r = i/n on an arm turned by 4c radians, with
// Gaussian noise of 0.2 on the angle (from `generator`, so the same seed gives the same points).
Dataset make_spirals(std::int64_t per_class, Generator& generator) {
  Tensor noise = randn({spiral::kClasses * per_class}, {}, &generator);
  const float* eps = noise.data_ptr<float>();
  std::vector<float> xy;
  std::vector<std::int64_t> classes;
  for (int c = 0; c < spiral::kClasses; ++c) {
    for (std::int64_t i = 0; i < per_class; ++i) {
      float r = static_cast<float>(i) / static_cast<float>(per_class - 1);
      float theta = 4.0f * static_cast<float>(c) + 4.0f * r + 0.2f * eps[c * per_class + i];
      xy.push_back(r * std::sin(theta));
      xy.push_back(r * std::cos(theta));
      classes.push_back(c);
    }
  }
  auto n = static_cast<std::int64_t>(classes.size());
  return {tensor(xy, {n, 2}), tensor(classes, {n})};
}

double accuracy(nn::Module& model, const Dataset& data) {
  autograd::NoGradGuard no_grad;
  std::vector<std::int64_t> predicted = spiral::predicted_classes(model(data.points));
  const std::int64_t* truth = data.labels.data_ptr<std::int64_t>();
  std::int64_t right = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) right += predicted[i] == truth[i];
  return static_cast<double>(right) / static_cast<double>(predicted.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string weights, holdout;
  bool usage_error = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--holdout") == 0 && i + 1 < argc) holdout = argv[++i];
    else if (weights.empty() && argv[i][0] != '-') weights = argv[i];
    else usage_error = true;
  }
  if (usage_error || weights.empty()) {
    std::cerr << "usage: train_classifier WEIGHTS.safetensors [--holdout PREFIX]\n";
    return 2;
  }
  try {
    manual_seed(0);  // the initial weights
    Generator generator;
    generator.manual_seed(1);
    Dataset train = make_spirals(100, generator);
    Dataset test = make_spirals(50, generator);

    auto model = spiral::make_classifier();
    optim::SGD sgd(model->parameters(), {.lr = 0.2, .momentum = 0.9});
    for (int epoch = 1; epoch <= 1000; ++epoch) {  // full batch: 300 points
      sgd.zero_grad();
      Tensor loss = nn::functional::cross_entropy((*model)(train.points), train.labels);
      backward(loss);
      sgd.step();
      if (epoch % 250 == 0) std::cout << "epoch " << epoch << ": loss " << loss.item<float>() << "\n";
    }
    std::printf("train accuracy %.3f (%lld points)\n", accuracy(*model, train),
                static_cast<long long>(train.labels.numel()));
    std::printf("held-out accuracy %.3f (%lld points)\n", accuracy(*model, test),
                static_cast<long long>(test.labels.numel()));

    auto state = model->state_dict();
    save_safetensors(weights, {state.begin(), state.end()}, {{"model", "spiral MLP 2-64-64-3"}});
    std::cout << "saved " << state.size() << " tensors to " << weights << "\n";

    if (!holdout.empty()) {
      std::ofstream points(holdout + ".points"), labels(holdout + ".labels");
      const float* xy = test.points.data_ptr<float>();
      const std::int64_t* c = test.labels.data_ptr<std::int64_t>();
      points.precision(9);
      for (std::int64_t i = 0; i < test.labels.numel(); ++i) {
        points << xy[2 * i] << " " << xy[2 * i + 1] << "\n";
        labels << c[i] << "\n";
      }
      if (!points.flush() || !labels.flush()) throw std::runtime_error("cannot write " + holdout + ".points/.labels");
    }
  } catch (const std::exception& e) {
    std::cerr << "train_classifier: " << e.what() << "\n";
    return 1;
  }
}
