#include "cli/json_output.h"

#include "google/protobuf/util/json_util.h"

namespace clustersim::cli {

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.always_print_primitive_fields = true;
  o.preserve_proto_field_names = true;
  const auto st = google::protobuf::util::MessageToJsonString(m, &json, o);
  if (!st.ok()) return absl::InternalError(std::string(st.message()));
  return json;
}

}  // namespace clustersim::cli
