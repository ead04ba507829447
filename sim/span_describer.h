// File: sim/span_describer.h
//
// What a span means, for trace output. The engine's spans carry only ids and a
// builder-defined tag; whoever built the TaskGraph (strategies/) implements
// SpanDescriber to turn them into names, categories and arguments, and to name
// the trace's processes (one per Resource::group, a GPU) and threads (one per
// resource, a stream). traces/ formats; it never interprets tags.
//
// Example:
//   class StepDescriber : public sim::SpanDescriber {
//    public:
//     void Describe(const sim::TaskGraph& g, const sim::Span& s,
//                   sim::SpanDescription* out) const override {
//       const OpInfo& op = ops_[s.tag];
//       out->name = op.label;                       // "fwd mb0 L3 qkv_gemm"
//       out->category = "compute,gemm";
//       out->args.emplace_back("flops", op.flops);  // double
//       out->args.emplace_back("source", std::string("table"));
//     }
//     std::string ProcessName(uint32_t group) const override {
//       return absl::StrCat("gpu", group);
//     }
//     std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
//       return g.resource(r).name;
//     }
//   };
//
// Thread-safety: the writer calls these from the simulation thread only.
#ifndef CLUSTERSIM_SIM_SPAN_DESCRIBER_H_
#define CLUSTERSIM_SIM_SPAN_DESCRIBER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace clustersim::sim {

// One "args" value of a trace event. Doubles must be finite (JSON has no NaN).
using ArgValue = std::variant<int64_t, double, std::string>;

struct SpanDescription {
  std::string name;      // "fwd mb0 L3 qkv_gemm"
  std::string category;  // "compute,gemm" / "comm,tp"; empty: no "cat" field
  std::vector<std::pair<std::string, ArgValue>> args;  // written in this order
};

class SpanDescriber {
 public:
  virtual ~SpanDescriber() = default;
  // Fills `out`, which the caller passes in cleared (empty strings, no args)
  // and reuses between calls so that describing a span need not allocate.
  virtual void Describe(const sim::TaskGraph& g, const sim::Span& s,
                        SpanDescription* out) const = 0;
  // The display name of `group` (Resource::group, a GPU), e.g. "node0/gpu3 (pp 0, tp 3)".
  virtual std::string ProcessName(uint32_t group) const = 0;
  // The display name of resource `r`'s track, e.g. "compute" or "comm: TP".
  virtual std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const = 0;
};

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_SPAN_DESCRIBER_H_
