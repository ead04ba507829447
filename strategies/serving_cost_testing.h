// File: strategies/serving_cost_testing.h
//
// Shared by the serving cost tests: a fixture with one DGX H100 node (its
// H100's shipped kernel calibration and the analytic network over the node)
// for tests that build ServingCostModels on it.
#ifndef CLUSTERSIM_STRATEGIES_SERVING_COST_TESTING_H_
#define CLUSTERSIM_STRATEGIES_SERVING_COST_TESTING_H_

#include <optional>
#include <utility>

#include "gtest/gtest.h"
#include "models/calibration.h"
#include "models/gpu_catalog.h"
#include "models/kernel_model.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"

namespace clustersim::strategies::testing {

class DgxH100Test : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = *models::GpuCatalog::Default().Find("h100-sxm5-80gb");
    kernels_.emplace(*gpu_, models::KernelModelParams{}, models::Calibration::Shipped(gpu_->name));
    absl::StatusOr<topology::Cluster> c = topology::BuildCluster({.node_preset = "dgx-h100"});
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_.emplace(*std::move(c));
    network_.emplace(*cluster_);
  }

  const models::GpuSpec* gpu_ = nullptr;
  std::optional<models::KernelModel> kernels_;
  std::optional<topology::Cluster> cluster_;
  std::optional<topology::AnalyticNetwork> network_;
};

}  // namespace clustersim::strategies::testing

#endif  // CLUSTERSIM_STRATEGIES_SERVING_COST_TESTING_H_
