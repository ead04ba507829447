// File: sim/csv_table.h
//
// A small RFC 4180 reader for the validation tables: a header row, then
// records; fields may be quoted ("a, b" and "" for a quote); CRLF and a UTF-8
// byte-order mark are accepted. Errors name the origin, the line and the
// problem (an unterminated quote, a row with the wrong number of fields).
//
// Example:
//   absl::StatusOr<CsvTable> t = ParseCsv(text, "published-runs.csv");
//   for (const CsvTable::Row& row : t->rows) std::string id = t->Get(row, "id");
#ifndef CLUSTERSIM_SIM_CSV_TABLE_H_
#define CLUSTERSIM_SIM_CSV_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::sim {

struct CsvTable {
  using Row = std::vector<std::string>;
  std::vector<std::string> header;
  std::vector<Row> rows;
  std::vector<int> row_lines;  // 1-based line of each row, for messages

  // Index of a column, or -1.
  int Column(std::string_view name) const;
  // The cell of `row` in column `name`; empty when the column is absent.
  const std::string& Get(const Row& row, std::string_view name) const;
};

absl::StatusOr<CsvTable> ParseCsv(std::string_view text, std::string_view origin);

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_CSV_TABLE_H_
