// File: scenarios/accuracy/serving_modes_testing.h
//
// Shared by the serving_modes tests: the shipped deployed-serving table, and
// synthetic rows of that table built from named cells.
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_TESTING_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "sim/csv_table.h"

namespace clustersim::scenarios::serving_modes_testing {

inline constexpr char kPath[] = "/tests/validation/serving-deployed/runs.csv";

inline sim::CsvTable ShippedTable() {
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  EXPECT_NE(src, nullptr);
  std::ifstream in(std::string(src ? src : ".") + kPath);
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(ss.str(), "runs.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : sim::CsvTable{};
}

// The deployment table's header and one row built from named cells (the rest
// empty), so each test states only the cells it is about.
inline constexpr char kHeader[] =
    "id,source,model,params_b,layers,hidden,heads,kv_heads,ffn,vocab,device,num_devices,tp,"
    "weight_dtype,kv_dtype,framework,input_len,output_len,batch_or_concurrency,metric,value,unit,"
    "notes,mode,feature,concurrency,request_rate,ttft_limit_ms,tpot_limit_ms,spec_method,"
    "spec_tokens,acceptance_len,disagg_prefill,disagg_decode,ep,pp,attention_dp,num_nodes,dataset,"
    "max_batch_size,max_num_tokens,cuda_graph_batch_sizes";

// A Llama 3.1 8B row on one H100 (dense, catalog device, bf16), 128 in / 64 out.
inline std::string Row(const std::string& id, const std::string& metric, const std::string& mode,
                const std::string& feature, const std::string& batch,
                const std::string& concurrency = "", const std::string& rate = "",
                const std::string& ep = "") {
  return id + ",src,Llama-3.1-8B,8.03,32,4096,32,8,14336,128256,H100 SXM 80GB,1,1,bf16,bf16,vLLM," +
         "128,64," + batch + "," + metric + ",10,ms,n," + mode + "," + feature + "," + concurrency +
         "," + rate + ",,,,,,,," + ep + ",,,,,,,\n";
}

// `row` (one line of Row) with `column` set to `value` (quoted by the caller
// when it holds a comma; set such a cell last).
inline std::string Set(const std::string& row, const std::string& column, const std::string& value) {
  const std::vector<std::string> header = absl::StrSplit(kHeader, ',');
  std::vector<std::string> cells = absl::StrSplit(absl::StripSuffix(row, "\n"), ',');
  for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
    if (header[i] == column) cells[i] = value;
  }
  return absl::StrJoin(cells, ",") + "\n";
}

inline sim::CsvTable Parse(const std::string& rows) {
  absl::StatusOr<sim::CsvTable> t = sim::ParseCsv(std::string(kHeader) + "\n" + rows, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : sim::CsvTable{};
}

}  // namespace clustersim::scenarios::serving_modes_testing

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_SERVING_MODES_TESTING_H_
