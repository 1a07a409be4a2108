#include "tools/strata-mem/report_cmd.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>
#include <vector>

#include "tools/strata-mem/info.h"
#include "tools/strata-mem/rate_limit.h"
#include "tools/strata-mem/seen_set.h"

namespace strata::mem {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string LocalTime() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

bool ParseScanReply(const Reply& reply, std::string* cursor, std::vector<std::string>* keys) {
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 2) return false;
  const Reply& c = reply.elements[0];
  const Reply& list = reply.elements[1];
  if (c.type != Reply::Type::kBulk || list.type != Reply::Type::kArray) return false;
  keys->clear();
  for (const Reply& k : list.elements) {
    if (k.type != Reply::Type::kBulk) return false;
    keys->push_back(k.str);
  }
  *cursor = c.str;
  return true;
}

bool MemoryUsageError(const RespClient& client, const Reply& reply, std::string* error) {
  client.CheckReply(reply, error);
  std::string lower = reply.str;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("unknown command") != std::string::npos ||
      lower.find("unknown subcommand") != std::string::npos) {
    *error += " (report needs MEMORY USAGE, which this server does not implement)";
  }
  return false;
}

// Looks up TYPE and MEMORY USAGE for a batch of keys, pipelined.
bool InspectBatch(RespClient* client, const std::vector<std::string>& keys, ReportModel* model,
                  std::string* error) {
  for (const std::string& key : keys) {
    client->Append({"TYPE", key});
    client->Append({"MEMORY", "USAGE", key, "SAMPLES", "0"});
  }
  if (!client->Flush(error)) return false;
  Reply type_reply;
  Reply mem_reply;
  for (const std::string& key : keys) {
    if (!client->Read(&type_reply, error) || !client->Read(&mem_reply, error)) return false;
    if (type_reply.is_error()) return client->CheckReply(type_reply, error);
    if (mem_reply.is_error()) return MemoryUsageError(*client, mem_reply, error);
    if (type_reply.type != Reply::Type::kStatus && type_reply.type != Reply::Type::kBulk) {
      *error = "server " + client->name() + " answered TYPE with " + type_reply.Describe();
      return false;
    }
    std::optional<KeyType> type = ParseKeyType(type_reply.str);
    if (!type || mem_reply.is_nil()) {
      model->AddVanished();
      continue;
    }
    if (mem_reply.type != Reply::Type::kInteger || mem_reply.integer < 0) {
      *error = "server " + client->name() + " answered MEMORY USAGE with " + mem_reply.Describe() +
               ", expected an integer or nil";
      return false;
    }
    model->Add(key, *type, static_cast<uint64_t>(mem_reply.integer));
  }
  return true;
}

bool WriteFile(const std::string& path, const std::string& text, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) *error = "cannot write " + path + ": " + std::strerror(errno);
  return ok;
}

}  // namespace

bool ScanServer(const ReportOptions& options, ReportModel* model, ReportMeta* meta,
                std::string* error) {
  double start = NowSeconds();
  RespClient client;
  if (!client.Connect(options.server, options.client, error)) return false;
  Reply reply;
  if (options.db != 0) {
    if (!client.CallOk({"SELECT", std::to_string(options.db)}, &reply, error)) return false;
  }
  InfoFields server_info;
  if (!FetchInfo(&client, "server", &server_info, error)) return false;
  ServerIdentity id = IdentifyServer(server_info);
  meta->server = client.name();
  meta->software = id.Describe();
  meta->db = options.db;
  meta->match = options.match;
  meta->max_keys_per_sec = options.max_keys_per_sec;
  meta->prefix_rows = options.prefix_rows;
  meta->generated_at = LocalTime();

  if (!client.CallOk({"DBSIZE"}, &reply, error)) return false;
  uint64_t estimate = reply.type == Reply::Type::kInteger && reply.integer > 0
                          ? static_cast<uint64_t>(reply.integer)
                          : 0;
  Progress progress(ProgressEnabled(options.progress, STDERR_FILENO), "scanning " + client.name(),
                    estimate);
  TokenBucket bucket(static_cast<double>(options.max_keys_per_sec), 0, NowSeconds());
  SeenSet seen;
  std::string cursor = "0";
  std::string count = std::to_string(options.scan_count);
  std::vector<std::string> keys;
  std::vector<std::string> fresh;
  uint64_t visited = 0;
  do {
    bool ok = options.match.empty()
                  ? client.CallOk({"SCAN", cursor, "COUNT", count}, &reply, error)
                  : client.CallOk({"SCAN", cursor, "MATCH", options.match, "COUNT", count}, &reply,
                                  error);
    if (!ok) {
      progress.Abandon();
      return false;
    }
    if (!ParseScanReply(reply, &cursor, &keys)) {
      progress.Abandon();
      *error = "server " + client.name() + " answered SCAN with " + reply.Describe() +
               ", expected [cursor, [keys...]]";
      return false;
    }
    fresh.clear();
    for (std::string& k : keys) {
      if (!options.dedupe || seen.Insert(k)) {
        fresh.push_back(std::move(k));
      } else {
        model->AddDuplicate();
      }
    }
    if (!fresh.empty()) {
      double wait = bucket.Take(static_cast<double>(fresh.size()), NowSeconds());
      if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      if (!InspectBatch(&client, fresh, model, error)) {
        progress.Abandon();
        return false;
      }
    }
    visited += fresh.size();
    progress.Update(visited);
  } while (cursor != "0");
  progress.Finish(visited);

  InfoFields memory;
  if (!FetchInfo(&client, "memory", &memory, error)) return false;
  meta->used_memory = InfoUint(memory, "used_memory");
  meta->elapsed_s = NowSeconds() - start;
  return true;
}

int RunReport(const ReportOptions& options, FILE* out) {
  ReportModel model(options.grouping, options.top);
  ReportMeta meta;
  std::string error;
  if (!ScanServer(options, &model, &meta, &error)) {
    std::fprintf(stderr, "strata-mem report: %s\n", error.c_str());
    return 1;
  }
  if (options.json_path != "-") {
    std::string text = RenderReportText(meta, model);
    std::fwrite(text.data(), 1, text.size(), out);
  }
  if (!options.json_path.empty()) {
    std::string json = RenderReportJson(meta, model);
    if (options.json_path == "-") {
      std::fwrite(json.data(), 1, json.size(), out);
    } else if (!WriteFile(options.json_path, json, &error)) {
      std::fprintf(stderr, "strata-mem report: %s\n", error.c_str());
      return 1;
    }
  }
  if (!options.html_path.empty() &&
      !WriteFile(options.html_path, RenderReportHtml(meta, model), &error)) {
    std::fprintf(stderr, "strata-mem report: %s\n", error.c_str());
    return 1;
  }
  std::fflush(out);
  return 0;
}

}  // namespace strata::mem
