// The network data files in topology/data/ parse (a malformed embedded file
// aborts at first use) and every row states its source.
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "topology/collective_calibration.h"
#include "topology/link_technology.h"
#include "topology/node_preset.h"

namespace clustersim::topology {
namespace {

TEST(NetworkDataTest, LinksParseWithSources) {
  const std::vector<LinkTechnology>& links = LinkTechnologies();
  // 3 NVLink and GB200's NVLink-C2C host link, 3 PCIe, 4 InfiniBand-class (with
  // Omni-Path), 4 Ethernet (with eth-10g)
  ASSERT_EQ(links.size(), 15u);
  std::set<LinkKind> kinds;
  for (const LinkTechnology& t : links) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_FALSE(t.source.empty());
    EXPECT_GT(t.bandwidth.bits_per_second(), 0);
    kinds.insert(t.kind);
  }
  EXPECT_EQ(kinds.size(), 4u);
  EXPECT_EQ((*FindLinkTechnology("ib-ndr"))->bandwidth.bits_per_second(), 400'000'000'000);
  EXPECT_EQ((*FindLinkTechnology("pcie4-x16"))->bandwidth.bits_per_second(), 252'000'000'000);
}

TEST(NetworkDataTest, NodePresetsParseWithSources) {
  EXPECT_EQ(NodePresetNames(),
            (std::vector<std::string>{"dgx-a100", "dgx-h100", "dgx-h200", "hgx-b200", "gb200-nvl72",
                                      "pcie-rtx4090-8x", "pcie-a10g-8x", "pcie-l40s-8x",
                                      // Serving hosts.
                                      "pcie-a100-1x", "pcie-h100-1x", "pcie-l40s-1x",
                                      "pcie-a10g-1x", "pcie-a10-1x",
                                      "workstation-rtx-a6000-1x", "workstation-rtx4090-1x",
                                      "workstation-rtx4090-2x", "workstation-rtx3090-1x",
                                      "workstation-rtx3090-2x", "jetson-agx-orin",
                                      "mac-studio-m2-ultra", "cpu-server-xeon-8480plus"}));
  for (const NodePreset& p : NodePresets()) {
    SCOPED_TRACE(std::string(p.name));
    EXPECT_FALSE(p.source.empty());
    EXPECT_FALSE(p.description.empty());
    EXPECT_TRUE(FindLinkTechnology(p.pcie).ok());
    EXPECT_TRUE(FindLinkTechnology(p.nic_link).ok());
    if (!p.gpu_link.empty()) {
      EXPECT_TRUE(FindLinkTechnology(p.gpu_link).ok());
    }
  }
}

TEST(NetworkDataTest, CollectiveCalibrationParsesWithSources) {
  const CollectiveCalibration& cal = DefaultCollectiveCalibration();
  for (LinkKind k : {LinkKind::kNvlink, LinkKind::kPcie, LinkKind::kInfiniband,
                     LinkKind::kEthernet}) {
    SCOPED_TRACE(std::string(LinkKindName(k)));
    EXPECT_FALSE(cal.ForLink(k).source.empty());
  }
  for (Protocol p : kConcreteProtocols) {
    SCOPED_TRACE(std::string(ProtocolName(p)));
    EXPECT_FALSE(cal.ForProtocol(p).source.empty());
  }
  ASSERT_EQ(cal.protocols.size(), kConcreteProtocols.size());
  for (const NvlsCalibration& row : cal.nvls) EXPECT_FALSE(row.source.empty()) << row.nvlink;
  EXPECT_NE(cal.ForNvlink("nvlink4"), nullptr);
  EXPECT_NE(cal.ForNvlink("nvlink5"), nullptr);
  EXPECT_EQ(cal.ForNvlink("nvlink3"), nullptr);  // A100 has no NVLS
  const NicCalibration* opa = cal.ForNic("opa-100");
  ASSERT_NE(opa, nullptr);
  EXPECT_FALSE(opa->source.empty());
  EXPECT_EQ(opa->ring_nics, 1);
  EXPECT_DOUBLE_EQ(cal.Efficiency(LinkKind::kInfiniband, "opa-100"), opa->efficiency);
  EXPECT_EQ(cal.ForNic("ib-hdr"), nullptr);
  EXPECT_DOUBLE_EQ(cal.Efficiency(LinkKind::kInfiniband, "ib-hdr"),
                   cal.ForLink(LinkKind::kInfiniband).efficiency);
  EXPECT_FALSE(cal.call_overhead_source.empty());
  EXPECT_FALSE(cal.tree_efficiency_source.empty());
  EXPECT_FALSE(cal.nvls_latency_source.empty());
  EXPECT_FALSE(cal.nvls_scale_source.empty());
}

}  // namespace
}  // namespace clustersim::topology
