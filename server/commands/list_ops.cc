#include "server/commands/list_ops.h"

#include "core/list_type.h"
#include "server/engine/notify.h"

namespace strata {

namespace {

Entry* FindList(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms, bool* wrong_type) {
  Entry* e = ks.Find(db, key, now_ms);
  *wrong_type = e != nullptr && e->Type() != ValueType::kList;
  return *wrong_type ? nullptr : e;
}

// Stores a small list's new elements (or deletes the key when empty).
void StoreElements(Keyspace& ks, uint32_t db, std::string_view key,
                   const std::vector<std::string>& elems, int64_t expire_ms) {
  if (elems.empty()) {
    ks.Delete(db, key);
    return;
  }
  std::string packed;
  std::unique_ptr<ListObject> obj = BuildList(elems, &packed);
  if (obj != nullptr) {
    ks.SetObject(db, key, ValueType::kList, std::move(obj), expire_ms);
  } else {
    ks.SetRaw(db, key, packed, ValueType::kList, expire_ms);
  }
}

}  // namespace

int64_t OpPush(Keyspace& ks, uint32_t db, std::string_view key, bool left,
               std::span<const std::string_view> elements, bool only_if_exists, int64_t now_ms,
               bool* wrong_type, bool notify) {
  Entry* e = FindList(ks, db, key, now_ms, wrong_type);
  if (*wrong_type || (e == nullptr && only_if_exists)) return 0;
  if (notify) {
    int64_t n = OpPush(ks, db, key, left, elements, only_if_exists, now_ms, wrong_type, false);
    if (n > 0 && !elements.empty())
      NotifyKeyspaceEvent(kNotifyList, left ? "lpush" : "rpush", key, db);
    return n;
  }
  if (e != nullptr && e->IsExternal()) {
    auto* l = static_cast<ListObject*>(e->Object());
    size_t before = l->Bytes();
    for (std::string_view v : elements) left ? l->PushFront(v) : l->PushBack(v);
    ks.Recharge(e, before);
    return static_cast<int64_t>(l->Length());
  }
  std::vector<std::string> elems;
  int64_t expire = Entry::kNoExpire;
  if (e != nullptr) {
    elems = list_access::Elements(e);
    expire = e->ExpireMs();
  }
  if (left) {
    std::vector<std::string> front;
    front.reserve(elements.size() + elems.size());
    for (size_t i = elements.size(); i-- > 0;) front.emplace_back(elements[i]);
    for (std::string& s : elems) front.push_back(std::move(s));
    elems.swap(front);
  } else {
    for (std::string_view v : elements) elems.emplace_back(v);
  }
  StoreElements(ks, db, key, elems, expire);
  return static_cast<int64_t>(elems.size());
}

void NotifyPopped(uint32_t db, std::string_view key, bool left, bool emptied) {
  NotifyKeyspaceEvent(kNotifyList, left ? "lpop" : "rpop", key, db);
  if (emptied) NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db);
}

std::vector<std::string> OpPop(Keyspace& ks, uint32_t db, std::string_view key, bool left, size_t n,
                               int64_t now_ms, bool* wrong_type, bool notify, bool* emptied) {
  std::vector<std::string> out;
  bool gone = false;
  if (emptied == nullptr) emptied = &gone;
  *emptied = false;
  Entry* e = FindList(ks, db, key, now_ms, wrong_type);
  if (e == nullptr || n == 0) return out;
  if (e->IsExternal()) {
    auto* l = static_cast<ListObject*>(e->Object());
    size_t before = l->Bytes();
    while (out.size() < n && l->Length() > 0) out.push_back(left ? l->PopFront() : l->PopBack());
    // Charge the change first: Delete releases the object's bytes as they are now.
    ks.Recharge(e, before);
    *emptied = l->Length() == 0;
    if (*emptied) ks.Delete(db, key);
    if (notify && !out.empty()) NotifyPopped(db, key, left, *emptied);
    return out;
  }
  std::vector<std::string> elems = list_access::Elements(e);
  size_t take = std::min(n, elems.size());
  if (left) {
    for (size_t i = 0; i < take; i++) out.push_back(std::move(elems[i]));
    elems.erase(elems.begin(), elems.begin() + static_cast<std::ptrdiff_t>(take));
  } else {
    for (size_t i = 0; i < take; i++) out.push_back(std::move(elems[elems.size() - 1 - i]));
    elems.resize(elems.size() - take);
  }
  StoreElements(ks, db, key, elems, e->ExpireMs());
  *emptied = elems.empty();
  if (notify && !out.empty()) NotifyPopped(db, key, left, *emptied);
  return out;
}

void OpRewrite(Keyspace& ks, uint32_t db, std::string_view key, Entry* e,
               const std::function<bool(std::vector<std::string>&)>& fn) {
  if (e->IsExternal()) {
    auto* l = static_cast<ListObject*>(e->Object());
    std::vector<std::string> elems = l->Elements();
    if (!fn(elems)) return;
    if (elems.empty()) {
      ks.Delete(db, key);
      return;
    }
    size_t before = l->Bytes();
    l->Assign(elems);
    ks.Recharge(e, before);
    return;
  }
  std::vector<std::string> elems = list_access::Elements(e);
  if (!fn(elems)) return;
  StoreElements(ks, db, key, elems, e->ExpireMs());
}

int64_t OpLength(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms,
                 bool* wrong_type) {
  Entry* e = FindList(ks, db, key, now_ms, wrong_type);
  return e == nullptr ? 0 : static_cast<int64_t>(list_access::Length(e));
}

}  // namespace strata
