#include "tools/strata-dump/verbs.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/string_util.h"
#include "storage/dump_payload.h"
#include "storage/mono_clock.h"
#include "storage/rdb_format.h"
#include "storage/rdb_reader.h"
#include "tools/strata-dump/digest.h"
#include "tools/strata-dump/progress_line.h"
#include "tools/strata-dump/rdb_sink.h"
#include "tools/strata-dump/restore_sink.h"
#include "tools/strata-dump/sources.h"
#include "tools/strata-dump/strata_snapshot.h"
#include "tools/strata-mem/escape.h"
#include "tools/strata-mem/report_model.h"
#include "tools/strata-mem/text_table.h"

namespace strata::dump {

namespace {

std::atomic<bool> g_stop{false};

int Error(const std::string& msg, int code) {
  std::fprintf(stderr, "strata-dump: %s\n", msg.c_str());
  return code;
}

// A failure to reach or log in to a server, or a data problem.
int ClientError(const std::string& msg) {
  bool conn = msg.find("cannot connect") != std::string::npos ||
              msg.find("cannot resolve") != std::string::npos ||
              msg.find("AUTH failed") != std::string::npos ||
              msg.find("NOAUTH") != std::string::npos ||
              msg.find("WRONGPASS") != std::string::npos ||
              msg.find("connection closed") != std::string::npos ||
              msg.find("timed out") != std::string::npos;
  return Error(msg, conn ? kExitConnection : kExitData);
}

// ---- checkpoints: "strata-dump checkpoint 1" / "source <what>" / "position <pos>"

std::string ReadCheckpoint(const std::string& path, const std::string& source, std::string* error) {
  std::ifstream f(path);
  if (!f) {
    *error = "no checkpoint at " + path + " to resume from";
    return "";
  }
  std::string magic, src_line, pos_line;
  std::getline(f, magic);
  std::getline(f, src_line);
  std::getline(f, pos_line);
  if (magic != "strata-dump checkpoint 1" || src_line.rfind("source ", 0) != 0 ||
      pos_line.rfind("position ", 0) != 0) {
    *error = path + " is not a strata-dump checkpoint";
    return "";
  }
  if (src_line.substr(7) != source) {
    *error = path + " is the checkpoint of " + src_line.substr(7) + ", not of " + source;
    return "";
  }
  return pos_line.substr(9);
}

void WriteCheckpoint(const std::string& path, const std::string& source, const std::string& pos) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << "strata-dump checkpoint 1\nsource " << source << "\nposition " << pos << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

std::string FileIdentity(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return path;
  return path + " (" + std::to_string(st.st_size) + " bytes)";
}

// Pumps a source into a restore sink with filters, progress and checkpoints.
int Pump(Source& src, RestoreSink& sink, const Common& c, const std::string& label,
         const std::string& checkpoint, const std::string& source_id, bool resume, FILE* out) {
  std::string error;
  if (resume) {
    std::string pos = ReadCheckpoint(checkpoint, source_id, &error);
    if (!error.empty()) return Error(error, kExitUsage);
    if (!src.Seek(pos, &error)) return Error(error, kExitUsage);
    std::fprintf(out, "%s: resuming at position %s\n", label.c_str(), pos.c_str());
  }
  ProgressLine progress(c.progress, label);
  auto last_ck = std::chrono::steady_clock::now();
  int64_t now = UnixMsNow();
  uint64_t filtered = 0;
  bool interrupted = false;
  std::string pos;
  uint64_t n = 0;
  while (true) {
    if (g_stop.load()) {
      interrupted = true;
      break;
    }
    if (sink.NeedsPosition() || pos.empty()) pos = src.Position();
    Item it;
    if (!src.Next(&it, &error)) {
      if (!error.empty()) {
        progress.Finish(sink.stats().keys, sink.stats().bytes);
        WriteCheckpoint(checkpoint, source_id, sink.SafePosition(pos));
        std::string e2;
        sink.Finish(&e2);
        return ClientError(error);
      }
      break;
    }
    if (!c.filter.Keeps(it, now)) {
      filtered++;
      continue;
    }
    if (!sink.Add(std::move(it), pos, &error)) {
      progress.Finish(sink.stats().keys, sink.stats().bytes);
      WriteCheckpoint(checkpoint, source_id, sink.SafePosition(pos));
      std::string e2;
      sink.Finish(&e2);
      return Error(error + " (the checkpoint for --resume is in " + checkpoint + ")", kExitTarget);
    }
    if ((++n & 255) != 0) continue;  // the clock, the progress and the checkpoint
    progress.Update(src.done(), src.total(), sink.stats().keys, sink.stats().bytes);
    auto t = std::chrono::steady_clock::now();
    if (t - last_ck > std::chrono::milliseconds(c.checkpoint_every_ms)) {
      WriteCheckpoint(checkpoint, source_id, sink.SafePosition(src.Position()));
      last_ck = t;
    }
  }
  std::string end_pos = src.Position();
  if (!sink.Finish(&error)) {
    progress.Finish(sink.stats().keys, sink.stats().bytes);
    WriteCheckpoint(checkpoint, source_id, sink.SafePosition(end_pos));
    return Error(error + " (the checkpoint for --resume is in " + checkpoint + ")", kExitTarget);
  }
  progress.Finish(sink.stats().keys, sink.stats().bytes);
  if (interrupted) {
    WriteCheckpoint(checkpoint, source_id, sink.SafePosition(end_pos));
    std::fprintf(out, "%s: interrupted; run again with --resume to go on (%s)\n", label.c_str(),
                 checkpoint.c_str());
    return kExitInterrupted;
  }
  for (const std::string& f : src.functions()) {
    if (!sink.LoadFunction(f, &error)) {
      std::fprintf(stderr, "strata-dump: warning: %s\n", error.c_str());
    }
  }
  std::remove(checkpoint.c_str());
  std::fprintf(out,
               "%s: %llu keys written (%llu with type commands, %llu in chunks), %llu "
               "filtered out, %llu module values skipped\n",
               label.c_str(), static_cast<unsigned long long>(sink.stats().keys.load()),
               static_cast<unsigned long long>(sink.stats().plain.load()),
               static_cast<unsigned long long>(sink.stats().chunked.load()),
               static_cast<unsigned long long>(filtered),
               static_cast<unsigned long long>(src.modules_skipped()));
  return kExitOk;
}

RestoreOptions SinkOptions(const Common& c, const mem::Endpoint& to, bool replace,
                           const std::map<uint32_t, uint32_t>& db_map, int connections,
                           uint64_t max_value_bytes) {
  RestoreOptions ro;
  ro.to = to;
  ro.client = c.client;
  ro.replace = replace;
  ro.db_map = db_map;
  ro.connections = connections;
  ro.max_value_bytes = max_value_bytes;
  return ro;
}

// Fetches the source's RDB by PSYNC into path; kRefused lets auto fall back to SCAN.
FetchStatus Fetch(const mem::Endpoint& from, const Common& c, const std::string& path,
                  FetchedRdb* f, std::string* error) {
  ProgressLine progress(c.progress, "transfer");
  FetchStatus st = FetchRdb(from, c.client, path, f, error,
                            [&](uint64_t bytes) { progress.Update(0, 0, 0, bytes); });
  if (st == FetchStatus::kOk) progress.Finish(0, f->bytes);
  return st;
}

std::string EncodeCommand(const mem::Reply& r) {
  std::string s = "*" + std::to_string(r.elements.size()) + "\r\n";
  for (const mem::Reply& e : r.elements) {
    s += "$" + std::to_string(e.str.size()) + "\r\n" + e.str + "\r\n";
  }
  return s;
}

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Applies the source's replication stream to the target until stopped.
int Follow(FetchedRdb& f, const CopyOptions& o, FILE* out) {
  mem::RespClient target;
  std::string error;
  if (!target.Connect(o.to, o.common.client, &error)) return ClientError(error);
  mem::RespClient& src = *f.stream;
  int64_t offset = f.offset;
  auto ack = [&] {
    src.Append({"REPLCONF", "ACK", std::to_string(offset)});
    return src.Flush(&error);
  };
  if (!ack()) return ClientError(error);
  std::fprintf(out, "copy: following %s from offset %lld (stop with Ctrl-C)\n",
               o.from.ToString().c_str(), static_cast<long long>(offset));
  std::fflush(out);
  auto last_ack = std::chrono::steady_clock::now();
  uint64_t applied = 0, pending = 0;
  auto drain = [&]() -> bool {
    mem::Reply r;
    while (pending > 0) {
      if (!target.Read(&r, &error)) return false;
      pending--;
      if (r.is_error()) {
        error = "the target refused a replicated write: " + r.str;
        return false;
      }
    }
    return true;
  };
  while (!g_stop.load()) {
    bool readable = false;
    if (!src.Poll(100, &readable, &error)) return ClientError(error);
    if (readable) {
      mem::Reply cmd;
      if (!src.Read(&cmd, &error)) return ClientError("replication stream: " + error);
      if (cmd.type != mem::Reply::Type::kArray || cmd.elements.empty()) continue;
      offset += static_cast<int64_t>(EncodeCommand(cmd).size());
      std::string name = Lower(cmd.elements[0].str);
      if (name == "ping") continue;
      if (name == "replconf") {
        if (cmd.elements.size() > 1 && Lower(cmd.elements[1].str) == "getack" && !ack()) {
          return ClientError(error);
        }
        continue;
      }
      std::vector<std::string_view> args;
      std::string mapped;
      for (const mem::Reply& e : cmd.elements) args.push_back(e.str);
      if (name == "select" && args.size() == 2) {
        uint64_t db = 0;
        if (ParseUint64(args[1], &db)) {
          auto it = o.db_map.find(static_cast<uint32_t>(db));
          if (it != o.db_map.end()) {
            mapped = std::to_string(it->second);
            args[1] = mapped;
          }
        }
      }
      target.Append(args);
      pending++;
      applied++;
      if (pending >= 1000 && !drain()) return Error(error, kExitTarget);
    } else if (pending > 0 && !drain()) {
      return Error(error, kExitTarget);
    }
    auto t = std::chrono::steady_clock::now();
    if (t - last_ack > std::chrono::seconds(1)) {
      if (!ack()) return ClientError(error);
      last_ack = t;
    }
  }
  if (!drain()) return Error(error, kExitTarget);
  std::fprintf(out, "copy: stopped after %llu replicated commands, at offset %lld\n",
               static_cast<unsigned long long>(applied), static_cast<long long>(offset));
  return kExitOk;
}

// The version in an RDB file's header ("REDIS0011"); -1 when it cannot be read.
int RdbFileVersion(const std::string& path) {
  char head[9];
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return -1;
  size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (n != sizeof(head) || std::memcmp(head, "REDIS", 5) != 0) return -1;
  int v = 0;
  for (int i = 5; i < 9; i++) {
    if (head[i] < '0' || head[i] > '9') return -1;
    v = v * 10 + (head[i] - '0');
  }
  return v;
}

// An RDB file or a strata snapshot (its manifest).
std::unique_ptr<Source> OpenFile(const std::string& path, bool skip_modules, std::string* error) {
  if (IsStrataSnapshot(path)) return StrataSnapshotSource::Open(path, error);
  return RdbFileSource::Open(path, skip_modules, error);
}

bool IsServer(const std::string& what, mem::Endpoint* ep) {
  struct stat st;
  if (stat(what.c_str(), &st) == 0) return false;
  std::string err;
  return mem::Endpoint::Parse(what, ep, &err);
}

std::unique_ptr<Source> OpenSide(const std::string& what, const Common& c, std::string* error) {
  mem::Endpoint ep;
  if (IsServer(what, &ep)) return ScanSource::Open(ep, c.client, c.filter, 500, error);
  return OpenFile(what, c.skip_modules, error);
}

// Where dump writes: an RDB file or a strata snapshot.
class FileSink {
 public:
  virtual ~FileSink() = default;
  virtual bool Add(const Item& item, std::string* error) = 0;
  virtual bool Finish(const std::vector<std::string>& functions, std::string* error) = 0;
  virtual uint64_t keys() const = 0;
  virtual uint64_t bytes() const = 0;
};

class RdbOut final : public FileSink {
 public:
  bool Open(const std::string& path, const RdbFileSink::Options& o, std::string* error) {
    return sink_.Open(path, o, error);
  }
  bool Add(const Item& item, std::string* error) override { return sink_.Add(item, error); }
  bool Finish(const std::vector<std::string>& functions, std::string* error) override {
    return sink_.Finish(functions, error);
  }
  uint64_t keys() const override { return sink_.keys(); }
  uint64_t bytes() const override { return sink_.bytes(); }

 private:
  RdbFileSink sink_;
};

class StrataOut final : public FileSink {
 public:
  bool Open(const std::string& path, std::string* error) { return sink_.Open(path, error); }
  bool Add(const Item& item, std::string* error) override { return sink_.Add(item, error); }
  bool Finish(const std::vector<std::string>& functions, std::string* error) override {
    if (!functions.empty()) {
      std::fprintf(stderr,
                   "strata-dump: warning: %zu function libraries not written (a strata "
                   "snapshot has no functions yet)\n",
                   functions.size());
    }
    return sink_.Finish(error);
  }
  uint64_t keys() const override { return sink_.keys(); }
  uint64_t bytes() const override { return sink_.bytes(); }

 private:
  StrataSnapshotSink sink_;
};

std::unique_ptr<FileSink> OpenSink(const DumpOptions& o, std::string* error) {
  if (o.format == "strata") {
    auto s = std::make_unique<StrataOut>();
    if (!s->Open(o.output, error)) return nullptr;
    return s;
  }
  auto s = std::make_unique<RdbOut>();
  RdbFileSink::Options so{o.rdb_version, o.compression, true, o.db_map};
  if (!s->Open(o.output, so, error)) return nullptr;
  return s;
}

}  // namespace

void Stop() { g_stop.store(true); }

// ---------------------------------------------------------------- dump

int RunDump(const DumpOptions& o, FILE* out) {
  std::string error;
  const Common& c = o.common;
  if (o.method != "scan") {
    std::string tmp = o.output + ".transfer-" + std::to_string(getpid());
    FetchedRdb f;
    FetchStatus st = Fetch(o.from, c, tmp, &f, &error);
    if (st == FetchStatus::kFailed) return ClientError(error);
    if (st == FetchStatus::kRefused) {
      if (o.method == "psync") return Error(error, kExitConnection);
      std::fprintf(out, "dump: %s; reading with SCAN and DUMP instead\n", error.c_str());
    } else {
      f.stream.reset();
      // The source's own file goes out as it came, unless something must change in it:
      // filters, a database map, skipped modules, another format or another version.
      bool passthrough = c.filter.empty() && o.db_map.empty() && !c.skip_modules &&
                         o.format == "rdb" &&
                         (!o.rdb_version_given || RdbFileVersion(tmp) == o.rdb_version);
      if (passthrough) {
        std::string bad;
        {
          MappedFile mf;
          Status ms = mf.Open(tmp);
          bad = ms.ok() ? rdb::RdbReader::Verify(mf.data(), {}) : ms.message();
        }
        if (!bad.empty()) {
          std::remove(tmp.c_str());
          return Error("the transferred RDB is damaged: " + bad, kExitData);
        }
        if (std::rename(tmp.c_str(), o.output.c_str()) != 0) {
          return Error(o.output + ": " + std::strerror(errno), kExitData);
        }
        std::fprintf(out, "dump: %s written from %s by replication (%llu bytes)\n",
                     o.output.c_str(), o.from.ToString().c_str(),
                     static_cast<unsigned long long>(f.bytes));
        return kExitOk;
      }
      auto src = RdbFileSource::Open(tmp, c.skip_modules, &error);
      if (!src) {
        std::remove(tmp.c_str());
        return Error(error, kExitData);
      }
      auto sink = OpenSink(o, &error);
      if (!sink) {
        std::remove(tmp.c_str());
        return Error(error, kExitData);
      }
      Item it;
      int64_t now = UnixMsNow();
      while (src->Next(&it, &error)) {
        if (c.filter.Keeps(it, now) && !sink->Add(it, &error)) break;
      }
      std::remove(tmp.c_str());
      if (!error.empty()) return Error(error, kExitData);
      if (!sink->Finish(src->functions(), &error)) return Error(error, kExitData);
      std::fprintf(out, "dump: %s written, %llu keys\n", o.output.c_str(),
                   static_cast<unsigned long long>(sink->keys()));
      return kExitOk;
    }
  }
  auto src = ScanSource::Open(o.from, c.client, c.filter, 500, &error);
  if (!src) return ClientError(error);
  auto sink = OpenSink(o, &error);
  if (!sink) return Error(error, kExitData);
  ProgressLine progress(c.progress, "dump");
  Item it;
  int64_t now = UnixMsNow();
  while (!g_stop.load() && src->Next(&it, &error)) {
    if (c.filter.Keeps(it, now) && !sink->Add(it, &error)) return Error(error, kExitData);
    progress.Update(src->done(), src->total(), sink->keys(), sink->bytes());
  }
  if (g_stop.load()) return Error("interrupted; no file written", kExitInterrupted);
  if (!error.empty()) return ClientError(error);
  if (!sink->Finish(src->functions(), &error)) return Error(error, kExitData);
  progress.Finish(sink->keys(), sink->bytes());
  std::fprintf(out, "dump: %s written from %s with SCAN and DUMP, %llu keys\n", o.output.c_str(),
               o.from.ToString().c_str(), static_cast<unsigned long long>(sink->keys()));
  return kExitOk;
}

// ---------------------------------------------------------------- restore

int RunRestore(const RestoreVerbOptions& o, FILE* out) {
  std::string error;
  auto src = OpenFile(o.input, o.common.skip_modules, &error);
  if (!src) return Error(error, kExitData);
  RestoreSink sink(SinkOptions(o.common, o.to, o.replace || o.resume, o.db_map, o.connections,
                               o.max_value_bytes));
  if (!sink.Start(&error)) return ClientError(error);
  std::string ck = o.checkpoint.empty() ? o.input + ".checkpoint" : o.checkpoint;
  return Pump(*src, sink, o.common, "restore", ck, FileIdentity(o.input), o.resume, out);
}

// ---------------------------------------------------------------- copy

int RunCopy(const CopyOptions& o, FILE* out) {
  std::string error;
  const Common& c = o.common;
  std::string ck = o.checkpoint.empty()
                       ? "copy-" + o.from.ToString() + "-" + o.to.ToString() + ".checkpoint"
                       : o.checkpoint;
  std::replace(ck.begin(), ck.end(), ':', '_');
  RestoreSink sink(
      SinkOptions(c, o.to, o.replace || o.resume, o.db_map, o.connections, o.max_value_bytes));
  if (!o.follow) {
    auto src = ScanSource::Open(o.from, c.client, c.filter, 500, &error);
    if (!src) return ClientError(error);
    if (!sink.Start(&error)) return ClientError(error);
    return Pump(*src, sink, c, "copy", ck, "server " + o.from.ToString(), o.resume, out);
  }
  std::string tmp = "strata-dump-follow-" + std::to_string(getpid()) + ".rdb";
  FetchedRdb f;
  FetchStatus st = Fetch(o.from, c, tmp, &f, &error);
  if (st != FetchStatus::kOk) {
    return Error(error + " (--follow needs the source's replication stream)",
                 st == FetchStatus::kRefused ? kExitConnection : kExitConnection);
  }
  auto src = RdbFileSource::Open(tmp, c.skip_modules, &error);
  if (!src) {
    std::remove(tmp.c_str());
    return Error(error, kExitData);
  }
  if (!sink.Start(&error)) return ClientError(error);
  int rc = Pump(*src, sink, c, "copy", ck, FileIdentity(tmp), false, out);
  std::remove(tmp.c_str());
  std::remove(ck.c_str());
  if (rc != kExitOk) return rc;
  return Follow(f, o, out);
}

// ---------------------------------------------------------------- verify

int RunVerify(const VerifyOptions& o, FILE* out) {
  std::string error;
  const Common& c = o.common;
  int64_t now = UnixMsNow();
  struct Key {
    uint32_t db;
    std::string key;
    bool operator<(const Key& k) const { return db != k.db ? db < k.db : key < k.key; }
  };
  std::map<Key, KeyDigest> a;
  std::map<uint32_t, uint64_t> count_a, count_b;
  auto src_a = OpenSide(o.from, c, &error);
  if (!src_a) return ClientError(error);
  Item it;
  while (src_a->Next(&it, &error)) {
    if (!c.filter.Keeps(it, now) || (it.expire_ms >= 0 && it.expire_ms <= now)) continue;
    KeyDigest d;
    if (!DigestOf(it, &d, &error)) return Error(o.from + ": " + error, kExitData);
    count_a[it.db]++;
    a[Key{it.db, it.key}] = d;
  }
  if (!error.empty()) return ClientError(error);
  src_a.reset();
  auto src_b = OpenSide(o.to, c, &error);
  if (!src_b) return ClientError(error);
  uint64_t diffs = 0;
  auto report = [&](const std::string& line) {
    if (++diffs <= static_cast<uint64_t>(o.max_diffs)) std::fprintf(out, "%s\n", line.c_str());
  };
  auto name = [](uint32_t db, const std::string& k) {
    return "db " + std::to_string(db) + " key " + mem::JsonString(k);
  };
  while (src_b->Next(&it, &error)) {
    if (!c.filter.Keeps(it, now) || (it.expire_ms >= 0 && it.expire_ms <= now)) continue;
    count_b[it.db]++;
    KeyDigest d;
    if (!DigestOf(it, &d, &error)) return Error(o.to + ": " + error, kExitData);
    auto found = a.find(Key{it.db, it.key});
    if (found == a.end()) {
      report("only in " + o.to + ": " + name(it.db, it.key));
      continue;
    }
    const KeyDigest& x = found->second;
    if (x.type != d.type) {
      report("type differs: " + name(it.db, it.key) + ": " + x.type + " / " + d.type);
    } else if (x.hash != d.hash) {
      report("value differs: " + name(it.db, it.key) + " (" + std::to_string(x.elements) + " / " +
             std::to_string(d.elements) + " elements)");
    } else if ((x.expire_ms < 0) != (d.expire_ms < 0) ||
               (x.expire_ms >= 0 && std::llabs(x.expire_ms - d.expire_ms) > o.ttl_tolerance_ms)) {
      auto ttl = [&](int64_t e) {
        return e < 0 ? std::string("none") : std::to_string(e - now) + " ms";
      };
      report("ttl differs: " + name(it.db, it.key) + ": " + ttl(x.expire_ms) + " / " +
             ttl(d.expire_ms));
    }
    a.erase(found);
  }
  if (!error.empty()) return ClientError(error);
  for (const auto& [k, d] : a) report("only in " + o.from + ": " + name(k.db, k.key));
  std::set<uint32_t> dbs;
  for (auto& [db, n] : count_a) dbs.insert(db);
  for (auto& [db, n] : count_b) dbs.insert(db);
  uint64_t total_a = 0, total_b = 0;
  for (uint32_t db : dbs) {
    total_a += count_a[db];
    total_b += count_b[db];
    std::fprintf(out, "db %u: %llu keys / %llu keys\n", db,
                 static_cast<unsigned long long>(count_a[db]),
                 static_cast<unsigned long long>(count_b[db]));
  }
  if (diffs > static_cast<uint64_t>(o.max_diffs)) {
    std::fprintf(out, "... and %llu more differences\n",
                 static_cast<unsigned long long>(diffs - static_cast<uint64_t>(o.max_diffs)));
  }
  std::fprintf(out, "verify: %llu keys in %s, %llu in %s, %llu differences\n",
               static_cast<unsigned long long>(total_a), o.from.c_str(),
               static_cast<unsigned long long>(total_b), o.to.c_str(),
               static_cast<unsigned long long>(diffs));
  return diffs == 0 ? kExitOk : kExitDifferences;
}

// ---------------------------------------------------------------- inspect

int RunInspect(const InspectOptions& o, FILE* out) {
  std::string error;
  auto src = OpenFile(o.input, true, &error);
  if (!src) return Error(error, kExitData);
  int version = 0;
  if (auto* rdb_src = dynamic_cast<RdbFileSource*>(src.get())) version = rdb_src->version();
  int64_t now = UnixMsNow();
  mem::GroupingOptions g;
  g.depth = o.depth;
  g.separators = o.separators;
  struct Group {
    uint64_t keys = 0, bytes = 0;
  };
  std::map<std::string, Group> groups;
  std::map<std::string, Group> types;
  if (!o.summary && o.format == "csv") {
    std::fprintf(out, "db,key,type,encoding,elements,bytes,expire_ms\n");
  }
  mem::TextTable table;
  bool text = !o.summary && o.format == "text";
  if (text) {
    for (const char* h : {"db", "key", "type", "encoding", "elements", "bytes", "ttl"}) {
      std::string hs(h);
      table.AddColumn(h, hs == "key" || hs == "type" || hs == "encoding"
                             ? mem::TextTable::Align::kLeft
                             : mem::TextTable::Align::kRight);
    }
  }
  uint64_t shown = 0, total_keys = 0, total_bytes = 0;
  Item it;
  rdb::DecodeOptions dopts;
  dopts.skip_modules = true;
  while (src->Next(&it, &error)) {
    if (!o.common.filter.Keeps(it, now)) continue;
    uint64_t bytes = it.key.size() + it.value.size();
    total_keys++;
    total_bytes += bytes;
    const char* type = TypeOfId(it.type_id);
    if (o.summary) {
      Group& gr = groups[mem::KeyPrefix(it.key, g)];
      gr.keys++;
      gr.bytes += bytes;
      Group& ty = types[type];
      ty.keys++;
      ty.bytes += bytes;
      continue;
    }
    if (o.limit > 0 && shown >= o.limit) continue;
    shown++;
    rdb::RdbValue v;
    std::string why;
    if (rdb::ParseDumpPayload(it.Payload(), dopts, &v, &why) != rdb::PayloadStatus::kOk) {
      return Error(o.input + ": key '" + it.key + "': " + why, kExitData);
    }
    std::string ttl = it.expire_ms < 0 ? "-1" : std::to_string(it.expire_ms - now);
    const char* enc = rdb::TypeIdName(it.type_id);
    if (o.format == "json") {
      std::fprintf(out,
                   "{\"db\":%u,\"key\":%s,\"type\":\"%s\",\"encoding\":\"%s\",\"elements\":%zu,"
                   "\"bytes\":%llu,\"expire_ms\":%lld}\n",
                   it.db, mem::JsonString(it.key).c_str(), type, enc, v.elements,
                   static_cast<unsigned long long>(bytes), static_cast<long long>(it.expire_ms));
    } else if (o.format == "csv") {
      std::fprintf(out, "%u,%s,%s,%s,%zu,%llu,%lld\n", it.db, mem::CsvField(it.key).c_str(), type,
                   enc, v.elements, static_cast<unsigned long long>(bytes),
                   static_cast<long long>(it.expire_ms));
    } else {
      table.AddRow({std::to_string(it.db), mem::TextEscapeTruncated(it.key, 60), type, enc,
                    std::to_string(v.elements), std::to_string(bytes), ttl});
    }
  }
  if (!error.empty()) return Error(error, kExitData);
  if (text) std::fputs(table.Render().c_str(), out);
  if (o.summary) {
    auto print = [&](const char* title, const std::map<std::string, Group>& m) {
      std::vector<std::pair<std::string, Group>> v(m.begin(), m.end());
      std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) {
        return x.second.bytes != y.second.bytes ? x.second.bytes > y.second.bytes
                                                : x.first < y.first;
      });
      if (o.format == "json") {
        for (const auto& [name, gr] : v) {
          std::fprintf(out, "{\"%s\":%s,\"keys\":%llu,\"bytes\":%llu}\n", title,
                       mem::JsonString(name).c_str(), static_cast<unsigned long long>(gr.keys),
                       static_cast<unsigned long long>(gr.bytes));
        }
        return;
      }
      mem::TextTable t;
      t.AddColumn(title, mem::TextTable::Align::kLeft);
      t.AddColumn("keys", mem::TextTable::Align::kRight);
      t.AddColumn("bytes", mem::TextTable::Align::kRight);
      t.AddColumn("share", mem::TextTable::Align::kRight);
      for (const auto& [name, gr] : v) {
        double share =
            total_bytes ? 100.0 * static_cast<double>(gr.bytes) / static_cast<double>(total_bytes)
                        : 0;
        t.AddRow({mem::TextEscapeTruncated(name, 60), std::to_string(gr.keys),
                  mem::HumanBytes(static_cast<double>(gr.bytes)),
                  mem::FormatFixed(share, 1) + "%"});
      }
      std::fputs(t.Render().c_str(), out);
    };
    print("prefix", groups);
    if (o.format != "json") std::fputs("\n", out);
    print("type", types);
  }
  if (o.format == "text") {
    std::string what = version > 0 ? "RDB version " + std::to_string(version) : "strata snapshot";
    std::fprintf(out, "%s: %s, %llu keys, %s of keys and values\n", o.input.c_str(), what.c_str(),
                 static_cast<unsigned long long>(total_keys),
                 mem::HumanBytes(static_cast<double>(total_bytes)).c_str());
  }
  return kExitOk;
}

}  // namespace strata::dump
