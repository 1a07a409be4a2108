// File helpers for snapshots: whole writes, fsync, atomic replace, read-only mappings.
//
// Every function returns a Status naming the path and the OS error; nothing throws.
// Crash safety rests on: write to a temporary name, fsync the file, rename over the
// final name, fsync the directory (so the rename itself is durable).
//
// Thread-safety: free functions; a MappedFile belongs to one thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace strata {

Status WriteAll(int fd, std::string_view data, std::string_view path);
// fsync(fd) then close(fd) (closed even when the fsync fails).
Status SyncAndClose(int fd, std::string_view path);
Status SyncDir(std::string_view dir);
Status RenameFile(std::string_view from, std::string_view to);
// tmp + fsync + rename + fsync of dir: a reader sees the old contents or the new.
Status WriteFileAtomically(std::string_view dir, std::string_view name, std::string_view data);
Status ReadWholeFile(std::string_view path, std::string* out);
bool FileExists(std::string_view path);
// Names of the entries of dir (no "." or "..").
Status ListDir(std::string_view dir, std::vector<std::string>* names);
std::string JoinPath(std::string_view dir, std::string_view name);

// A file mapped read-only for loading; unmapped on destruction.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  Status Open(std::string_view path);
  std::string_view data() const { return {static_cast<const char*>(addr_), size_}; }
  void Close();

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace strata
