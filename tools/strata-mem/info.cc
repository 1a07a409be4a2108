#include "tools/strata-mem/info.h"

namespace strata::mem {

InfoFields ParseInfo(std::string_view text) {
  InfoFields out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    out.insert_or_assign(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
  }
  return out;
}

std::optional<uint64_t> InfoUint(const InfoFields& fields, std::string_view name) {
  auto it = fields.find(name);
  if (it == fields.end()) return std::nullopt;
  int64_t v = 0;
  if (!ParseReplyInteger(it->second, &v) || v < 0) return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::string ServerIdentity::Describe() const {
  if (name.empty()) return "unknown";
  if (version.empty()) return name;
  return name + " " + version;
}

ServerIdentity IdentifyServer(const InfoFields& info) {
  auto get = [&](std::string_view name) -> std::string {
    auto it = info.find(name);
    return it == info.end() ? std::string() : it->second;
  };
  ServerIdentity id;
  if (std::string v = get("strata_version"); !v.empty()) {
    id = {"strata", v};
  } else if (std::string v = get("valkey_version"); !v.empty()) {
    id = {"valkey", v};
  } else if (std::string v = get("redis_version"); !v.empty()) {
    id = {"redis", v};
  }
  if (std::string name = get("server_name"); !name.empty()) id.name = name;
  return id;
}

bool FetchInfo(RespClient* client, std::string_view section, InfoFields* out, std::string* error) {
  Reply reply;
  if (!client->CallOk({"INFO", section}, &reply, error)) return false;
  if (reply.type != Reply::Type::kBulk) {
    *error = "server " + client->name() + " answered INFO " + std::string(section) + " with " +
             reply.Describe() + ", expected a bulk string";
    return false;
  }
  *out = ParseInfo(reply.str);
  return true;
}

bool FetchMemory(RespClient* client, MemoryFigures* out, std::string* error) {
  InfoFields info;
  if (!FetchInfo(client, "memory", &info, error)) return false;
  auto used = InfoUint(info, "used_memory");
  auto rss = InfoUint(info, "used_memory_rss");
  if (!used || !rss) {
    *error = "server " + client->name() + ": INFO memory lacks " +
             (!used ? std::string("used_memory") : std::string("used_memory_rss")) +
             " (or it is not a number)";
    return false;
  }
  out->used_memory = *used;
  out->used_memory_rss = *rss;
  return true;
}

}  // namespace strata::mem
