#include "scenarios/input/limits.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "models/flops.h"
#include "scenarios/input/resolve.h"
#include "sim/status_macros.h"
#include "sim/units.h"

namespace clustersim::scenarios {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

absl::Status NotFinite(const std::string& field, double v) {
  return absl::InvalidArgumentError(absl::StrCat(
      field, "=", std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"),
      " is not a finite number; set a finite value (or remove the field for its default)"));
}

absl::Status CheckFiniteIn(const Message& m, const std::string& prefix) {
  const Reflection* refl = m.GetReflection();
  const google::protobuf::Descriptor* desc = m.GetDescriptor();
  for (int i = 0; i < desc->field_count(); ++i) {  // declaration order: deterministic
    const FieldDescriptor* f = desc->field(i);
    const std::string name = prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
    const auto value = [&](int index) -> double {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        return f->is_repeated() ? refl->GetRepeatedDouble(m, f, index) : refl->GetDouble(m, f);
      }
      return f->is_repeated() ? refl->GetRepeatedFloat(m, f, index) : refl->GetFloat(m, f);
    };
    const bool is_number = f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ||
                           f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT;
    const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (!is_number && !is_message) continue;
    if (f->is_repeated()) {
      for (int k = 0; k < refl->FieldSize(m, f); ++k) {
        const std::string item = absl::StrCat(name, "[", k, "]");
        if (is_number && !std::isfinite(value(k))) return NotFinite(item, value(k));
        if (is_message) {
          if (absl::Status s = CheckFiniteIn(refl->GetRepeatedMessage(m, f, k), item); !s.ok()) {
            return s;
          }
        }
      }
    } else if (is_number) {
      if (!std::isfinite(value(0))) return NotFinite(name, value(0));
    } else if (refl->HasField(m, f)) {
      CLUSTERSIM_RETURN_IF_ERROR(CheckFiniteIn(refl->GetMessage(m, f), name));
    }
  }
  return absl::OkStatus();
}

// Tensor x context-parallel ranks simulated per pipeline stage: one tensor
// rank per group above the default fold threshold.
int SimulatedRanksPerStage(const ResolvedScenario& r) {
  const int tp = r.num_gpus > kFoldTensorParallelAboveGpus ? 1 : r.parallel.tensor_parallel;
  return tp * r.parallel.context_parallel;
}

}  // namespace

double MaxIdealStepSeconds() { return sim::Duration::Max().ToSeconds() / 100; }

absl::Status CheckFiniteNumbers(const Message& message) { return CheckFiniteIn(message, ""); }

absl::Status CheckStepFitsClock(const ResolvedScenario& r) {
  const double flops = models::MegatronModelFlops(r.model, r.parallel.global_batch_size);
  const double peak = r.gpu->PeakFlops(r.parallel.precision) * r.num_gpus;
  const double ideal_s = flops / peak;
  if (ideal_s <= MaxIdealStepSeconds()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "the scenario needs at least %.3g s (%.3g days) of simulated time per step (%.3g model "
      "FLOPs over %d GPUs at peak), beyond what clustersim simulates: %.0f s (1%% of its "
      "picosecond clock, which holds %.1f days); reduce model.seq_length, model.num_layers, "
      "model.hidden_size or training.global_batch_size, or add GPUs (cluster.num_gpus)",
      ideal_s, ideal_s / 86400, flops, r.num_gpus, MaxIdealStepSeconds(),
      sim::Duration::Max().ToSeconds() / 86400));
}

double EstimatedTasks(const ResolvedScenario& r) {
  const strategies::ParallelConfig& p = r.parallel;
  const double micro_batches = static_cast<double>(p.global_batch_size) /
                               (static_cast<double>(p.micro_batch_size) * std::max(1, p.data_parallel));
  return kTasksPerRankLayerMicroBatch * SimulatedRanksPerStage(r) * micro_batches *
         r.model.num_layers;
}

absl::Status CheckTaskGraphFits(const ResolvedScenario& r) {
  const double tasks = EstimatedTasks(r);
  const double bytes = tasks * kBytesPerTask;
  if (bytes <= kMaxTaskGraphBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "the step would need about %.3g tasks and %.1f GiB of memory to simulate (%.0f micro-batches "
      "per pipeline x %d layers x %d tensor/context-parallel ranks); clustersim refuses more than "
      "%.0f GiB; lower training.global_batch_size or raise training.micro_batch_size (fewer "
      "micro-batches), or simulate fewer layers (model.num_layers)",
      tasks, bytes / (1 << 30),
      static_cast<double>(r.parallel.global_batch_size) /
          (static_cast<double>(r.parallel.micro_batch_size) * std::max(1, r.parallel.data_parallel)),
      r.model.num_layers, SimulatedRanksPerStage(r),
      kMaxTaskGraphBytes / (1 << 30)));
}

}  // namespace clustersim::scenarios
