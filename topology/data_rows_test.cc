#include "topology/data_rows.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/proto/network.pb.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

struct Row {
  std::string name;
};

absl::StatusOr<Row> Convert(const config::LinkTechnologyEntry& e, int index) {
  if (e.latency_ns() < 0) return DataRowError("links.textproto", "link", index, e.name(), "bad");
  return Row{e.name()};
}

config::LinkTechnologyFile File(const std::vector<std::string>& names) {
  config::LinkTechnologyFile f;
  for (const std::string& n : names) f.add_link()->set_name(n);
  return f;
}

TEST(DataRowsTest, ConvertsRowsInOrderAndRejectsARepeatedName) {
  std::vector<Row> rows;
  ASSERT_TRUE(ConvertNamedRows("links.textproto", "link", File({"a", "b"}).link(), Convert, &rows).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].name, "b");

  rows.clear();
  const absl::Status dup =
      ConvertNamedRows("nodes.textproto", "node", File({"a", "b", "a"}).link(), Convert, &rows);
  EXPECT_EQ(dup.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dup.message(), "nodes.textproto node[2] 'a': duplicate name");
}

TEST(DataRowsTest, StopsAtTheFirstConversionError) {
  config::LinkTechnologyFile f = File({"a", "b", "c"});
  f.mutable_link(1)->set_latency_ns(-1);
  std::vector<Row> rows;
  const absl::Status s = ConvertNamedRows("links.textproto", "link", f.link(), Convert, &rows);
  EXPECT_THAT(s.message(), HasSubstr("links.textproto link[1] 'b': bad"));
  EXPECT_EQ(rows.size(), 1u);
}

}  // namespace
}  // namespace clustersim::topology
