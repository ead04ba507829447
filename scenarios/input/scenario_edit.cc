#include "scenarios/input/scenario_edit.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

namespace pb = google::protobuf;

struct Alias {
  std::string_view name;
  std::string_view path;
};

constexpr Alias kAliases[] = {
    {"tp", "parallelism.tensor_model_parallel_size"},
    {"pp", "parallelism.pipeline_model_parallel_size"},
    {"vp", "parallelism.virtual_pipeline_model_parallel_size"},
    {"cp", "parallelism.context_parallel_size"},
    {"ep", "parallelism.expert_model_parallel_size"},
    {"dp", "parallelism.data_parallel_size"},
    {"zero", "parallelism.zero_stage"},
    {"dp_shard", "parallelism.data_parallel_shard_size"},
    {"distopt", "parallelism.use_distributed_optimizer"},
    {"sp", "parallelism.sequence_parallel"},
    {"schedule", "parallelism.pipeline_schedule"},
    {"mbs", "training.micro_batch_size"},
    {"gbs", "training.global_batch_size"},
    {"recompute", "training.recompute_granularity"},
    {"precision", "training.precision"},
    {"fp8_recipe", "training.fp8_recipe"},
    {"offload", "training.cpu_offload_layers"},
    {"gpu", "cluster.gpu"},
    {"num_gpus", "cluster.num_gpus"},
    {"model", "model.preset"},
    {"tier", "network.tier"},
    {"price", "pricing.usd_per_gpu_hour"},
    {"price_source", "pricing.price_source"},
    {"train_tokens", "pricing.train_tokens"},
    {"train_steps", "pricing.train_steps"},
};

std::string FieldNames(const pb::Descriptor& d) {
  std::vector<std::string> names;
  for (int i = 0; i < d.field_count(); ++i) names.push_back(d.field(i)->name());
  return absl::StrJoin(names, ", ");
}

absl::Status Bad(std::string_view path, std::string_view value, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(path), "=", std::string(value), ": ",
                                                 std::string(what)));
}

absl::Status SetScalar(pb::Message* m, const pb::FieldDescriptor* f, std::string_view path,
                       const std::string& value) {
  const pb::Reflection* r = m->GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(value, &v)) return Bad(path, value, "expected a whole number");
      r->SetInt32(m, f, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      double d;  // accepts 1e6 as well as 1000000
      if (!absl::SimpleAtod(value, &d) || !(d > -9e18 && d < 9e18) ||
          d != static_cast<double>(static_cast<int64_t>(d))) {
        return Bad(path, value, "expected a whole number");
      }
      r->SetInt64(m, f, static_cast<int64_t>(d));
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!absl::SimpleAtod(value, &v)) return Bad(path, value, "expected a number");
      r->SetDouble(m, f, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(value, &v)) return Bad(path, value, "expected true or false");
      r->SetBool(m, f, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_STRING:
      r->SetString(m, f, value);
      return absl::OkStatus();
    default:
      return Bad(path, value, "this field cannot be set from the command line");
  }
}

// The `recompute` alias: a granularity ("none", "selective", "full", ...) or
// full recompute by a method with its layer count, "block:N" or "uniform:N"
// (Megatron-Core's --recompute-method and --recompute-num-layers). A
// granularity other than full drops a method set before, which only full
// recompute reads.
absl::Status SetRecompute(const std::string& value, config::Scenario* scenario) {
  config::TrainingConfig* t = scenario->mutable_training();
  const size_t colon = value.find(':');
  if (colon == std::string::npos) {
    t->set_recompute_granularity(value);
    if (value != "full") {
      t->clear_recompute_method();
      t->clear_recompute_num_layers();
    }
    return absl::OkStatus();
  }
  const std::string method = value.substr(0, colon);
  int layers = 0;
  if ((method != "block" && method != "uniform") ||
      !absl::SimpleAtoi(value.substr(colon + 1), &layers) || layers < 1) {
    return Bad("recompute", value,
               "expected a granularity (none, selective, full) or block:N or uniform:N with "
               "N >= 1 layers, e.g. recompute=block:5");
  }
  t->set_recompute_granularity("full");
  t->set_recompute_method(method);
  t->set_recompute_num_layers(layers);
  return absl::OkStatus();
}

}  // namespace

absl::Status SetScenarioField(std::string_view assignment, config::Scenario* scenario) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", std::string(assignment), "\" is not field=value; e.g. tp=2 or ",
        "training.micro_batch_size=2"));
  }
  const std::string text(assignment);
  std::string path(absl::StripAsciiWhitespace(absl::string_view(text).substr(0, eq)));
  const std::string value(absl::StripAsciiWhitespace(absl::string_view(text).substr(eq + 1)));
  if (path == "recompute") return SetRecompute(value, scenario);
  for (const Alias& a : kAliases) {
    if (a.name == path) path = std::string(a.path);
  }
  pb::Message* m = scenario;
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    const pb::Descriptor& d = *m->GetDescriptor();
    const pb::FieldDescriptor* f = d.FindFieldByName(parts[i]);
    if (f == nullptr) {
      std::vector<std::string> aliases;
      for (const Alias& a : kAliases) aliases.emplace_back(a.name);
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", d.full_name(), " has no field \"", parts[i], "\"; valid: ", FieldNames(d),
          i == 0 ? absl::StrCat(" (or an alias: ", absl::StrJoin(aliases, ", "), ")") : ""));
    }
    if (f->is_repeated()) return Bad(path, value, "lists cannot be set from the command line");
    const bool last = i + 1 == parts.size();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last) return Bad(path, value, "is a section; name one of its fields");
      m = m->GetReflection()->MutableMessage(m, f);
    } else if (!last) {
      return Bad(path, value, absl::StrCat(parts[i], " is not a section"));
    } else {
      return SetScalar(m, f, path, value);
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyAssignments(std::string_view assignments, config::Scenario* scenario) {
  const std::string text(assignments);
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    CLUSTERSIM_RETURN_IF_ERROR(SetScenarioField(std::string(item), scenario));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
