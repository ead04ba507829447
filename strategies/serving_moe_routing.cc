#include "strategies/serving_moe_routing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/check.h"

namespace clustersim::strategies {
namespace {

// The outcomes of a count that carry any probability: mean ± 12 standard
// deviations (the mass outside is below 1e-30), clamped to [0, max].
struct Window {
  int64_t lo = 0, hi = 0;
};
Window Support(double mean, double sd, int64_t max) {
  Window w;
  w.lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(mean - 12.0 * sd)) - 2);
  w.hi = std::min<int64_t>(max, static_cast<int64_t>(std::ceil(mean + 12.0 * sd)) + 2);
  return w;
}

// P(X = x) for X ~ Binomial(n, p), 0 < p < 1.
double BinomialPmf(int64_t n, double p, int64_t x) {
  const double dn = static_cast<double>(n), dx = static_cast<double>(x);
  return std::exp(std::lgamma(dn + 1) - std::lgamma(dx + 1) - std::lgamma(dn - dx + 1) +
                  dx * std::log(p) + (dn - dx) * std::log1p(-p));
}

// P(X = x) for X ~ Poisson(mean), mean > 0.
double PoissonPmf(double mean, int64_t x) {
  const double dx = static_cast<double>(x);
  return std::exp(dx * std::log(mean) - mean - std::lgamma(dx + 1));
}

// P(X = x) for X ~ NegativeBinomial(shape r, success p): a Poisson whose mean
// is Gamma(r)-distributed, mean r·(1 − p)/p.
double NegativeBinomialPmf(double r, double p, int64_t x) {
  const double dx = static_cast<double>(x);
  return std::exp(std::lgamma(dx + r) - std::lgamma(r) - std::lgamma(dx + 1) + r * std::log(p) +
                  dx * std::log1p(-p));
}

// E[max] = Σ_{x>=0} P(max > x) = Σ_x (1 − F(x)^ranks) over `ranks`
// independent counts whose pmf is `pmf(lo)` at the window's bottom and steps
// by next(x, P(x)) = P(x + 1); every x below the window adds 1, every x at or
// above its top 0.
template <typename Next>
double ExpectedMax(int ranks, Window w, double pmf, Next next) {
  double expected = static_cast<double>(w.lo), cdf = 0;
  for (int64_t x = w.lo; x < w.hi; ++x) {
    cdf = std::min(1.0, cdf + pmf);
    expected += 1.0 - std::pow(cdf, ranks);
    pmf = next(x, pmf);
  }
  return expected;
}

int64_t RoundUp(int64_t x, int tile) { return (x + tile - 1) / tile * tile; }

}  // namespace

double ExpectedPaddedRows(int experts, int top_k, int64_t tokens, int tile) {
  SIM_CHECK(tile >= 1) << "grouped GEMM tile of " << tile << " rows";
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double p = static_cast<double>(std::min(top_k, experts)) / experts;
  if (p >= 1.0) return static_cast<double>(experts) * static_cast<double>(RoundUp(tokens, tile));
  const double mean = static_cast<double>(tokens) * p;
  const Window w = Support(mean, std::sqrt(mean * (1.0 - p)), tokens);
  // The pmf by its recurrence P(x + 1) = P(x)·(n − x)/(x + 1)·p/(1 − p).
  const double odds = p / (1.0 - p);
  double padded = 0;
  int64_t x = std::max<int64_t>(w.lo, 1);
  for (double pmf = BinomialPmf(tokens, p, x); x <= w.hi; ++x) {
    padded += pmf * static_cast<double>(RoundUp(x, tile));
    pmf *= static_cast<double>(tokens - x) / static_cast<double>(x + 1) * odds;
  }
  return static_cast<double>(experts) * padded;
}

double ExpectedMaxRankRows(int experts, int top_k, int64_t tokens, int ranks,
                           double expert_load_cv) {
  SIM_CHECK(ranks >= 1) << ranks << " expert-parallel ranks";
  SIM_CHECK(expert_load_cv >= 0) << "expert load CV " << expert_load_cv;
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const int64_t rows = tokens * std::min(top_k, experts);
  if (ranks == 1) return static_cast<double>(rows);
  const double mean = static_cast<double>(rows) / ranks;
  const int64_t unbounded = std::numeric_limits<int64_t>::max();
  double expected = 0;
  if (expert_load_cv > 0) {
    // Negative binomial of mean μ and variance μ + μ²/r, r = g/(c²·f).
    const double c2 = expert_load_cv * expert_load_cv, e = experts;
    const double f = (1.0 - 1.0 / ranks) * e / (e + c2);
    const double r = (e / ranks) / (c2 * f), p = r / (r + mean);
    const Window w = Support(mean, std::sqrt(mean + mean * mean / r), unbounded);
    // P(x + 1) = P(x)·(x + r)/(x + 1)·(1 − p).
    expected = ExpectedMax(ranks, w, NegativeBinomialPmf(r, p, w.lo), [&](int64_t x, double pmf) {
      const double dx = static_cast<double>(x);
      return pmf * (dx + r) / (dx + 1) * (1.0 - p);
    });
  } else {
    const Window w = Support(mean, std::sqrt(mean), unbounded);
    // P(x + 1) = P(x)·mean/(x + 1).
    expected = ExpectedMax(ranks, w, PoissonPmf(mean, w.lo), [&](int64_t x, double pmf) {
      return pmf * (mean / static_cast<double>(x + 1));
    });
  }
  return std::min(expected, static_cast<double>(rows));
}

double ExpectedRankExpertsTouched(int experts_on_rank, double rows) {
  if (experts_on_rank <= 0 || rows <= 0) return 0;
  const double g = experts_on_rank;
  return g * (1.0 - std::pow(1.0 - 1.0 / g, rows));
}

}  // namespace clustersim::strategies
