// StreamObject's consumer groups: groups, consumers, PEL deliveries, acknowledgements and
// claims (declared in stream_type.h, which describes the structures).
#include <algorithm>

#include "core/stream_type.h"

namespace strata {

namespace {

size_t NameBytes(const std::string& s) {
  static const size_t kInline = std::string().capacity();
  return s.capacity() > kInline ? malloc_usable_size(const_cast<char*>(s.data())) : 0;
}

}  // namespace

StreamGroup* StreamObject::FindGroup(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

const StreamGroup* StreamObject::FindGroup(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

StreamGroup* StreamObject::CreateGroup(std::string_view name, StreamId last_id,
                                       int64_t entries_read) {
  if (groups_.find(name) != groups_.end()) return nullptr;
  auto g = std::make_unique<StreamGroup>(name, &aux_bytes_);
  g->last_id = last_id;
  g->entries_read = entries_read;
  aux_bytes_ += malloc_usable_size(g.get()) + NameBytes(g->name);
  StreamGroup* raw = g.get();
  groups_.emplace(std::string_view(raw->name), std::move(g));
  return raw;
}

void StreamObject::SetGroupId(StreamGroup* g, StreamId last_id, int64_t entries_read) {
  g->last_id = last_id;
  g->entries_read = entries_read;
}

void StreamObject::DestroyGroupObject(std::unique_ptr<StreamGroup> g) {
  for (auto& [name, c] : g->consumers) {
    aux_bytes_ -= malloc_usable_size(c.get()) + NameBytes(c->name);
  }
  aux_bytes_ -= malloc_usable_size(g.get()) + NameBytes(g->name);
  g.reset();  // the maps and sets give their blocks back through their allocators
}

bool StreamObject::DestroyGroup(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  std::unique_ptr<StreamGroup> g = std::move(it->second);
  groups_.erase(it);
  DestroyGroupObject(std::move(g));
  return true;
}

StreamConsumer* StreamObject::FindConsumer(StreamGroup* g, std::string_view name) {
  auto it = g->consumers.find(name);
  return it == g->consumers.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamObject::CreateConsumer(StreamGroup* g, std::string_view name,
                                             int64_t now_ms) {
  if (g->consumers.find(name) != g->consumers.end()) return nullptr;
  auto c = std::make_unique<StreamConsumer>(name, &aux_bytes_);
  c->seen_ms = now_ms;
  aux_bytes_ += malloc_usable_size(c.get()) + NameBytes(c->name);
  StreamConsumer* raw = c.get();
  g->consumers.emplace(std::string_view(raw->name), std::move(c));
  return raw;
}

StreamConsumer* StreamObject::TouchConsumer(StreamGroup* g, std::string_view name, int64_t now_ms,
                                            bool* created) {
  StreamConsumer* c = FindConsumer(g, name);
  if (created != nullptr) *created = c == nullptr;
  if (c == nullptr) c = CreateConsumer(g, name, now_ms);
  c->seen_ms = now_ms;
  return c;
}

size_t StreamObject::DeleteConsumer(StreamGroup* g, std::string_view name) {
  auto it = g->consumers.find(name);
  if (it == g->consumers.end()) return 0;
  StreamConsumer* c = it->second.get();
  size_t pending = c->pending.size();
  for (StreamId id : c->pending) g->pel.erase(id);
  aux_bytes_ -= malloc_usable_size(c) + NameBytes(c->name);
  g->consumers.erase(it);
  return pending;
}

void StreamObject::RemovePending(StreamGroup* g, StreamPel::iterator it) {
  if (it->second.consumer != nullptr) it->second.consumer->pending.erase(it->first);
  g->pel.erase(it);
}

void StreamObject::Deliver(StreamGroup* g, StreamConsumer* c, StreamId id, int64_t now_ms) {
  auto [it, inserted] = g->pel.try_emplace(id);
  StreamPending& p = it->second;
  if (inserted || p.consumer != c) {
    // Taken from another consumer: possible after XGROUP SETID moved the group back.
    if (!inserted && p.consumer != nullptr) p.consumer->pending.erase(id);
    c->pending.insert(id);
  }
  p.consumer = c;
  p.delivery_ms = now_ms;
  p.delivery_count = 1;
}

size_t StreamObject::ReadGroupNew(StreamGroup* g, StreamConsumer* c, size_t count, bool noack,
                                  int64_t now_ms,
                                  const std::function<void(const StreamEntry&)>& fn) {
  StreamId start = g->last_id;
  if (!start.Increment()) return 0;
  size_t delivered = 0;
  for (StreamIterator it = Range(start, StreamId::Max()); it.Valid(); it.Next()) {
    StreamId id = it.id();
    if (id > g->last_id) {
      if (g->entries_read != -1 && g->last_id >= first_id_ &&
          !RangeHasTombstones(g->last_id, StreamId::Max())) {
        // A valid counter and nothing deleted ahead: one more entry read.
        g->entries_read++;
      } else if (entries_added_ != 0) {
        g->entries_read = EstimateEntriesRead(id);
      }
      g->last_id = id;
    }
    fn(it.entry());
    if (!noack) {
      Deliver(g, c, id, now_ms);
      c->active_ms = now_ms;
    }
    delivered++;
    if (count != 0 && delivered == count) break;
  }
  return delivered;
}

size_t StreamObject::ReadGroupHistory(StreamGroup* g, StreamConsumer* c, StreamId start,
                                      size_t count, int64_t now_ms,
                                      const std::function<void(StreamId, const StreamEntry*)>& fn) {
  size_t served = 0;
  for (auto it = c->pending.lower_bound(start);
       it != c->pending.end() && (count == 0 || served < count); ++it) {
    StreamId id = *it;
    StreamIterator e = Range(id, id);
    if (e.Valid()) {
      fn(id, &e.entry());
      StreamPending& p = g->pel.find(id)->second;
      p.delivery_ms = now_ms;
      p.delivery_count++;
    } else {
      fn(id, nullptr);
    }
    served++;
  }
  return served;
}

bool StreamObject::Ack(StreamGroup* g, StreamId id) {
  auto it = g->pel.find(id);
  if (it == g->pel.end()) return false;
  RemovePending(g, it);
  return true;
}

StreamPendingSummary StreamObject::PendingSummary(const StreamGroup& g) const {
  StreamPendingSummary s;
  s.count = g.pel.size();
  if (s.count == 0) return s;
  s.min = g.pel.begin()->first;
  s.max = std::prev(g.pel.end())->first;
  for (const auto& [name, c] : g.consumers) {
    if (!c->pending.empty()) s.consumers.emplace_back(name, c->pending.size());
  }
  return s;
}

void StreamObject::PendingRange(const StreamGroup& g, const StreamConsumer* c, StreamId start,
                                StreamId end, size_t count, int64_t min_idle_ms, int64_t now_ms,
                                std::vector<StreamPendingLine>* out) const {
  auto emit = [&](StreamId id, const StreamPending& p) {
    if (min_idle_ms != 0 && now_ms - p.delivery_ms < min_idle_ms) return;
    int64_t idle = std::max<int64_t>(0, now_ms - p.delivery_ms);
    out->push_back(StreamPendingLine{id, p.consumer->name, idle, p.delivery_count});
    count--;
  };
  if (c != nullptr) {
    for (auto it = c->pending.lower_bound(start); count > 0 && it != c->pending.end() && *it <= end;
         ++it) {
      emit(*it, g.pel.find(*it)->second);
    }
    return;
  }
  for (auto it = g.pel.lower_bound(start); count > 0 && it != g.pel.end() && it->first <= end;
       ++it) {
    emit(it->first, it->second);
  }
}

void StreamObject::Claim(StreamGroup* g, StreamConsumer* c, std::span<const StreamId> ids,
                         const StreamClaimOptions& opts, int64_t now_ms,
                         std::vector<StreamId>* claimed, std::vector<StreamId>* dropped) {
  if (opts.last_id > g->last_id) g->last_id = opts.last_id;
  int64_t delivery_ms = opts.delivery_ms;
  if (delivery_ms < 0 || delivery_ms > now_ms) delivery_ms = now_ms;
  for (StreamId id : ids) {
    auto it = g->pel.find(id);
    if (!Contains(id)) {
      // The entry is gone (deleted or trimmed): its PEL entry goes too.
      if (it != g->pel.end()) {
        RemovePending(g, it);
        dropped->push_back(id);
      }
      continue;
    }
    if (it == g->pel.end()) {
      if (!opts.force) continue;
      it = g->pel.emplace(id, StreamPending{now_ms, 1, nullptr}).first;
    }
    StreamPending& p = it->second;
    if (p.consumer != nullptr && opts.min_idle_ms > 0 &&
        now_ms - p.delivery_ms < opts.min_idle_ms) {
      continue;
    }
    if (p.consumer != c) {
      if (p.consumer != nullptr) p.consumer->pending.erase(id);
      c->pending.insert(id);
      p.consumer = c;
    }
    p.delivery_ms = delivery_ms;
    if (opts.retry_count >= 0) {
      p.delivery_count = static_cast<uint64_t>(opts.retry_count);
    } else if (!opts.justid) {
      p.delivery_count++;
    }
    claimed->push_back(id);
    c->active_ms = now_ms;
  }
}

void StreamObject::AutoClaim(StreamGroup* g, StreamConsumer* c, StreamId start, size_t count,
                             int64_t min_idle_ms, bool justid, int64_t now_ms,
                             StreamAutoClaimResult* out) {
  constexpr size_t kAttemptsFactor = 10;
  size_t attempts = count > SIZE_MAX / kAttemptsFactor ? SIZE_MAX : count * kAttemptsFactor;
  auto it = g->pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != g->pel.end()) {
    StreamId id = it->first;
    if (!Contains(id)) {
      auto next = std::next(it);
      RemovePending(g, it);
      it = next;
      out->deleted.push_back(id);
      count--;
      continue;
    }
    StreamPending& p = it->second;
    if (min_idle_ms > 0 && now_ms - p.delivery_ms < min_idle_ms) {
      ++it;
      continue;
    }
    if (p.consumer != c) {
      if (p.consumer != nullptr) p.consumer->pending.erase(id);
      c->pending.insert(id);
      p.consumer = c;
    }
    p.delivery_ms = now_ms;
    if (!justid) p.delivery_count++;
    out->claimed.push_back(id);
    count--;
    c->active_ms = now_ms;
    ++it;
  }
  out->next = it != g->pel.end() ? it->first : StreamId::Min();
}

}  // namespace strata
