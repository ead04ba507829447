// File: sim/units.h
//
// Strong types for simulated time and other physical quantities. Simulated time
// is integer picoseconds (int64): a `Duration` is a span, a `Time` a point. They
// are built only through the constexpr factories below; there is no implicit
// conversion from int or double, so mixing seconds with microseconds, or bytes
// with bits, fails to compile.
//
// Range: int64 picoseconds cover about +-106 days of simulated time. Arithmetic
// that would overflow is a bug; `CheckedAdd` reports it for input-driven sums.
// Conversions from floating point (FromSecondsDouble, TransferTime,
// ComputeTime) saturate at +-Duration::Max() instead of wrapping (a cast of an
// out-of-range double to int64 is undefined); an end time that reaches
// Time::Infinite() is then reported by sim::Engine as a clock overflow.
//
// Example:
//   sim::Duration d = sim::Microseconds(3) + sim::Nanoseconds(250);
//   sim::Time t = sim::Time::Zero() + d;
//   double us = d.ToMicroseconds();           // 3.25, at output edges only
//   sim::Duration x = sim::TransferTime(sim::Bytes(1 << 20),
//                                       sim::Bandwidth::GigabytesPerSecond(100));
#ifndef CLUSTERSIM_SIM_UNITS_H_
#define CLUSTERSIM_SIM_UNITS_H_

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::sim {

// A span of simulated time in integer picoseconds. Trivially copyable; pass by value.
class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration Zero() { return Duration(0); }
  static constexpr Duration Max() { return Duration(std::numeric_limits<int64_t>::max()); }
  static constexpr Duration FromPicoseconds(int64_t ps) { return Duration(ps); }
  // Rounds to the nearest picosecond; beyond the range (|s| > ~9.2e6 s) or
  // NaN, saturates at +-Max().
  static Duration FromSecondsDouble(double s) {
    const double ps = s * 1e12;
    if (!(ps < kLimit)) return ps < 0 ? Duration(-Max().ps_) : Max();  // NaN: Max()
    if (!(ps > -kLimit)) return Duration(-Max().ps_);
    return Duration(static_cast<int64_t>(std::llround(ps)));
  }
  // Rounds up; beyond the range or NaN, saturates at Max(). REQUIRES: ps >= 0
  // or NaN.
  static Duration CeilPicoseconds(long double ps) {
    if (!(ps < static_cast<long double>(kLimit))) return Max();
    return Duration(static_cast<int64_t>(std::ceil(ps)));
  }

  constexpr int64_t picoseconds() const { return ps_; }
  constexpr double ToSeconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double ToMicroseconds() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double ToMilliseconds() const { return static_cast<double>(ps_) * 1e-9; }

  constexpr Duration operator+(Duration o) const { return Duration(ps_ + o.ps_); }
  constexpr Duration operator-(Duration o) const { return Duration(ps_ - o.ps_); }
  constexpr Duration& operator+=(Duration o) { ps_ += o.ps_; return *this; }
  constexpr Duration& operator-=(Duration o) { ps_ -= o.ps_; return *this; }
  constexpr Duration operator*(int64_t k) const { return Duration(ps_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(ps_ / k); }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(int64_t ps) : ps_(ps) {}
  // 2^63 picoseconds, exactly representable: the first value past the range.
  static constexpr double kLimit = 9223372036854775808.0;
  int64_t ps_ = 0;
};

constexpr Duration Picoseconds(int64_t ps) { return Duration::FromPicoseconds(ps); }
constexpr Duration Nanoseconds(int64_t ns) { return Duration::FromPicoseconds(ns * 1000); }
constexpr Duration Microseconds(int64_t us) { return Duration::FromPicoseconds(us * 1000000); }
constexpr Duration Milliseconds(int64_t ms) {
  return Duration::FromPicoseconds(ms * 1000000000);
}
constexpr Duration Seconds(int64_t s) { return Duration::FromPicoseconds(s * 1000000000000); }

constexpr Duration Max(Duration a, Duration b) { return a < b ? b : a; }
constexpr Duration Min(Duration a, Duration b) { return a < b ? a : b; }

// A point in simulated time, measured from the start of the simulation (zero).
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time Zero() { return Time(); }
  static constexpr Time Infinite() { return Time(Duration::Max()); }

  constexpr Duration SinceStart() const { return since_start_; }
  constexpr int64_t picoseconds() const { return since_start_.picoseconds(); }
  constexpr double ToSeconds() const { return since_start_.ToSeconds(); }
  constexpr double ToMicroseconds() const { return since_start_.ToMicroseconds(); }

  constexpr Time operator+(Duration d) const { return Time(since_start_ + d); }
  constexpr Time operator-(Duration d) const { return Time(since_start_ - d); }
  constexpr Duration operator-(Time o) const { return since_start_ - o.since_start_; }
  constexpr Time& operator+=(Duration d) { since_start_ += d; return *this; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(Duration d) : since_start_(d) {}
  Duration since_start_;
};

constexpr Time Max(Time a, Time b) { return a < b ? b : a; }
constexpr Time Min(Time a, Time b) { return a < b ? a : b; }

// Returns a + b, or false when the sum would overflow int64 picoseconds.
inline bool CheckedAdd(Time a, Duration b, Time* out) {
  int64_t r;
  if (__builtin_add_overflow(a.picoseconds(), b.picoseconds(), &r)) return false;
  *out = Time::Zero() + Picoseconds(r);
  return true;
}

// A number of bytes. int64; pass by value.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t n) : n_(n) {}
  constexpr int64_t count() const { return n_; }
  constexpr double ToGiB() const { return static_cast<double>(n_) / (1024.0 * 1024.0 * 1024.0); }
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) { n_ += o.n_; return *this; }
  constexpr Bytes operator*(int64_t k) const { return Bytes(n_ * k); }
  constexpr Bytes operator/(int64_t k) const { return Bytes(n_ / k); }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  int64_t n_ = 0;
};

constexpr Bytes KiB(int64_t n) { return Bytes(n * 1024); }
constexpr Bytes MiB(int64_t n) { return Bytes(n * 1024 * 1024); }
constexpr Bytes GiB(int64_t n) { return Bytes(n * 1024 * 1024 * 1024); }

// A data rate in bits per second (int64, so up to ~9.2e18 b/s). Built from the
// units that specs use; GB/s means 10^9 bytes per second.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth BitsPerSecond(int64_t bps) { return Bandwidth(bps); }
  static constexpr Bandwidth Gbps(double gbps) {
    return Bandwidth(static_cast<int64_t>(gbps * 1e9 + 0.5));
  }
  static constexpr Bandwidth GigabytesPerSecond(double gbs) {
    return Bandwidth(static_cast<int64_t>(gbs * 8e9 + 0.5));
  }
  constexpr int64_t bits_per_second() const { return bps_; }
  constexpr double BytesPerSecond() const { return static_cast<double>(bps_) / 8.0; }
  constexpr double GigabytesPerSecond() const { return BytesPerSecond() * 1e-9; }
  // Scales by a factor (efficiency, share); rounds to the nearest bit/s.
  Bandwidth Scaled(double k) const {
    return Bandwidth(static_cast<int64_t>(std::llround(static_cast<double>(bps_) * k)));
  }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(int64_t bps) : bps_(bps) {}
  int64_t bps_ = 0;
};

// Time to move `bytes` at `bw`, rounded up to the next picosecond.
// REQUIRES: bw > 0.
inline Duration TransferTime(Bytes bytes, Bandwidth bw) {
  const long double ps = static_cast<long double>(bytes.count()) * 8.0L * 1e12L /
                         static_cast<long double>(bw.bits_per_second());
  return Duration::CeilPicoseconds(ps);
}

// A count of floating-point operations (double: model FLOPs reach 1e22).
class Flops {
 public:
  constexpr Flops() = default;
  constexpr explicit Flops(double n) : n_(n) {}
  constexpr double count() const { return n_; }
  constexpr Flops operator+(Flops o) const { return Flops(n_ + o.n_); }
  constexpr Flops& operator+=(Flops o) { n_ += o.n_; return *this; }
  constexpr Flops operator*(double k) const { return Flops(n_ * k); }
  constexpr auto operator<=>(const Flops&) const = default;

 private:
  double n_ = 0;
};

// Time to execute `flops` at `flops_per_second`, rounded up to the next picosecond.
// REQUIRES: flops_per_second > 0.
inline Duration ComputeTime(Flops flops, double flops_per_second) {
  return Duration::CeilPicoseconds(flops.count() / flops_per_second * 1e12);
}

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_UNITS_H_
