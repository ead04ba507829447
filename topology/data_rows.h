// File: topology/data_rows.h
//
// The rows of a network data file (topology/data/*.textproto: links, node
// presets), checked one by one into their C++ form, with errors that name the
// file, the row and its name.
//
// Example:
//   absl::Status s = ConvertNamedRows("links.textproto", "link", file.link(), FromProto, &links);
//   // links.textproto link[3] 'ndr': duplicate name
#ifndef CLUSTERSIM_TOPOLOGY_DATA_ROWS_H_
#define CLUSTERSIM_TOPOLOGY_DATA_ROWS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_field.h"

namespace clustersim::topology {

// InvalidArgument "FILE ROW[index] 'name': what".
absl::Status DataRowError(std::string_view file, std::string_view row, int index,
                          const std::string& name, std::string_view what);

// Appends from_proto(entries[i], i) (an absl::StatusOr<Row>) to `rows` for
// every entry in order; the first conversion error, or a name (Row::name)
// already taken by an earlier row, stops it.
template <typename Entry, typename Row, typename FromProto>
absl::Status ConvertNamedRows(std::string_view file, std::string_view row,
                              const google::protobuf::RepeatedPtrField<Entry>& entries,
                              FromProto from_proto, std::vector<Row>* rows) {
  for (int i = 0; i < entries.size(); ++i) {
    absl::StatusOr<Row> converted = from_proto(entries.Get(i), i);
    if (!converted.ok()) return converted.status();
    for (const Row& earlier : *rows) {
      if (earlier.name == converted->name) {
        return DataRowError(file, row, i, entries.Get(i).name(), "duplicate name");
      }
    }
    rows->push_back(*std::move(converted));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_DATA_ROWS_H_
