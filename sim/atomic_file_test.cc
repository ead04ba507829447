#include "sim/atomic_file.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// A fresh empty directory per test, removed (with its files) afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/atomic_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    for (const std::string& name : Entries()) ::unlink((dir_ + "/" + name).c_str());
    ::rmdir(dir_.c_str());
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr) return names;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    return names;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
};

TEST_F(AtomicFileTest, CommitCreatesFileAndLeavesNoTemp) {
  const std::string path = dir_ + "/out.json";
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  ASSERT_TRUE(f.ok()) << f.status();
  (*f)->Write("hello ");
  (*f)->Write("world\n");
  EXPECT_THAT(Entries(), UnorderedElementsAre((*f)->temp_path().substr(dir_.size() + 1)));
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(Read(path), "hello world\n");
  EXPECT_EQ((*f)->bytes_written(), 12);
  f->reset();
  EXPECT_THAT(Entries(), UnorderedElementsAre("out.json"));
}

TEST_F(AtomicFileTest, TempNameIsPathDotTmpDotPid) {
  const std::string path = dir_ + "/trace.json";
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->temp_path(), path + ".tmp." + std::to_string(::getpid()));
}

TEST_F(AtomicFileTest, UncommittedFileLeavesNothing) {
  const std::string path = dir_ + "/out.json";
  {
    absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
    ASSERT_TRUE(f.ok()) << f.status();
    (*f)->Write(std::string(3 * AtomicFile::kBufferBytes, 'x'));  // some of it reached disk
    EXPECT_THAT(Entries(), ::testing::SizeIs(1));
  }
  EXPECT_THAT(Entries(), IsEmpty());
}

TEST_F(AtomicFileTest, ExistingFileIsReplacedOnlyOnCommit) {
  const std::string path = dir_ + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "old contents").ok());
  {
    absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
    ASSERT_TRUE(f.ok()) << f.status();
    (*f)->Write("new contents");
    EXPECT_EQ(Read(path), "old contents");
    ASSERT_TRUE((*f)->Commit().ok());
    EXPECT_EQ(Read(path), "new contents");
  }
  {
    absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
    ASSERT_TRUE(f.ok()) << f.status();
    (*f)->Write("abandoned");
  }
  EXPECT_EQ(Read(path), "new contents");
  EXPECT_THAT(Entries(), UnorderedElementsAre("out.txt"));
}

TEST_F(AtomicFileTest, LargeAndSmallWritesKeepTheirOrder) {
  const std::string path = dir_ + "/big.bin";
  std::string expected;
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  ASSERT_TRUE(f.ok()) << f.status();
  for (int i = 0; i < 40; ++i) {
    // Sizes straddle the buffer size: small, just below, above.
    const size_t size = (i % 3 == 0)   ? 17
                        : (i % 3 == 1) ? AtomicFile::kBufferBytes - 5
                                       : AtomicFile::kBufferBytes + 9;
    const std::string chunk(size, static_cast<char>('a' + i % 26));
    expected += chunk;
    (*f)->Write(chunk);
  }
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(Read(path), expected);
}

TEST_F(AtomicFileTest, CreateInMissingDirectoryNamesPathAndErrno) {
  const std::string path = dir_ + "/no/such/dir/out.json";
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(f.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("No such file or directory"));
  EXPECT_THAT(Entries(), IsEmpty());
}

TEST_F(AtomicFileTest, CommitFailureKeepsOldFileAndRemovesTemp) {
  // Renaming a file over a non-empty directory fails (EISDIR / ENOTEMPTY).
  const std::string path = dir_ + "/target";
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  const std::string inner = path + "/keep";
  ASSERT_TRUE(WriteFileAtomically(inner, "x").ok());
  absl::StatusOr<std::unique_ptr<AtomicFile>> f = AtomicFile::Create(path);
  ASSERT_TRUE(f.ok()) << f.status();
  (*f)->Write("data");
  const absl::Status s = (*f)->Commit();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr(path));
  EXPECT_THAT(Entries(), UnorderedElementsAre("target"));
  ::unlink(inner.c_str());
  ::rmdir(path.c_str());
}

TEST_F(AtomicFileTest, WriteFileAtomicallyWritesExactBytes) {
  const std::string path = dir_ + "/bytes.bin";
  const std::string contents("a\0b\n\xff", 5);
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  EXPECT_EQ(Read(path), contents);
  EXPECT_FALSE(WriteFileAtomically("", contents).ok());
}

}  // namespace
}  // namespace clustersim::sim
