// bench/lm_baseline.cpp: the run.c-style forward of bench/lm_baseline.h. Every product is a
// matrix-vector loop, its rows split over OpenMP threads, its dot product left to the compiler to
// vectorise (-O3 -ffast-math -march=native); attention runs head by head over the cached positions.
#include "bench/lm_baseline.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace strata::bench {

namespace {

// out[i] = sum_j w[i * n + j] * x[j] for i < d: W [d, n] row-major, as the checkpoint stores it.
void matvec(float* out, const float* x, const float* w, int n, int d) {
#pragma omp parallel for
  for (int i = 0; i < d; ++i) {
    const float* row = w + static_cast<std::size_t>(i) * n;
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) sum += row[j] * x[j];
    out[i] = sum;
  }
}

void rms_norm(float* out, const float* x, const float* weight, int n) {
  float ss = 0.0f;
  for (int j = 0; j < n; ++j) ss += x[j] * x[j];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + 1e-5f);
  for (int j = 0; j < n; ++j) out[j] = weight[j] * (scale * x[j]);
}

void softmax_in_place(float* x, int n) {
  float top = x[0];
  for (int i = 1; i < n; ++i) top = x[i] > top ? x[i] : top;
  float total = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - top);
    total += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= total;
}

}  // namespace

LmBaseline::LmBaseline(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("lm baseline: cannot open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 28) {
    ::close(fd);
    throw std::runtime_error("lm baseline: " + path + " is too short for a llama2.c header");
  }
  map_bytes_ = static_cast<std::size_t>(st.st_size);
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error("lm baseline: cannot map " + path);
  }
  std::int32_t h[7];
  std::memcpy(h, map_, sizeof h);
  dim_ = h[0], hidden_ = h[1], layers_ = h[2], heads_ = h[3], kv_heads_ = h[4], seq_len_ = h[6];
  const bool shared = h[5] > 0;
  vocab_ = shared ? h[5] : h[5] == INT32_MIN ? 0 : -h[5];
  if (dim_ <= 0 || hidden_ <= 0 || layers_ <= 0 || heads_ <= 0 || seq_len_ <= 0 || vocab_ <= 0) {
    ::munmap(map_, map_bytes_);
    throw std::runtime_error("lm baseline: " + path + " has a header with a size that is not positive");
  }
  const int hs = heads_ > 0 ? dim_ / heads_ : 0, kv_dim = kv_heads_ * hs;
  const std::size_t d = dim_, f = hidden_, L = layers_, kv = kv_dim;
  const std::size_t floats = vocab_ * d + L * (2 * d + 2 * d * d + 2 * d * kv + 3 * d * f) + d +
                             static_cast<std::size_t>(seq_len_) * hs + (shared ? 0 : vocab_ * d);
  if (hs <= 0 || kv_heads_ <= 0 || heads_ % kv_heads_ != 0 || 28 + 4 * floats != map_bytes_) {
    ::munmap(map_, map_bytes_);
    throw std::runtime_error("lm baseline: " + path + " does not hold the float32 blocks its header describes");
  }
  const float* p = reinterpret_cast<const float*>(static_cast<const char*>(map_) + 28);
  auto take = [&](std::size_t n) {
    const float* block = p;
    p += n;
    return block;
  };
  embed_ = take(vocab_ * d);
  layer_.resize(L);
  for (Layer& l : layer_) l.attn_norm = take(d);
  for (Layer& l : layer_) l.wq = take(d * d);
  for (Layer& l : layer_) l.wk = take(d * kv);
  for (Layer& l : layer_) l.wv = take(d * kv);
  for (Layer& l : layer_) l.wo = take(d * d);
  for (Layer& l : layer_) l.ffn_norm = take(d);
  for (Layer& l : layer_) l.w1 = take(d * f);
  for (Layer& l : layer_) l.w2 = take(f * d);
  for (Layer& l : layer_) l.w3 = take(d * f);
  final_norm_ = take(d);
  take(static_cast<std::size_t>(seq_len_) * hs);  // the legacy rotary tables, unused
  classifier_ = shared ? embed_ : take(vocab_ * d);
  x_.resize(d), xb_.resize(d), xb2_.resize(d), hb_.resize(f), hb2_.resize(f), q_.resize(d);
  att_.resize(static_cast<std::size_t>(heads_) * seq_len_), logits_.resize(vocab_);
  key_cache_.resize(L * seq_len_ * kv), value_cache_.resize(L * seq_len_ * kv);
}

LmBaseline::~LmBaseline() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

const float* LmBaseline::forward(int token, int pos) {
  const int hs = dim_ / heads_, kv_dim = kv_heads_ * hs, group = heads_ / kv_heads_;
  float* x = x_.data();
  std::memcpy(x, embed_ + static_cast<std::size_t>(token) * dim_, sizeof(float) * dim_);
  for (int l = 0; l < layers_; ++l) {
    const Layer& w = layer_[l];
    const std::size_t cache_row = (static_cast<std::size_t>(l) * seq_len_ + pos) * kv_dim;
    float* k = key_cache_.data() + cache_row;
    float* v = value_cache_.data() + cache_row;
    rms_norm(xb_.data(), x, w.attn_norm, dim_);
    matvec(q_.data(), xb_.data(), w.wq, dim_, dim_);
    matvec(k, xb_.data(), w.wk, dim_, kv_dim);
    matvec(v, xb_.data(), w.wv, dim_, kv_dim);
    // Rotary embedding on the interleaved pairs (2i, 2i + 1) of each head of q and k.
    for (int i = 0; i < dim_; i += 2) {
      const float freq = 1.0f / std::pow(10000.0f, static_cast<float>(i % hs) / static_cast<float>(hs));
      const float angle = static_cast<float>(pos) * freq;
      const float c = std::cos(angle), s = std::sin(angle);
      for (float* vec : {q_.data(), k}) {
        if (vec == k && i >= kv_dim) continue;
        const float a = vec[i], b = vec[i + 1];
        vec[i] = a * c - b * s;
        vec[i + 1] = a * s + b * c;
      }
    }
    // Attention, one query head per iteration, over positions 0 .. pos of its key/value head.
    const float* keys = key_cache_.data() + static_cast<std::size_t>(l) * seq_len_ * kv_dim;
    const float* values = value_cache_.data() + static_cast<std::size_t>(l) * seq_len_ * kv_dim;
#pragma omp parallel for
    for (int h = 0; h < heads_; ++h) {
      const float* qh = q_.data() + h * hs;
      float* att = att_.data() + static_cast<std::size_t>(h) * seq_len_;
      const int kv_off = (h / group) * hs;
      for (int t = 0; t <= pos; ++t) {
        const float* kt = keys + static_cast<std::size_t>(t) * kv_dim + kv_off;
        float dot = 0.0f;
        for (int j = 0; j < hs; ++j) dot += qh[j] * kt[j];
        att[t] = dot / std::sqrt(static_cast<float>(hs));
      }
      softmax_in_place(att, pos + 1);
      float* out = xb_.data() + h * hs;
      for (int j = 0; j < hs; ++j) out[j] = 0.0f;
      for (int t = 0; t <= pos; ++t) {
        const float* vt = values + static_cast<std::size_t>(t) * kv_dim + kv_off;
        for (int j = 0; j < hs; ++j) out[j] += att[t] * vt[j];
      }
    }
    matvec(xb2_.data(), xb_.data(), w.wo, dim_, dim_);
    for (int j = 0; j < dim_; ++j) x[j] += xb2_[j];
    // SwiGLU feed-forward: w2(silu(w1 x) * w3 x).
    rms_norm(xb_.data(), x, w.ffn_norm, dim_);
    matvec(hb_.data(), xb_.data(), w.w1, dim_, hidden_);
    matvec(hb2_.data(), xb_.data(), w.w3, dim_, hidden_);
    for (int j = 0; j < hidden_; ++j) {
      const float g = hb_[j];
      hb_[j] = g / (1.0f + std::exp(-g)) * hb2_[j];
    }
    matvec(xb_.data(), hb_.data(), w.w2, hidden_, dim_);
    for (int j = 0; j < dim_; ++j) x[j] += xb_[j];
  }
  rms_norm(x, x, final_norm_, dim_);
  matvec(logits_.data(), x, classifier_, dim_, vocab_);
  return logits_.data();
}

int LmBaseline::argmax() const {
  int best = 0;
  for (int i = 1; i < vocab_; ++i)
    if (logits_[i] > logits_[best]) best = i;
  return best;
}

BaselineRun baseline_greedy(LmBaseline& model, int steps) {
  using Clock = std::chrono::steady_clock;
  if (steps <= 0 || steps > model.seq_len()) steps = model.seq_len();
  BaselineRun run;
  Clock::time_point start;
  int token = 1, pos = 0;
  while (pos < steps) {
    model.forward(token, pos);
    const int next = model.argmax();
    ++pos;
    if (next == 1) break;
    run.tokens.push_back(next);
    token = next;
    if (pos == 1) start = Clock::now();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (pos > 1 && seconds > 0) run.tokens_per_second = (pos - 1) / seconds;
  return run;
}

}  // namespace strata::bench
