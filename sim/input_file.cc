#include "sim/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace clustersim::sim {
namespace {

// Closes the descriptor on every return path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status TooLarge(const std::string& path, int64_t bytes) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": ", bytes, " bytes or more, over the ", kMaxInputFileBytes >> 20,
                   " MiB limit for input files; check that this is the file you meant"));
}

}  // namespace

absl::StatusOr<std::string> ReadInputFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  Fd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno), "; check the path"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file (a device, pipe or folder); give the path of a "
                           "file"));
  }
  if (st.st_size > kMaxInputFileBytes) return TooLarge(path, st.st_size);
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(
          absl::StrCat("error while reading ", path, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    // The file may grow while it is read: the limit holds for what is read too.
    if (static_cast<int64_t>(text.size()) + n > kMaxInputFileBytes) {
      return TooLarge(path, static_cast<int64_t>(text.size()) + n);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

absl::StatusOr<std::string> ReadInputFileFor(const std::string& path, std::string_view field) {
  absl::StatusOr<std::string> text = ReadInputFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat(std::string(field), "=", path, ": ", text.status().message(),
                                     " (relative paths resolve against the current directory)"));
  }
  return text;
}

}  // namespace clustersim::sim
