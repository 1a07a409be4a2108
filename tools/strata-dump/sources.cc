#include "tools/strata-dump/sources.h"

#include <sys/time.h>

#include <cstdio>
#include <cstring>

#include "core/string_util.h"
#include "storage/mono_clock.h"
#include "storage/rdb_format.h"

namespace strata::dump {

// ---------------------------------------------------------------- RdbFileSource

std::unique_ptr<RdbFileSource> RdbFileSource::Open(const std::string& path, bool skip_modules,
                                                   std::string* error) {
  auto s = std::unique_ptr<RdbFileSource>(new RdbFileSource());
  s->path_ = path;
  Status st = s->file_.Open(path);
  if (!st.ok()) {
    *error = st.message();
    return nullptr;
  }
  rdb::RdbReader::Options o;
  o.skip_modules = skip_modules;
  o.decode = false;
  s->reader_ = std::make_unique<rdb::RdbReader>(s->file_.data(), o);
  if (!s->reader_->ReadHeader()) {
    *error = path + ": " + s->reader_->error();
    return nullptr;
  }
  return s;
}

bool RdbFileSource::Seek(const std::string& position, std::string* error) {
  uint64_t v = 0;
  if (!ParseUint64(position, &v)) {
    *error = "bad position '" + position + "' for a file";
    return false;
  }
  skip_until_ = v;
  return true;
}

bool RdbFileSource::Next(Item* item, std::string* error) {
  error->clear();
  while (!ended_) {
    if (!reader_->Next(&rec_)) {
      *error = path_ + ": " + reader_->error();
      return false;
    }
    using Kind = rdb::RdbRecord::Kind;
    switch (rec_.kind) {
      case Kind::kEnd:
        ended_ = true;
        return false;
      case Kind::kFunction:
        if (rec_.offset >= skip_until_) functions_.push_back(rec_.text);
        break;
      case Kind::kModuleAux:
        modules_skipped_++;
        break;
      case Kind::kKey: {
        next_record_ = reader_->offset();
        if (rec_.offset < skip_until_) break;
        if (rec_.value.kind == rdb::RdbKind::kModule) {
          modules_skipped_++;
          break;
        }
        item->db = rec_.db;
        item->key = rec_.name;
        item->type_id = rec_.type_id;
        item->value.assign(rec_.raw);
        item->expire_ms = rec_.expire_ms;
        item->idle_s = rec_.idle_s;
        item->freq = rec_.freq;
        return true;
      }
      default:
        break;
    }
  }
  return false;
}

// ---------------------------------------------------------------- ScanSource

std::unique_ptr<ScanSource> ScanSource::Open(const mem::Endpoint& ep, const mem::ClientOptions& co,
                                             const Filter& filter, int batch, std::string* error) {
  auto s = std::unique_ptr<ScanSource>(new ScanSource());
  s->batch_ = batch;
  if (!s->client_.Connect(ep, co, error)) return nullptr;
  mem::Reply r;
  if (!s->client_.CallOk({"INFO", "keyspace"}, &r, error)) return nullptr;
  // "db0:keys=3,expires=0,avg_ttl=0"
  size_t pos = 0;
  while ((pos = r.str.find("db", pos)) != std::string::npos) {
    size_t colon = r.str.find(':', pos);
    size_t keys = r.str.find("keys=", pos);
    if (colon == std::string::npos || keys == std::string::npos) break;
    uint64_t db = 0, n = 0;
    std::string_view text(r.str);
    size_t kend = text.find_first_of(",\r\n", keys + 5);
    if (ParseUint64(text.substr(pos + 2, colon - pos - 2), &db) &&
        ParseUint64(text.substr(keys + 5, kend - keys - 5), &n) && n > 0 &&
        filter.WantsDb(static_cast<uint32_t>(db))) {
      s->dbs_.push_back(static_cast<uint32_t>(db));
      s->keys_total_ += n;
    }
    pos = colon;
  }
  if (filter.match.size() == 1) s->match_ = filter.match[0];
  // Function libraries, with their code (Redis 7; a server without FUNCTION has none).
  mem::Reply fl;
  if (s->client_.Call({"FUNCTION", "LIST", "WITHCODE"}, &fl, error) && !fl.is_error()) {
    for (const mem::Reply& lib : fl.elements) {
      for (size_t i = 0; i + 1 < lib.elements.size(); i += 2) {
        if (lib.elements[i].str == "library_code") s->functions_.push_back(lib.elements[i + 1].str);
      }
    }
  }
  error->clear();
  return s;
}

std::string ScanSource::Position() const {
  if (next_ < items_.size() && !items_.empty()) {
    return std::to_string(items_[0].db) + " " + batch_cursor_;
  }
  if (db_index_ >= dbs_.size()) return "end";
  return std::to_string(dbs_[db_index_]) + " " + (scan_started_ ? cursor_ : "0");
}

bool ScanSource::Seek(const std::string& position, std::string* error) {
  if (position == "end") {
    db_index_ = dbs_.size();
    return true;
  }
  size_t sp = position.find(' ');
  uint64_t db = 0;
  if (sp == std::string::npos || !ParseUint64(std::string_view(position).substr(0, sp), &db)) {
    *error = "bad position '" + position + "' for a server";
    return false;
  }
  db_index_ = 0;
  while (db_index_ < dbs_.size() && dbs_[db_index_] < db) db_index_++;
  if (db_index_ < dbs_.size() && dbs_[db_index_] == db) {
    cursor_ = position.substr(sp + 1);
    mem::Reply r;
    if (!client_.CallOk({"SELECT", std::to_string(db)}, &r, error)) return false;
    scan_started_ = true;
  }
  return true;
}

bool ScanSource::Fill(std::string* error) {
  items_.clear();
  next_ = 0;
  mem::Reply r;
  while (items_.empty()) {
    if (db_index_ >= dbs_.size()) return false;
    uint32_t db = dbs_[db_index_];
    if (!scan_started_) {
      if (!client_.CallOk({"SELECT", std::to_string(db)}, &r, error)) return false;
      scan_started_ = true;
      cursor_ = "0";
    }
    batch_cursor_ = cursor_;
    std::string count = std::to_string(batch_);
    if (match_.empty()) {
      client_.Append({"SCAN", cursor_, "COUNT", count});
    } else {
      client_.Append({"SCAN", cursor_, "COUNT", count, "MATCH", match_});
    }
    if (!client_.Read(&r, error)) return false;
    if (r.is_error() || r.type != mem::Reply::Type::kArray || r.elements.size() != 2) {
      *error = "the source's SCAN failed: " + r.Describe();
      return false;
    }
    cursor_ = r.elements[0].str;
    std::vector<std::string> keys;
    for (auto& k : r.elements[1].elements) keys.push_back(std::move(k.str));
    for (const std::string& k : keys) {
      client_.Append({"DUMP", k});
      client_.Append({"PTTL", k});
    }
    int64_t now = UnixMsNow();
    for (const std::string& k : keys) {
      mem::Reply dump, ttl;
      if (!client_.Read(&dump, error) || !client_.Read(&ttl, error)) return false;
      if (dump.is_error()) {
        *error = "the source refused DUMP: " + dump.str;
        return false;
      }
      if (dump.is_nil() || dump.str.size() < 10 || ttl.integer == -2) continue;  // gone
      Item it;
      it.db = db;
      it.key = k;
      it.type_id = static_cast<uint8_t>(dump.str[0]);
      it.value.assign(dump.str, 1, dump.str.size() - 11);
      it.expire_ms = ttl.integer >= 0 ? now + ttl.integer : -1;
      if (it.type_id == rdb::kTypeModule2 || it.type_id == rdb::kTypeModulePreGa) {
        modules_skipped_++;
        continue;
      }
      items_.push_back(std::move(it));
    }
    if (cursor_ == "0") {
      db_index_++;
      scan_started_ = false;
    }
  }
  return true;
}

bool ScanSource::Next(Item* item, std::string* error) {
  error->clear();
  if (next_ >= items_.size() && !Fill(error)) return false;
  *item = std::move(items_[next_++]);
  keys_done_++;
  return true;
}

// ---------------------------------------------------------------- FetchRdb

FetchStatus FetchRdb(const mem::Endpoint& ep, const mem::ClientOptions& co, const std::string& path,
                     FetchedRdb* out, std::string* error,
                     const std::function<void(uint64_t)>& progress) {
  auto c = std::make_unique<mem::RespClient>();
  if (!c->Connect(ep, co, error)) return FetchStatus::kFailed;
  mem::Reply r;
  if (!c->Call({"REPLCONF", "listening-port", "0"}, &r, error)) return FetchStatus::kFailed;
  if (r.is_error()) {
    *error = "the source refused REPLCONF: " + r.str;
    return FetchStatus::kRefused;
  }
  if (!c->Call({"REPLCONF", "capa", "eof", "capa", "psync2"}, &r, error)) {
    return FetchStatus::kFailed;
  }
  c->Append({"PSYNC", "?", "-1"});
  std::string line;
  // Newlines keep the link alive while the source gets ready, before any reply.
  do {
    if (!c->ReadLine(&line, 4096, error)) return FetchStatus::kFailed;
    while (!line.empty() && line[0] == '\n') line.erase(0, 1);
  } while (line.empty());
  if (line.rfind("+FULLRESYNC ", 0) != 0) {
    *error = "the source refused PSYNC: " + line;
    return FetchStatus::kRefused;
  }
  {
    std::string rest = line.substr(12);
    size_t sp = rest.find(' ');
    out->replid = rest.substr(0, sp);
    int64_t off = 0;
    if (sp != std::string::npos) ParseInt64(std::string_view(rest).substr(sp + 1), &off);
    out->offset = off;
  }
  // Newlines keep the link alive while the source prepares its RDB.
  do {
    if (!c->ReadLine(&line, 4096, error)) return FetchStatus::kFailed;
    while (!line.empty() && line[0] == '\n') line.erase(0, 1);
  } while (line.empty());
  if (line[0] != '$') {
    *error = "unexpected reply to PSYNC: " + line.substr(0, 100);
    return FetchStatus::kFailed;
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    *error = path + ": " + std::strerror(errno);
    return FetchStatus::kFailed;
  }
  auto fail = [&](const std::string& what) {
    std::fclose(f);
    std::remove(path.c_str());
    *error = what;
    return FetchStatus::kFailed;
  };
  std::string chunk;
  uint64_t written = 0;
  if (line.rfind("$EOF:", 0) == 0) {
    std::string mark = line.substr(5);
    if (mark.size() != 40) return fail("malformed diskless transfer mark");
    std::string tail;  // bytes held back: they may be the start of the mark
    while (true) {
      if (!c->ReadRaw(1 << 20, &chunk, error)) return fail(*error);
      tail += chunk;
      size_t at = tail.find(mark);
      if (at != std::string::npos) {
        if (std::fwrite(tail.data(), 1, at, f) != at) return fail(path + ": write failed");
        written += at;
        c->Unread(std::string_view(tail).substr(at + 40));
        break;
      }
      if (tail.size() > 40) {
        size_t n = tail.size() - 40;
        if (std::fwrite(tail.data(), 1, n, f) != n) return fail(path + ": write failed");
        written += n;
        tail.erase(0, n);
        if (progress) progress(written);
      }
    }
  } else {
    uint64_t len = 0;
    if (!ParseUint64(std::string_view(line).substr(1), &len)) return fail("bad RDB length " + line);
    while (written < len) {
      if (!c->ReadRaw(static_cast<size_t>(std::min<uint64_t>(len - written, 1 << 20)), &chunk,
                      error)) {
        return fail(*error);
      }
      if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) {
        return fail(path + ": write failed");
      }
      written += chunk.size();
      if (progress) progress(written);
    }
  }
  if (std::fflush(f) != 0 || std::fclose(f) != 0) {
    std::remove(path.c_str());
    *error = path + ": write failed";
    return FetchStatus::kFailed;
  }
  out->bytes = written;
  out->stream = std::move(c);
  return FetchStatus::kOk;
}

}  // namespace strata::dump
