// File: strategies/step_describer.h
//
// Tells trace writers what each task of a StepPlan is: a name such as
// "fwd mb0 L3 qkv_gemm", a category, and arguments (shape, FLOPs, bytes, the
// source of the cost, micro-batch, layer), plus process names that carry each
// GPU's node and parallel coordinates.
//
// Example:
//   StepDescriber d(plan, placement, /*gpus_per_node=*/8);
//   auto writer = traces::ChromeTraceWriter::Open("step.json", d, {});
//
// Lifetime: `plan` must outlive the describer.
#ifndef CLUSTERSIM_STRATEGIES_STEP_DESCRIBER_H_
#define CLUSTERSIM_STRATEGIES_STEP_DESCRIBER_H_

#include <string>

#include "sim/span_describer.h"
#include "strategies/placement.h"
#include "strategies/step_plan.h"

namespace clustersim::strategies {

class StepDescriber : public sim::SpanDescriber {
 public:
  StepDescriber(const StepPlan& plan, const Placement& placement, int gpus_per_node)
      : plan_(plan), placement_(placement), gpus_per_node_(gpus_per_node) {}

  void Describe(const sim::TaskGraph& g, const sim::Span& s,
                sim::SpanDescription* out) const override;
  std::string ProcessName(uint32_t group) const override;
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override;

 private:
  const StepPlan& plan_;
  Placement placement_;
  int gpus_per_node_;
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_STEP_DESCRIBER_H_
