#include "storage/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace strata {

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string p(dir);
  if (!p.empty() && p.back() != '/') p.push_back('/');
  p.append(name);
  return p;
}

Status WriteAll(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno("write " + std::string(path), errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status SyncAndClose(int fd, std::string_view path) {
  Status s;
  if (fsync(fd) != 0) s = Status::FromErrno("fsync " + std::string(path), errno);
  if (close(fd) != 0 && s.ok()) s = Status::FromErrno("close " + std::string(path), errno);
  return s;
}

Status SyncDir(std::string_view dir) {
  std::string d(dir.empty() ? "." : dir);
  int fd = open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open directory " + d, errno);
  Status s;
  if (fsync(fd) != 0) s = Status::FromErrno("fsync directory " + d, errno);
  close(fd);
  return s;
}

Status RenameFile(std::string_view from, std::string_view to) {
  std::string f(from), t(to);
  if (rename(f.c_str(), t.c_str()) != 0)
    return Status::FromErrno("rename " + f + " to " + t, errno);
  return Status::Ok();
}

Status WriteFileAtomically(std::string_view dir, std::string_view name, std::string_view data) {
  std::string final_path = JoinPath(dir, name);
  std::string tmp = final_path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("open " + tmp, errno);
  Status s = WriteAll(fd, data, tmp);
  if (!s.ok()) {
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  s = SyncAndClose(fd, tmp);
  if (s.ok()) s = RenameFile(tmp, final_path);
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  return SyncDir(dir);
}

Status ReadWholeFile(std::string_view path, std::string* out) {
  std::string p(path);
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(p);
    return Status::FromErrno("open " + p, err);
  }
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return Status::FromErrno("read " + p, err);
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return Status::Ok();
}

bool FileExists(std::string_view path) {
  struct stat st;
  return stat(std::string(path).c_str(), &st) == 0;
}

Status ListDir(std::string_view dir, std::vector<std::string>* names) {
  std::string d(dir.empty() ? "." : dir);
  DIR* dp = opendir(d.c_str());
  if (dp == nullptr) return Status::FromErrno("opendir " + d, errno);
  names->clear();
  while (dirent* e = readdir(dp)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names->emplace_back(n);
  }
  closedir(dp);
  return Status::Ok();
}

MappedFile::~MappedFile() { Close(); }

void MappedFile::Close() {
  if (addr_ != nullptr && size_ > 0) munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

Status MappedFile::Open(std::string_view path) {
  Close();
  std::string p(path);
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(p + ": no such file");
    return Status::FromErrno("open " + p, err);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return Status::FromErrno("stat " + p, err);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    addr_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr_ == MAP_FAILED) {
      int err = errno;
      addr_ = nullptr;
      size_ = 0;
      close(fd);
      return Status::FromErrno("mmap " + p, err);
    }
    madvise(addr_, size_, MADV_SEQUENTIAL);
  }
  close(fd);
  return Status::Ok();
}

}  // namespace strata
