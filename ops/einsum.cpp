// ops/einsum.cpp: torch.einsum. It parses the equation, lines every operand up on one shared list of
// dimensions (output dimensions first, then the ones summed over), and contracts the operands left to
// right, a pair at a time, with a permute, reshape, bmm, view and permute per pair.
#include "ops/einsum.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/util/error.h"
#include "ops/functions.h"
#include "ops/named_after.h"
#include "ops/torch_function.h"

namespace strata {

// Note [einsum runs ATen's decomposition]
// torch.einsum is CompositeImplicitAutograd: a dispatch mode (and a wrapper subclass such as a sharded
// tensor, which must redistribute before each op) sees only the ops it decomposes into, and autograd
// records their nodes. strata runs PyTorch 2.8's einsum and sumproduct_pair
// (aten/src/ATen/native/Linear.cpp) without a contraction path (torch.functional.einsum passes none
// when opt_einsum is not installed), so the sequence is upstream's op for op:
//  - per operand, in order: for a subscript repeated within it, diagonal then movedim (a permute);
//    an unsqueeze for each shared dimension it lacks; one permute into the shared order;
//  - per contraction of the first two operands: a keepdim sum of each one's dimensions no later
//    operand has; then, when some dimension is summed by the pair, the pair's sumproduct (a keepdim
//    sum of a summed dimension only one side has, permute + reshape of each side, bmm, view, permute),
//    else their broadcast mul. The result goes back to the front of the list;
//  - at the end, a view dropping the summed (now size 1) dimensions, or with a single operand, a sum.
// A dimension counts as an operand's when its size is not 1, so size-1 dimensions broadcast.
// Upstream later swaps sumproduct_pair's operands when that makes bmm's output land in order; that
// came after 2.8 and changes the sequence ("ij,jk->ki"), so strata keeps 2.8's.

namespace {

constexpr std::uint8_t kLetters = 26;
constexpr std::uint8_t kLabels = 2 * kLetters;  // A-Z, then a-z
constexpr std::uint8_t kEllipsis = kLabels;

std::uint8_t label_of(unsigned char c) {
  return std::isupper(c) ? static_cast<std::uint8_t>(c - 'A') : static_cast<std::uint8_t>(c - 'a' + kLetters);
}
char letter_of(std::uint8_t label) {
  return static_cast<char>(label < kLetters ? 'A' + label : 'a' + (label - kLetters));
}

// The equation's subscripts: per operand, its labels (kEllipsis for "..."), in order.
std::vector<std::vector<std::uint8_t>> parse_inputs(std::string_view lhs, std::size_t num_ops) {
  std::vector<std::vector<std::uint8_t>> labels(num_ops);
  bool ellipsis_seen = false;
  std::size_t op = 0;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ' ') continue;
    if (c == '.') {
      STRATA_CHECK(!ellipsis_seen, "einsum(): found '.' for operand ", op, " for which an ellipsis was already found");
      STRATA_CHECK(i + 2 < lhs.size() && lhs[++i] == '.' && lhs[++i] == '.', "einsum(): found '.' for operand ", op,
                   " that is not part of any ellipsis");
      labels[op].push_back(kEllipsis);
      ellipsis_seen = true;
    } else if (c == ',') {
      ++op;
      STRATA_CHECK(op < num_ops, "einsum(): fewer operands were provided than specified in the equation");
      ellipsis_seen = false;
    } else {
      STRATA_CHECK(std::isalpha(c), "einsum(): invalid subscript given at index ", i,
                   " in the equation string, subscripts must be in [a-zA-Z]");
      labels[op].push_back(label_of(c));
    }
  }
  STRATA_CHECK(op == num_ops - 1, "einsum(): more operands were provided than specified in the equation");
  return labels;
}

// Where each label and the ellipsis sit in the shared order: output dimensions [0, out_dims), then
// the summed ones up to `total`.
struct LabelLayout {
  std::array<std::int64_t, kLabels> position;  // -1 for a label no operand has
  std::int64_t ellipsis_start = 0;
  std::int64_t ellipsis_dims = 0;
  std::int64_t out_dims = 0;
  std::int64_t total = 0;
};

LabelLayout plan_layout(std::string_view equation, std::size_t lhs_size, const std::array<std::int64_t, kLabels>& count,
                   std::int64_t ellipsis_dims) {
  LabelLayout l;
  l.position.fill(-1);
  l.ellipsis_dims = ellipsis_dims;
  const std::size_t arrow = equation.find("->");
  bool ellipsis_out = false;
  std::int64_t next = 0;
  if (arrow == std::string_view::npos) {  // implicit: the ellipsis, then each label seen once
    next = ellipsis_dims;
    ellipsis_out = true;
    for (std::uint8_t s = 0; s < kLabels; ++s)
      if (count[s] == 1) l.position[s] = next++;
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    for (std::size_t i = 0; i < rhs.size(); ++i) {
      const auto c = static_cast<unsigned char>(rhs[i]);
      if (c == ' ') continue;
      if (c == '.') {
        STRATA_CHECK(!ellipsis_out, "einsum(): found '.' for output but an ellipsis (...) was already found");
        STRATA_CHECK(i + 2 < rhs.size() && rhs[++i] == '.' && rhs[++i] == '.',
                     "einsum(): found '.' for output that is not part of any ellipsis (...)");
        l.ellipsis_start = next;
        next += ellipsis_dims;
        ellipsis_out = true;
        continue;
      }
      STRATA_CHECK(std::isalpha(c), "einsum(): invalid subscript given at index ", lhs_size + 2 + i,
                   " in the equation string, subscripts must be in [a-zA-Z]");
      const std::uint8_t s = label_of(c);
      STRATA_CHECK(count[s] > 0 && l.position[s] == -1, "einsum(): output subscript ", static_cast<char>(c),
                   l.position[s] > -1 ? " appears more than once in the output"
                                      : " does not appear in the equation for any input operand");
      l.position[s] = next++;
    }
  }
  l.out_dims = next;
  if (!ellipsis_out) {  // an ellipsis missing from the output is summed over
    l.ellipsis_start = next;
    next += ellipsis_dims;
  }
  for (std::uint8_t s = 0; s < kLabels; ++s)
    if (count[s] > 0 && l.position[s] == -1) l.position[s] = next++;
  l.total = next;
  return l;
}

// Broadcast sizes seen so far, and how many operands have each shared dimension with a size not 1.
struct Sizes {
  std::array<std::int64_t, kLabels> label;
  std::vector<std::int64_t> ellipsis;
  std::vector<std::int64_t> operands_with;  // per shared dimension
};

// Operand i lined up on the shared dimensions: diagonals of repeated labels, unsqueezes, a permute.
Tensor align(const Tensor& operand, std::size_t i, const std::vector<std::uint8_t>& labels, const LabelLayout& l, Sizes& sizes) {
  Tensor op = operand;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(l.total), -1);
  std::int64_t dim = 0;
  for (const std::uint8_t s : labels) {
    if (s == kEllipsis) {
      const std::int64_t covered = operand.dim() - (static_cast<std::int64_t>(labels.size()) - 1);
      for (std::int64_t j = l.ellipsis_dims - covered; j < l.ellipsis_dims; ++j) {
        const auto ju = static_cast<std::size_t>(j);
        if (op.size(dim) != 1) {
          STRATA_CHECK(sizes.ellipsis[ju] == 1 || sizes.ellipsis[ju] == op.size(dim), "einsum(): dimension ", dim,
                       " covered by ellipsis in operand ", i, "has size ", op.size(dim),
                       " which does not broadcast with previously seen ellipsis with size ", sizes.ellipsis[ju],
                       " for the respective dimension");
          sizes.ellipsis[ju] = op.size(dim);
          ++sizes.operands_with[static_cast<std::size_t>(l.ellipsis_start + j)];
        }
        perm[static_cast<std::size_t>(l.ellipsis_start + j)] = dim++;
      }
      continue;
    }
    const auto at = static_cast<std::size_t>(l.position[s]);
    if (perm[at] == -1) {
      if (op.size(dim) != 1) {
        STRATA_CHECK(sizes.label[s] == 1 || sizes.label[s] == op.size(dim), "einsum(): subscript ", letter_of(s),
                     " has size ", op.size(dim), " for operand ", i, " which does not broadcast with previously seen size ",
                     sizes.label[s]);
        sizes.label[s] = op.size(dim);
        ++sizes.operands_with[at];
      }
      perm[at] = dim++;
      continue;
    }
    // A repeated label: the diagonal of the two dimensions takes the first one's place (movedim).
    const std::int64_t first = perm[at];
    STRATA_CHECK(op.size(dim) == op.size(first), "einsum(): subscript ", letter_of(s), " is repeated for operand ", i,
                 " but the sizes don't match, ", op.size(dim), " != ", op.size(first));
    op = diagonal(op, 0, first, dim);
    std::vector<std::int64_t> order;  // movedim(-1, first)
    for (std::int64_t d = 0; d < op.dim() - 1; ++d) {
      if (d == first) order.push_back(op.dim() - 1);
      order.push_back(d);
    }
    if (first == op.dim() - 1) order.push_back(op.dim() - 1);
    op = permute(op, order);
  }
  for (std::int64_t& p : perm) {
    if (p != -1) continue;
    op = unsqueeze(op, dim);
    p = dim++;
  }
  return permute(op, perm);
}

// PyTorch's sumproduct_pair with keepdim: (left * right).sum(sum_dims) by permutes and one bmm, for
// operands of equal rank whose sizes broadcast.
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<std::int64_t>& sum_dims) {
  if (sum_dims.empty()) return mul(left, right);
  const std::int64_t ndim = left.dim();
  std::vector<bool> summed(static_cast<std::size_t>(ndim), false);
  for (const std::int64_t d : sum_dims) summed[static_cast<std::size_t>(d)] = true;
  // Output dimensions in both operands (lro), only the left (lo), only the right or neither (ro).
  std::vector<std::int64_t> lro, lo, ro;
  std::int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  for (std::int64_t i = 0; i < ndim; ++i) {
    const bool in_left = left.size(i) != 1, in_right = right.size(i) != 1;
    if (summed[static_cast<std::size_t>(i)]) {
      if (in_left && in_right) {
        STRATA_CHECK(left.size(i) == right.size(i), "non-broadcast dimensions must match");
        sum_size *= left.size(i);
      } else if (in_left) {
        left = sum(left, {i}, true);
      } else if (in_right) {
        right = sum(right, {i}, true);
      }
    } else if (in_left && in_right) {
      STRATA_CHECK(left.size(i) == right.size(i), "non-broadcast dimensions must match");
      lro.push_back(i);
      lro_size *= left.size(i);
    } else if (in_left) {
      lo.push_back(i);
      lo_size *= left.size(i);
    } else {
      ro.push_back(i);
      ro_size *= right.size(i);
    }
  }
  // bmm of left [lro, lo, sum] and right [lro, sum, ro] gives [lro, lo, ro], viewed as
  // lro + lo + (1 per summed dim) + ro and permuted back into the original order.
  std::vector<std::int64_t> out_size, left_perm, right_perm;
  for (const std::int64_t d : lro) out_size.push_back(left.size(d));
  for (const std::int64_t d : lo) out_size.push_back(left.size(d));
  out_size.insert(out_size.end(), sum_dims.size(), 1);
  for (const std::int64_t d : ro) out_size.push_back(right.size(d));
  using Dims = const std::vector<std::int64_t>*;
  for (Dims part : {Dims(&lro), Dims(&lo), &sum_dims, Dims(&ro)}) left_perm.insert(left_perm.end(), part->begin(), part->end());
  for (Dims part : {Dims(&lro), &sum_dims, Dims(&ro), Dims(&lo)}) right_perm.insert(right_perm.end(), part->begin(), part->end());
  std::vector<std::int64_t> out_perm(left_perm.size());
  for (std::size_t k = 0; k < left_perm.size(); ++k) out_perm[static_cast<std::size_t>(left_perm[k])] = static_cast<std::int64_t>(k);
  left = reshape(permute(left, left_perm), {lro_size, lo_size, sum_size});
  right = reshape(permute(right, right_perm), {lro_size, sum_size, ro_size});
  return permute(view(bmm(left, right), out_size), out_perm);
}

// Contracts the operands left to right; each pair first sums the dimensions only one of them has
// that no later operand has either.
Tensor contract(std::deque<Tensor> ops, const LabelLayout& l, std::vector<std::int64_t>& operands_with) {
  while (ops.size() > 1) {
    Tensor a = std::move(ops[0]), b = std::move(ops[1]);
    ops.pop_front();
    ops.pop_front();
    std::vector<std::int64_t> sum_dims, a_only, b_only;
    for (std::int64_t d = l.out_dims; d < l.total; ++d) {
      std::int64_t& n = operands_with[static_cast<std::size_t>(d)];
      const bool in_a = a.size(d) != 1, in_b = b.size(d) != 1;
      if (in_a && in_b) {
        STRATA_CHECK(a.size(d) == b.size(d), "non-broadcast dimensions must match");
        if (--n == 1) {
          sum_dims.push_back(d);
          n = 0;
        }
      } else if (n == 1 && (in_a || in_b)) {
        (in_a ? a_only : b_only).push_back(d);
        n = 0;
      }
    }
    if (!a_only.empty()) a = sum(a, a_only, true);
    if (!b_only.empty()) b = sum(b, b_only, true);
    ops.push_front(sumproduct_pair(a, b, sum_dims));
  }
  return ops[0];
}

Tensor einsum_impl(std::string_view equation, TensorList operands) {
  STRATA_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  const std::size_t num_ops = operands.size();
  const std::string_view lhs = equation.substr(0, equation.find("->"));
  const std::vector<std::vector<std::uint8_t>> labels = parse_inputs(lhs, num_ops);
  std::array<std::int64_t, kLabels> count{};
  std::int64_t ellipsis_dims = 0;
  for (std::size_t i = 0; i < num_ops; ++i) {
    detail::check_defined(operands[i], "aten::einsum", 1, "tensors");
    const std::int64_t ndim = operands[i].dim();
    auto named = static_cast<std::int64_t>(labels[i].size());
    bool has_ellipsis = false;
    for (const std::uint8_t s : labels[i]) {
      if (s != kEllipsis) {
        ++count[s];
        continue;
      }
      --named;
      has_ellipsis = true;
      ellipsis_dims = std::max(ellipsis_dims, ndim - named);
    }
    STRATA_CHECK(has_ellipsis ? named <= ndim : named == ndim, "einsum(): the number of subscripts in the equation (",
                 named, has_ellipsis ? ") is more than the number of dimensions (" : ") does not match the number of dimensions (",
                 ndim, ") for operand ", i, has_ellipsis ? "" : " and no ellipsis was given");
  }
  const LabelLayout l = plan_layout(equation, lhs.size(), count, ellipsis_dims);
  Sizes sizes;
  sizes.label.fill(1);
  sizes.ellipsis.assign(static_cast<std::size_t>(ellipsis_dims), 1);
  sizes.operands_with.assign(static_cast<std::size_t>(l.total), 0);
  std::deque<Tensor> ops;
  for (std::size_t i = 0; i < num_ops; ++i) ops.push_back(align(operands[i], i, labels[i], l, sizes));
  Tensor result = contract(std::move(ops), l, sizes.operands_with);
  if (l.total == l.out_dims) return result;
  if (num_ops > 1) {  // every summed dimension is 1 by now: drop them with a view
    const IntArrayRef all = result.sizes();
    return view(result, IntArrayRef(all.data(), static_cast<std::size_t>(l.out_dims)));
  }
  std::vector<std::int64_t> dims;
  for (std::int64_t d = l.out_dims; d < l.total; ++d) dims.push_back(d);
  return sum(result, dims);
}

}  // namespace

Tensor einsum(std::string_view equation, TensorList operands) {
  STRATA_TORCH_FUNCTION(einsum, "torch.functional.einsum", "equation, *operands", equation, operands);
  return named_after("aten::einsum", [&] { return einsum_impl(equation, operands); });
}

}  // namespace strata
