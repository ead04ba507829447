#include "sim/csv_table.h"

#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace clustersim::sim {

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const std::string& CsvTable::Get(const Row& row, std::string_view name) const {
  static const std::string* const kEmpty = new std::string();
  const int c = Column(name);
  if (c < 0 || static_cast<size_t>(c) >= row.size()) return *kEmpty;
  return row[c];
}

absl::StatusOr<CsvTable> ParseCsv(std::string_view text, std::string_view origin) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvTable table;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;       // inside a quoted field
  bool field_started = false;
  int line = 1;
  int record_line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&]() -> absl::Status {
    end_field();
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) {
      if (table.header.empty()) {
        table.header = std::move(record);
      } else if (record.size() != table.header.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            std::string(origin), ": line ", record_line, " has ", record.size(),
            " fields but the header has ", table.header.size(), "; quote fields that contain commas"));
      } else {
        table.rows.push_back(std::move(record));
        table.row_lines.push_back(record_line);
      }
    }
    record.clear();
    return absl::OkStatus();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        if (field_started || !field.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              std::string(origin), ": line ", line, ": a quote inside an unquoted field"));
        }
        quoted = true;
        field_started = true;
        break;
      case ',':
        end_field();
        break;
      case '\r':
        break;
      case '\n':
        CLUSTERSIM_RETURN_IF_ERROR(end_record());
        ++line;
        record_line = line;
        break;
      default:
        field.push_back(c);
        field_started = true;
    }
  }
  if (quoted) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(origin), ": line ", record_line, ": unterminated quoted field"));
  }
  if (field_started || !record.empty()) {
    CLUSTERSIM_RETURN_IF_ERROR(end_record());
  }
  if (table.header.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(origin), ": empty table"));
  }
  return table;
}

}  // namespace clustersim::sim
