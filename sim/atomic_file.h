// File: sim/atomic_file.h
//
// Output files that appear whole or not at all. Bytes go to "<path>.tmp.<pid>"
// and the temp file is renamed over <path> only by Commit(), after flush and
// fsync; rename(2) within one directory is atomic, so a reader (or an
// interrupted run) sees either the previous file or the complete new one, never
// a half file. An AtomicFile destroyed without a successful Commit removes its
// temp file and leaves <path> untouched.
//
// Example:
//   absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create("out/trace.json");
//   if (!f.ok()) return f.status();
//   (*f)->Write("{\"traceEvents\":[]}\n");
//   absl::Status s = (*f)->Commit();   // out/trace.json now exists, complete
//
//   // One-shot form:
//   absl::Status s = WriteFileAtomically("out/summary.txt", text);
//
// Write errors (disk full, I/O error) are remembered and reported by Commit,
// which then removes the temp file.
//
// REQUIRES: at most one AtomicFile per path at a time in one process (the temp
// name is derived from the path and the process id).
// Thread-safety: none; one thread writes a given AtomicFile.
#ifndef CLUSTERSIM_SIM_ATOMIC_FILE_H_
#define CLUSTERSIM_SIM_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace clustersim::sim {

class AtomicFile {
 public:
  // Creates the temp file next to `path`. Error (with the path and the errno
  // text) when the directory does not exist or is not writable.
  static absl::StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path);

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Removes the temp file unless Commit succeeded.
  ~AtomicFile();

  // Appends bytes; buffered (kBufferBytes), so memory stays bounded however
  // much is written. REQUIRES: Commit has not been called.
  void Write(std::string_view bytes);

  // Flushes, fsyncs, closes and renames the temp file over the target path.
  // On error the temp file is removed and the target is left as it was.
  // REQUIRES: called at most once.
  absl::Status Commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  // Bytes passed to Write so far.
  int64_t bytes_written() const { return bytes_written_; }

  // Size at which the buffer is handed to the kernel.
  static constexpr size_t kBufferBytes = 1 << 18;

 private:
  AtomicFile(std::string path, std::string temp_path, int fd);
  // Writes and clears the buffer.
  void FlushBuffer();
  // Writes all of `bytes` to fd_; remembers the first error in error_ and
  // writes nothing more after one.
  void WriteToFd(std::string_view bytes);
  // Closes fd_ (if open) and unlinks the temp file.
  void Abandon();

  std::string path_;
  std::string temp_path_;
  int fd_;
  std::string buffer_;
  absl::Status error_;
  int64_t bytes_written_ = 0;
  bool committed_ = false;
  bool commit_called_ = false;
};

// Writes `contents` to `path` through an AtomicFile.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace clustersim::sim

#endif  // CLUSTERSIM_SIM_ATOMIC_FILE_H_
