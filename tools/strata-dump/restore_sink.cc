#include "tools/strata-dump/restore_sink.h"

#include "tools/strata-dump/plain_commands.h"

namespace strata::dump {

RestoreSink::~RestoreSink() {
  {
    std::lock_guard<std::mutex> l(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

uint32_t RestoreSink::MapDb(uint32_t db) const {
  auto it = opts_.db_map.find(db);
  return it == opts_.db_map.end() ? db : it->second;
}

bool RestoreSink::Start(std::string* error) {
  for (int i = 0; i < opts_.connections; i++) {
    auto c = std::make_unique<mem::RespClient>();
    if (!c->Connect(opts_.to, opts_.client, error)) return false;
    clients_.push_back(std::move(c));
  }
  for (auto& c : clients_) threads_.emplace_back([this, p = c.get()] { Worker(p); });
  return true;
}

void RestoreSink::SetError(const std::string& e) {
  std::lock_guard<std::mutex> l(mu_);
  if (error_.empty()) error_ = e;
  failed_.store(true);
  cv_.notify_all();
}

void RestoreSink::Flush() {
  if (open_.items.empty()) return;
  open_.seq = next_seq_++;
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return queue_.size() < clients_.size() * 2 || failed_.load(); });
  in_flight_[open_.seq] = open_.position;
  queue_.push_back(std::move(open_));
  open_ = Batch();
  open_bytes_ = 0;
  cv_.notify_all();
}

bool RestoreSink::Add(Item item, const std::string& position, std::string* error) {
  if (failed_.load()) {
    std::lock_guard<std::mutex> l(mu_);
    *error = error_;
    return false;
  }
  if (open_.items.empty()) open_.position = position;
  open_bytes_ += item.key.size() + item.value.size();
  open_.items.push_back(std::move(item));
  if (open_.items.size() >= kBatchKeys || open_bytes_ >= kBatchBytes) Flush();
  return true;
}

bool RestoreSink::LoadFunction(const std::string& code, std::string* error) {
  mem::Reply r;
  if (!clients_[0]->Call({"FUNCTION", "LOAD", "REPLACE", code}, &r, error)) return false;
  if (r.is_error()) {
    *error = "the target refused a function library: " + r.str;
    return false;
  }
  return true;
}

bool RestoreSink::WritePlain(mem::RespClient* c, const Item& item, std::string* error) {
  std::vector<Command> cmds;
  if (!PlainCommands(item, opts_.replace, opts_.chunk_bytes, &cmds, error)) return false;
  mem::Reply r;
  if (!opts_.replace) {
    if (!c->Call({"EXISTS", item.key}, &r, error)) return false;
    if (r.integer == 1) {
      *error = "key '" + item.key + "' already exists on the target (use --replace)";
      return false;
    }
  }
  for (const Command& cmd : cmds) {
    std::vector<std::string_view> args(cmd.begin(), cmd.end());
    c->Append(args);
  }
  for (size_t i = 0; i < cmds.size(); i++) {
    if (!c->Read(&r, error)) return false;
    if (r.is_error()) {
      *error = "key '" + item.key + "': the target refused " + cmds[i][0] + ": " + r.str;
      return false;
    }
  }
  return true;
}

bool RestoreSink::SendBatch(mem::RespClient* c, Batch& b, uint32_t* cur_db, std::string* error) {
  struct Sent {
    size_t item;
    bool select;
  };
  std::vector<Sent> sent;
  std::vector<size_t> plain;
  std::string cmds;
  cmds.reserve(kBatchBytes + 64 * b.items.size());
  for (size_t i = 0; i < b.items.size(); i++) {
    const Item& it = b.items[i];
    uint32_t db = MapDb(it.db);
    if (db != *cur_db) {
      std::string d = std::to_string(db);
      cmds += "*2\r\n$6\r\nSELECT\r\n$" + std::to_string(d.size()) + "\r\n" + d + "\r\n";
      sent.push_back({i, true});
      *cur_db = db;
    }
    if (it.value.size() > opts_.max_value_bytes) {
      plain.push_back(i);
      stats_.chunked++;
      continue;
    }
    it.AppendRestore(opts_.replace, &cmds);
    sent.push_back({i, false});
  }
  c->AppendRaw(cmds);
  mem::Reply r;
  for (const Sent& s : sent) {
    if (!c->Read(&r, error)) return false;
    const Item& it = b.items[s.item];
    if (s.select) {
      if (r.is_error()) {
        *error = "the target refused SELECT " + std::to_string(MapDb(it.db)) + ": " + r.str;
        return false;
      }
      continue;
    }
    if (!r.is_error()) {
      stats_.keys++;
      stats_.bytes += it.value.size();
      continue;
    }
    if (r.str.find("payload version or checksum") != std::string::npos ||
        r.str.rfind("ERR Bad data format", 0) == 0) {
      plain.push_back(s.item);
      stats_.plain++;
      continue;
    }
    if (r.str.rfind("BUSYKEY", 0) == 0) {
      *error = "key '" + it.key + "' already exists on the target (use --replace)";
    } else {
      *error = "key '" + it.key + "': the target refused RESTORE: " + r.str;
    }
    return false;
  }
  // Keys written with plain commands, in the database each belongs to.
  for (size_t i : plain) {
    const Item& it = b.items[i];
    uint32_t db = MapDb(it.db);
    if (db != *cur_db) {
      if (!c->CallOk({"SELECT", std::to_string(db)}, &r, error)) return false;
      *cur_db = db;
    }
    if (!WritePlain(c, it, error)) return false;
    stats_.keys++;
    stats_.bytes += it.value.size();
  }
  return true;
}

void RestoreSink::Worker(mem::RespClient* c) {
  uint32_t cur_db = 0;
  while (true) {
    Batch b;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return !queue_.empty() || closing_ || failed_.load(); });
      if (failed_.load() || queue_.empty()) return;
      b = std::move(queue_.front());
      queue_.pop_front();
      cv_.notify_all();
    }
    std::string error;
    if (!SendBatch(c, b, &cur_db, &error)) {
      SetError(error);
      return;
    }
    std::lock_guard<std::mutex> l(mu_);
    in_flight_.erase(b.seq);
    cv_.notify_all();
  }
}

std::string RestoreSink::SafePosition(const std::string& current) {
  std::lock_guard<std::mutex> l(mu_);
  if (!in_flight_.empty()) return in_flight_.begin()->second;
  if (!open_.items.empty()) return open_.position;
  return current;
}

bool RestoreSink::Finish(std::string* error) {
  Flush();
  {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return (queue_.empty() && in_flight_.empty()) || failed_.load(); });
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  std::lock_guard<std::mutex> l(mu_);
  if (failed_.load()) {
    *error = error_;
    return false;
  }
  return true;
}

}  // namespace strata::dump
