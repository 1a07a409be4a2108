#include "core/list_type.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/packed_list.h"

namespace strata {

namespace {

constexpr size_t kNodeBytesMax = 64 * 1024;  // safety cap for positive size settings

size_t ElementSize(size_t len) { return 2 * packed::VarintSize(len) + len; }

// Writes [varint len][bytes][varint len reversed] at p; returns the end.
char* EncodeElement(char* p, std::string_view v) {
  uint8_t var[10];
  size_t n = 0;
  uint64_t len = v.size();
  while (len >= 0x80) {
    var[n++] = static_cast<uint8_t>((len & 0x7f) | 0x80);
    len >>= 7;
  }
  var[n++] = static_cast<uint8_t>(len);
  std::memcpy(p, var, n);
  p += n;
  if (!v.empty()) std::memcpy(p, v.data(), v.size());
  p += v.size();
  for (size_t i = 0; i < n; i++) *p++ = static_cast<char>(var[n - 1 - i]);
  return p;
}

// Decodes the element starting at p; *next receives the position after it.
std::string_view DecodeForward(const char* p, const char** next) {
  uint64_t len = 0;
  int shift = 0;
  size_t n = 0;
  while (true) {
    uint8_t b = static_cast<uint8_t>(p[n++]);
    len |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) break;
    shift += 7;
  }
  *next = p + 2 * n + len;
  return {p + n, static_cast<size_t>(len)};
}

// Decodes the element ending at end; *prev receives its start.
std::string_view DecodeBackward(const char* end, const char** prev) {
  uint64_t len = 0;
  int shift = 0;
  size_t n = 0;
  while (true) {
    uint8_t b = static_cast<uint8_t>(*(end - 1 - n));
    n++;
    len |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) break;
    shift += 7;
  }
  const char* data = end - n - len;
  *prev = data - n;
  return {data, static_cast<size_t>(len)};
}

}  // namespace

struct ListObject::Node {
  uint32_t cap;    // bytes of data[]
  uint32_t begin;  // first used byte
  uint32_t end;    // one past the last used byte
  uint32_t count;  // elements
  char data[];
  size_t used() const { return end - begin; }
};

ListObject::ListObject() = default;

ListObject::~ListObject() {
  for (Node* n : nodes_) FreeNode(n);
}

size_t ListObject::NodeLimit() const {
  int64_t s = GlobalEncodingLimits().list_max_listpack_size.load(std::memory_order_relaxed);
  if (s < 0) return size_t{4096} << std::min<int64_t>(4, -s - 1);
  return kNodeBytesMax;
}

ListObject::Node* ListObject::NewNode(size_t data_cap, bool at_front) {
  void* mem = std::malloc(sizeof(Node) + data_cap);
  if (mem == nullptr) throw std::bad_alloc();
  Node* n = static_cast<Node*>(mem);
  n->cap = static_cast<uint32_t>(malloc_usable_size(mem) - sizeof(Node));
  n->begin = n->end = at_front ? n->cap : 0;
  n->count = 0;
  node_bytes_ += malloc_usable_size(mem);
  return n;
}

void ListObject::FreeNode(Node* n) {
  node_bytes_ -= malloc_usable_size(n);
  std::free(n);
}

namespace {

bool NodeHasRoomFor(size_t used, uint32_t count, size_t esize, size_t limit) {
  int64_t s = GlobalEncodingLimits().list_max_listpack_size.load(std::memory_order_relaxed);
  if (s > 0 && count >= static_cast<uint64_t>(s)) return false;
  return used + esize <= limit;
}

}  // namespace

void ListObject::PushBack(std::string_view v) {
  size_t esize = ElementSize(v.size());
  size_t limit = NodeLimit();
  Node* n = nodes_.empty() ? nullptr : nodes_.back();
  if (n == nullptr || !NodeHasRoomFor(n->used(), n->count, esize, limit) ||
      n->end + esize > n->cap) {
    n = NewNode(std::max(limit, esize), false);
    nodes_.push_back(n);
  }
  EncodeElement(n->data + n->end, v);
  n->end += static_cast<uint32_t>(esize);
  n->count++;
  count_++;
}

void ListObject::PushFront(std::string_view v) {
  size_t esize = ElementSize(v.size());
  size_t limit = NodeLimit();
  Node* n = nodes_.empty() ? nullptr : nodes_.front();
  if (n == nullptr || !NodeHasRoomFor(n->used(), n->count, esize, limit) || n->begin < esize) {
    n = NewNode(std::max(limit, esize), true);
    nodes_.push_front(n);
  }
  n->begin -= static_cast<uint32_t>(esize);
  EncodeElement(n->data + n->begin, v);
  n->count++;
  count_++;
}

std::string ListObject::PopFront() {
  Node* n = nodes_.front();
  const char* next;
  std::string out(DecodeForward(n->data + n->begin, &next));
  n->begin = static_cast<uint32_t>(next - n->data);
  n->count--;
  count_--;
  if (n->count == 0) {
    FreeNode(n);
    nodes_.pop_front();
  }
  return out;
}

std::string ListObject::PopBack() {
  Node* n = nodes_.back();
  const char* prev;
  std::string out(DecodeBackward(n->data + n->end, &prev));
  n->end = static_cast<uint32_t>(prev - n->data);
  n->count--;
  count_--;
  if (n->count == 0) {
    FreeNode(n);
    nodes_.pop_back();
  }
  return out;
}

void ListObject::Walk(size_t start, bool reverse,
                      const std::function<bool(std::string_view)>& fn) const {
  if (start >= count_) return;
  // Find the node holding `start`, from the nearer end.
  size_t ni = 0, first = 0;  // node index and the list index of its first element
  if (start < count_ / 2) {
    while (first + nodes_[ni]->count <= start) first += nodes_[ni++]->count;
  } else {
    ni = nodes_.size() - 1;
    first = count_ - nodes_[ni]->count;
    while (first > start) first -= nodes_[--ni]->count;
  }
  size_t skip = start - first;
  if (!reverse) {
    for (; ni < nodes_.size(); ni++, skip = 0) {
      const Node* n = nodes_[ni];
      const char* p = n->data + n->begin;
      for (uint32_t i = 0; i < n->count; i++) {
        const char* next;
        std::string_view v = DecodeForward(p, &next);
        p = next;
        if (i < skip) continue;
        if (!fn(v)) return;
      }
    }
    return;
  }
  // Reverse: within the first node, element `skip` counted from its front.
  for (size_t k = ni + 1; k-- > 0;) {
    const Node* n = nodes_[k];
    const char* p = n->data + n->end;
    size_t last = k == ni ? skip : n->count - 1;  // index within node to start from
    for (size_t i = n->count; i-- > 0;) {
      const char* prev;
      std::string_view v = DecodeBackward(p, &prev);
      p = prev;
      if (i > last) continue;
      if (!fn(v)) return;
    }
  }
}

std::string ListObject::At(size_t index) const {
  std::string out;
  Walk(index, false, [&](std::string_view v) {
    out.assign(v);
    return false;
  });
  return out;
}

std::vector<std::string> ListObject::Elements() const {
  std::vector<std::string> out;
  out.reserve(count_);
  Walk(0, false, [&](std::string_view v) {
    out.emplace_back(v);
    return true;
  });
  return out;
}

void ListObject::Assign(const std::vector<std::string>& elements) {
  for (Node* n : nodes_) FreeNode(n);
  nodes_.clear();
  count_ = 0;
  for (const std::string& e : elements) PushBack(e);
}

void ListObject::Set(size_t index, std::string_view v) {
  // Re-encode the one node holding index.
  size_t ni = 0, first = 0;
  while (first + nodes_[ni]->count <= index) first += nodes_[ni++]->count;
  Node* n = nodes_[ni];
  std::vector<std::string> elems;
  const char* p = n->data + n->begin;
  for (uint32_t i = 0; i < n->count; i++) {
    const char* next;
    elems.emplace_back(DecodeForward(p, &next));
    p = next;
  }
  elems[index - first].assign(v);
  size_t bytes = 0;
  for (auto& e : elems) bytes += ElementSize(e.size());
  Node* fresh = NewNode(std::max(NodeLimit(), bytes), false);
  char* w = fresh->data;
  for (auto& e : elems) w = EncodeElement(w, e);
  fresh->end = static_cast<uint32_t>(w - fresh->data);
  fresh->count = n->count;
  nodes_[ni] = fresh;
  FreeNode(n);
}

size_t ListObject::Bytes() const {
  // std::deque keeps 512-byte blocks of pointers plus a map of them.
  size_t deque_bytes = (nodes_.size() / 64 + 1) * 512 + 8 * sizeof(void*);
  return malloc_usable_size(const_cast<ListObject*>(this)) + deque_bytes + node_bytes_;
}

size_t ListObject::ReleaseSome(size_t budget) {
  size_t freed = 0;
  while (!nodes_.empty() && freed < budget) {
    Node* n = nodes_.front();
    freed += n->count;
    count_ -= n->count;
    FreeNode(n);
    nodes_.pop_front();
  }
  return count_;
}

void ListObject::Serialize(std::string* out) const {
  packed::Builder b;
  Walk(0, false, [&](std::string_view v) {
    b.Add(v);
    return true;
  });
  out->append(b.Finish());
}

bool ListFitsPacked(size_t count, size_t body_bytes) {
  int64_t s = GlobalEncodingLimits().list_max_listpack_size.load(std::memory_order_relaxed);
  if (s > 0) return count <= static_cast<uint64_t>(s) && body_bytes <= kNodeBytesMax;
  return body_bytes <= (size_t{4096} << std::min<int64_t>(4, -s - 1));
}

namespace list_access {

size_t Length(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Length();
  std::string scratch;
  return packed::Count(e->Value(&scratch));
}

std::vector<std::string> Elements(const Entry* e) {
  if (e->IsExternal()) return static_cast<ListObject*>(e->Object())->Elements();
  std::vector<std::string> out;
  std::string scratch;
  for (packed::Reader r(e->Value(&scratch)); !r.Done(); r.Next()) out.emplace_back(r.Item());
  return out;
}

}  // namespace list_access

std::unique_ptr<ListObject> BuildList(const std::vector<std::string>& elements,
                                      std::string* packed) {
  packed::Builder b;
  for (const std::string& e : elements) b.Add(e);
  packed->clear();
  if (ListFitsPacked(b.count(), b.body_bytes())) {
    *packed = b.Finish();
    return nullptr;
  }
  auto obj = std::make_unique<ListObject>();
  for (const std::string& e : elements) obj->PushBack(e);
  return obj;
}

std::unique_ptr<CollectionObject> MaterializeList(std::string_view serialized, SlabHeap&) {
  size_t body = serialized.size();
  if (ListFitsPacked(packed::Count(serialized), body)) return nullptr;
  auto obj = std::make_unique<ListObject>();
  for (packed::Reader r(serialized); !r.Done(); r.Next()) obj->PushBack(r.Item());
  return obj;
}

}  // namespace strata
