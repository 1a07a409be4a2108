#include "storage/cold_sources.h"

#include <filesystem>
#include <system_error>
#include <utility>

namespace strata {

Status ColdSources::Open(const std::vector<std::string>& checkpoints, const std::string& work_root,
                         const ColdStoreOptions& options, ColdCache* cache,
                         std::unique_ptr<ColdSources>* out) {
  std::unique_ptr<ColdSources> s(new ColdSources());
  s->stores_.resize(checkpoints.size());
  s->checkpoints_ = checkpoints;
  for (size_t i = 0; i < checkpoints.size(); i++) {
    if (checkpoints[i].empty()) continue;
    std::string dir =
        (std::filesystem::path(work_root) / ("reshard-" + std::to_string(i))).string();
    s->dirs_.push_back(dir);  // removed by the destructor, even when opening fails below
    Status st = ColdStore::RestoreCheckpoint(checkpoints[i], dir);
    if (!st.ok()) return st;
    ColdStoreOptions o = options;
    o.dir = dir;
    st = ColdStore::Open(o, cache, &s->stores_[i]);
    if (!st.ok()) return st;
  }
  *out = std::move(s);
  return Status::Ok();
}

void ColdSources::RemoveStale(const std::string& work_root) {
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(work_root, ec)) {
    if (d.path().filename().string().rfind("reshard-", 0) != 0) continue;
    std::error_code rec;
    std::filesystem::remove_all(d.path(), rec);
  }
}

ColdSources::~ColdSources() {
  stores_.clear();  // closed before their directories go
  for (const std::string& d : dirs_) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}

Status ColdSources::Read(uint32_t source, const std::vector<uint64_t>& seqs,
                         std::vector<std::optional<std::string>>* out) {
  if (source >= stores_.size() || stores_[source] == nullptr) {
    return Status::Corruption("a cold record names the spill store of shard " +
                              std::to_string(source) + ", which the snapshot has no checkpoint of");
  }
  // The blocks are read once each: they are not worth the cache.
  Status s = stores_[source]->MultiGet(seqs, out, /*fill_cache=*/false);
  if (!s.ok())
    return Status::Corruption("the snapshot's spill checkpoint " + checkpoints_[source] + ": " +
                              s.message());
  return s;
}

}  // namespace strata
