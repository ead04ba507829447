#include "sim/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::sim {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// The directory holding `path` ("." for a bare file name).
std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("output path is empty; pass a file name such as trace.json");
  }
  std::string temp_path = absl::StrCat(path, ".tmp.", ::getpid());
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    return absl::Status(
        err == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kPermissionDenied,
        absl::StrCat("cannot create output file ", path, " (temp file ", temp_path,
                     "): ", ErrnoText(err), "; check that the directory exists and is writable"));
  }
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, std::move(temp_path), fd));
}

AtomicFile::AtomicFile(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (!committed_) Abandon();
}

void AtomicFile::Write(std::string_view bytes) {
  SIM_CHECK(!commit_called_) << "AtomicFile::Write after Commit on " << path_;
  bytes_written_ += static_cast<int64_t>(bytes.size());
  if (buffer_.size() + bytes.size() > kBufferBytes) FlushBuffer();
  if (bytes.size() >= kBufferBytes) {
    WriteToFd(bytes);  // large writes bypass the (now empty) buffer
    return;
  }
  buffer_.append(bytes);
}

void AtomicFile::FlushBuffer() {
  WriteToFd(buffer_);
  buffer_.clear();
}

void AtomicFile::WriteToFd(std::string_view bytes) {
  size_t done = 0;
  while (error_.ok() && done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = absl::InternalError(
          absl::StrCat("writing ", temp_path_, " (for ", path_, "): ", ErrnoText(errno)));
      break;
    }
    done += static_cast<size_t>(n);
  }
}

absl::Status AtomicFile::Commit() {
  SIM_CHECK(!commit_called_) << "AtomicFile::Commit called twice on " << path_;
  commit_called_ = true;
  FlushBuffer();
  if (error_.ok() && ::fsync(fd_) != 0) {
    error_ = absl::InternalError(
        absl::StrCat("fsync of ", temp_path_, " (for ", path_, "): ", ErrnoText(errno)));
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && error_.ok()) {
    error_ = absl::InternalError(
        absl::StrCat("closing ", temp_path_, " (for ", path_, "): ", ErrnoText(errno)));
  }
  if (error_.ok() && ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    error_ = absl::InternalError(
        absl::StrCat("renaming ", temp_path_, " to ", path_, ": ", ErrnoText(errno)));
  }
  if (!error_.ok()) {
    Abandon();
    return error_;
  }
  committed_ = true;
  // Persist the directory entry too. Some filesystems cannot fsync a
  // directory; the file itself is complete either way, so this is best effort.
  const int dir_fd = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

void AtomicFile::Abandon() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  ::unlink(temp_path_.c_str());
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  (*file)->Write(contents);
  return (*file)->Commit();
}

}  // namespace clustersim::sim
