// File: scenarios/accuracy/vtrain_row.cc
//
// A row of vTrain's validation tables (github.com/VIA-Research/vTrain,
// data/): a Megatron-DeepSpeed GPT run on vTrain's A100 cluster.
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scenarios/accuracy/validation_rows.h"

namespace clustersim::scenarios::validation_internal {
namespace {

// Megatron-LM pads the vocabulary to a multiple of 128 x tp.
int PaddedVocab(int vocab, int tp) {
  const int m = 128 * tp;
  return (vocab + m - 1) / m * m;
}

// vTrain's cluster, as its authors describe it to their own simulator (every
// validation config of github.com/VIA-Research/vTrain at f8dda84: node_size 8,
// intra_node_bandwidth 150 GB/s, inter_node_bandwidth 800 Gbit/s per node):
// A100 SXM4 with NVLink3/NVSwitch (the 8-GPU all-reduce tables reach 229 GB/s
// bus bandwidth) and 4 x 200 Gbit/s HDR per node, half the 8 NICs of the
// dgx-a100 preset. The NICs sit one per PCIe switch of two GPUs, so two GPUs
// share each NIC (the DGX A100 board's pairing of GPUs on a switch).
void VtrainNode(config::CustomNodeConfig* n) {
  n->set_gpus_per_node(8);
  n->set_gpu_link("nvlink3");
  n->set_nvls(false);
  n->set_pcie("pcie4-x16");
  n->set_pcie_switches(4);
  n->set_nics(4);
  n->set_nic_link("ib-hdr");
}

}  // namespace

ValidationRow VtrainRow(const sim::CsvTable& t, const sim::CsvTable::Row& row, const std::string& source,
                        int index, const ValidationOptions& options) {
  ValidationRow v;
  v.id = absl::StrCat(source, "-", index + 1);
  v.source = source;
  v.metric = "iteration_time_s";
  v.stack = "megatron-deepspeed";
  v.gpu = "a100-sxm4-80gb";
  int gpus, gb, mb, hidden, heads, layers, seq;
  int tp = 0, dp = 0, pp = 0;  // 0: the cell is empty
  double ms = 0;
  if (!Int(t.Get(row, "# GPUs"), &gpus) || !Int(t.Get(row, "global batch"), &gb) ||
      !Int(t.Get(row, "micro batch"), &mb) || !Int(t.Get(row, "hidden size"), &hidden) ||
      !Int(t.Get(row, "attention heads"), &heads) || !Int(t.Get(row, "# layers"), &layers) ||
      !Int(t.Get(row, "sequence length"), &seq) ||
      !absl::SimpleAtod(t.Get(row, "iteration time (ms)"), &ms)) {
    v.reason = "malformed row";
    return v;
  }
  if (!ParallelSize(t, row, "tensor parallelism", &tp, &v.reason) ||
      !ParallelSize(t, row, "data parallelism", &dp, &v.reason) ||
      !ParallelSize(t, row, "pipeline parallelism", &pp, &v.reason)) {
    return v;
  }
  if (tp == 0 || dp == 0 || pp == 0) {
    v.reason = "malformed row";
    return v;
  }
  v.measured = ms / 1000.0;
  v.num_gpus = gpus;
  config::Scenario s;
  s.set_name(v.id);
  s.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  s.mutable_cluster()->set_num_gpus(gpus);
  VtrainNode(s.mutable_cluster()->mutable_custom_node());
  GptModel(layers, hidden, heads, seq, PaddedVocab(50257, tp), &s);
  s.mutable_parallelism()->set_tensor_model_parallel_size(tp);
  s.mutable_parallelism()->set_pipeline_model_parallel_size(pp);
  s.mutable_training()->set_micro_batch_size(mb);
  s.mutable_training()->set_global_batch_size(gb);
  s.mutable_training()->set_recompute_granularity("full");
  s.mutable_training()->set_precision("fp16");
  // Attention: unfused. The source does not state it; Megatron-DeepSpeed's
  // --use-flash-attn is off by default, and the model vTrain profiles to
  // reproduce these runs (src/model/gpt_modeling.py at f8dda84) is Megatron's
  // unfused attention: baddbmm, FusedScaleMaskSoftmax, dropout, bmm.
  s.mutable_training()->set_attention("unfused");
  // Pipeline engine: the runs are Megatron-DeepSpeed (vTrain data/README.md),
  // whose pipeline parallelism is DeepSpeed's PipelineEngine.
  s.mutable_training()->set_framework("megatron-deepspeed");
  if (options.pipeline_p2p_host_us >= 0) {
    s.mutable_training()->set_pipeline_p2p_host_us(options.pipeline_p2p_host_us);
  }
  v.assumptions =
      "A100 SXM4 80GB, 8 per node with NVLink3/NVSwitch and 4x HDR (vTrain's 800 Gbit/s per "
      "node), fp16, full recompute (vTrain use_checkpoint), 1F1B, "
      "GPT-2 vocabulary 50257 padded, unfused attention (vTrain's profiled Megatron model), "
      "megatron-deepspeed profile: DeepSpeed pipeline engine (blocking p2p, "
      "models/data/frameworks.textproto)";
  if (tp * dp * pp != gpus) {
    v.reason = "tp x dp x pp does not equal the GPU count";
    return v;
  }
  absl::StatusOr<config::Result> r = Simulate(s, options, &v.scenario);
  if (!r.ok()) {
    v.reason = std::string(r.status().message());
    return v;
  }
  RecordMemory(*r, &v);
  v.predicted = r->step_time_s();
  v.supported = true;
  v.error = (v.predicted - v.measured) / v.measured;
  v.time_error = v.error;
  return v;
}

}  // namespace clustersim::scenarios::validation_internal
