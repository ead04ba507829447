// File: sim/random.h
//
// Seeded randomness that gives the same numbers on every standard library and
// machine: SplitMix64 (Steele, Lea and Flood 2014, the generator of Vigna's
// xoshiro reference page) with the transforms written here, since <random>'s
// distributions differ between libraries. `Mix(seed, index)` derives an
// independent stream per index (a GPU, a trial), so that adding indices keeps
// the draws of the earlier ones.
//
// Example:
//   sim::SplitMix64 rng(sim::Mix(seed, gpu));
//   double u = rng.Uniform();        // [0, 1)
//   double z = rng.StandardNormal(); // Box-Muller
//   uint64_t h = sim::StableHash(key);
#ifndef CLUSTERSIM_SIM_RANDOM_H_
#define CLUSTERSIM_SIM_RANDOM_H_

#include <cmath>
#include <cstdint>
#include <numbers>

namespace clustersim::sim {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // A standard normal draw (Box-Muller, the cosine branch; two uniforms).
  double StandardNormal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log stays finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
};

// One SplitMix64 step from state `x`: a fixed, platform-independent 64-bit
// hash, for draws that must depend only on their inputs (ECMP choices,
// per-request streams).
inline uint64_t StableHash(uint64_t x) { return SplitMix64(x).Next(); }

// The seed of stream `index` of `seed`: one SplitMix64 step of their mix.
inline uint64_t Mix(uint64_t seed, uint64_t index) {
  return SplitMix64(seed ^ (0xD1B54A32D192ED03ULL * (index + 1))).Next();
}

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_RANDOM_H_
