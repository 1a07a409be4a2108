// Where strata-dump reads keys from:
//   RdbFileSource  an RDB file (any version 1-12, Valkey 9), values passed on raw;
//   ScanSource     a live server: SCAN per database, with DUMP and PTTL pipelined;
//   FetchRdb       a live server's RDB over the replication handshake (REPLCONF, PSYNC,
//                  a disk or diskless $EOF: transfer) into a file, keeping the
//                  connection for the command stream that follows (copy --follow).
// A source reports its progress (bytes of a file, keys of a server) and a position to
// restart from (--resume).
//
// Thread-safety: a source belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/file_io.h"
#include "storage/rdb_reader.h"
#include "tools/strata-dump/filter.h"
#include "tools/strata-dump/item.h"
#include "tools/strata-mem/resp_client.h"

namespace strata::dump {

class Source {
 public:
  virtual ~Source() = default;
  // The next item: false at the end (*error empty) or on failure (*error says why).
  virtual bool Next(Item* item, std::string* error) = 0;
  virtual uint64_t done() const = 0;
  virtual uint64_t total() const = 0;  // 0: unknown
  virtual const char* unit() const = 0;
  // Where reading must restart to read the next item again.
  virtual std::string Position() const = 0;
  // Goes to a Position() from an earlier run.
  virtual bool Seek(const std::string& position, std::string* error) = 0;
  // Function libraries seen (their code), for the sinks that carry them.
  const std::vector<std::string>& functions() const { return functions_; }
  uint64_t modules_skipped() const { return modules_skipped_; }

 protected:
  std::vector<std::string> functions_;
  uint64_t modules_skipped_ = 0;
};

class RdbFileSource final : public Source {
 public:
  // skip_modules: module values are skipped (and counted), else the file is refused.
  static std::unique_ptr<RdbFileSource> Open(const std::string& path, bool skip_modules,
                                             std::string* error);
  bool Next(Item* item, std::string* error) override;
  uint64_t done() const override { return reader_->offset(); }
  uint64_t total() const override { return reader_->size(); }
  const char* unit() const override { return "bytes"; }
  std::string Position() const override { return std::to_string(next_record_); }
  bool Seek(const std::string& position, std::string* error) override;
  int version() const { return reader_->version(); }

 private:
  std::string path_;
  MappedFile file_;
  std::unique_ptr<rdb::RdbReader> reader_;
  rdb::RdbRecord rec_;
  uint64_t next_record_ = 0;  // the offset of the record after the last one returned
  uint64_t skip_until_ = 0;
  bool ended_ = false;
};

class ScanSource final : public Source {
 public:
  static std::unique_ptr<ScanSource> Open(const mem::Endpoint& ep, const mem::ClientOptions& co,
                                          const Filter& filter, int batch, std::string* error);
  bool Next(Item* item, std::string* error) override;
  uint64_t done() const override { return keys_done_; }
  uint64_t total() const override { return keys_total_; }
  const char* unit() const override { return "keys"; }
  // "<db> <cursor>": the SCAN call that produced the items not yet all returned.
  std::string Position() const override;
  bool Seek(const std::string& position, std::string* error) override;

 private:
  bool Fill(std::string* error);
  mem::RespClient client_;
  std::vector<uint32_t> dbs_;  // databases that hold keys, ascending
  size_t db_index_ = 0;
  std::string cursor_ = "0";
  std::string batch_cursor_ = "0";  // the cursor that produced items_
  bool scan_started_ = false;
  std::vector<Item> items_;
  size_t next_ = 0;
  uint64_t keys_done_ = 0;
  uint64_t keys_total_ = 0;
  int batch_ = 500;
  std::string match_;  // SCAN MATCH when the filter has exactly one pattern
};

// Why a FetchRdb failed: the source refused the handshake (the caller may fall back to
// SCAN and DUMP), or a connection, password or transfer problem.
enum class FetchStatus { kOk, kRefused, kFailed };

struct FetchedRdb {
  std::string replid;
  int64_t offset = 0;  // the master's replication offset at the RDB's cut
  uint64_t bytes = 0;
  std::unique_ptr<mem::RespClient> stream;  // the replication connection, still open
};

// Reads a server's RDB by the replication handshake into path. progress(bytes) is
// called as the file grows.
FetchStatus FetchRdb(const mem::Endpoint& ep, const mem::ClientOptions& co, const std::string& path,
                     FetchedRdb* out, std::string* error,
                     const std::function<void(uint64_t)>& progress = {});

}  // namespace strata::dump
