#include "core/list_type.h"

#include <malloc.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/ascii7.h"
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

// Two kinds of node:
//   kVar:   elements encoded [varint len][bytes][varint len reversed] between the byte
//           offsets begin..end of data[], free bytes at both ends.
//   kFixed: every element is `width` characters below 0x80; slot i holds characters
//           [i * width, (i + 1) * width) of an ascii7 stream (16 characters in 14
//           bytes, core/ascii7.h), begin..end are slot indexes, free slots at both ends.
//           A run of equal-length text elements (ids, timestamps, hashes, fixed-size
//           payloads) costs 7/8 of its characters and nothing per element.
// A node is fixed when its first element allows it; an element that does not fit a
// fixed end node turns that node into a kVar one while it is small, or starts a new
// node, so mixed lists settle into kVar nodes.
struct ListObject::Node {
  uint32_t cap;    // kVar: bytes of data[]; kFixed: slots
  uint32_t begin;  // kVar: first used byte; kFixed: first used slot
  uint32_t end;    // one past the last used byte / slot
  uint32_t count;  // elements
  uint8_t kind;
  uint8_t width;  // kFixed: characters per element
  char data[];
  size_t used() const { return end - begin; }
};

namespace {

constexpr uint8_t kVar = 0;
constexpr uint8_t kFixed = 1;
// A zstd frame of a node's image: cap = the block's bytes, end = the image's bytes, count
// = the node's elements (walks count without inflating).
constexpr uint8_t kLz4 = 2;
constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinCompressSaving = 8;
constexpr int kZstdLevel = 1;

// The shard thread's zstd contexts, made on its first compressed list and freed with it.
struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
  static ZstdContexts& Get() {
    thread_local ZstdContexts t;
    return t;
  }
};

// A kVar node holding one element at least list_packed_threshold long: it takes no
// other element (width is otherwise unused by kVar nodes).
constexpr uint8_t kPlainMark = 1;

bool IsLarge(size_t len) {
  return len >= static_cast<uint64_t>(
                    GlobalEncodingLimits().list_packed_threshold.load(std::memory_order_relaxed));
}

size_t CompressDepth() {
  int64_t d = GlobalEncodingLimits().list_compress_depth.load(std::memory_order_relaxed);
  return d > 0 ? static_cast<size_t>(d) : 0;
}
constexpr size_t kFixedWidthMax = 64;
constexpr uint32_t kFixedConvertBelow = 32;
constexpr size_t kGroupChars = 16;
constexpr size_t kGroupBytes = 14;

bool FixedEligible(std::string_view v) {
  return !v.empty() && v.size() <= kFixedWidthMax && ascii7::IsAscii(v);
}

size_t FixedDataBytes(size_t slots, size_t width) {
  return (slots * width + kGroupChars - 1) / kGroupChars * kGroupBytes;
}

bool CountAllows(uint32_t count) {
  int64_t s = GlobalEncodingLimits().list_max_listpack_size.load(std::memory_order_relaxed);
  return s <= 0 || count < static_cast<uint64_t>(s);
}

}  // namespace

// The groups of a fixed node that hold slot `slot`, unpacked into tmp; returns the
// offset of the slot's first character in tmp. Sets *g0/*ngroups for WriteBack.
static size_t LoadSlot(const ListObject::Node* n, size_t slot, char* tmp, size_t* g0,
                       size_t* ngroups) {
  size_t c0 = slot * n->width;
  *g0 = c0 / kGroupChars;
  size_t g1 = (c0 + n->width - 1) / kGroupChars;
  *ngroups = g1 - *g0 + 1;
  ascii7::Unpack(n->data + *g0 * kGroupBytes, *ngroups * kGroupChars, tmp);
  return c0 - *g0 * kGroupChars;
}

static std::string_view ReadSlot(const ListObject::Node* n, size_t slot, char* buf) {
  char tmp[(kFixedWidthMax / kGroupChars + 2) * kGroupChars];
  size_t g0, ng;
  size_t off = LoadSlot(n, slot, tmp, &g0, &ng);
  std::memcpy(buf, tmp + off, n->width);
  return {buf, n->width};
}

static void WriteSlot(ListObject::Node* n, size_t slot, std::string_view v) {
  char tmp[(kFixedWidthMax / kGroupChars + 2) * kGroupChars];
  size_t g0, ng;
  size_t off = LoadSlot(n, slot, tmp, &g0, &ng);
  std::memcpy(tmp + off, v.data(), v.size());
  ascii7::Pack(std::string_view(tmp, ng * kGroupChars), n->data + g0 * kGroupBytes);
}

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
  n->cap = static_cast<uint32_t>(data_cap);
  n->begin = n->end = at_front ? n->cap : 0;
  n->count = 0;
  n->kind = kVar;
  n->width = 0;
  node_bytes_ += malloc_usable_size(mem);
  return n;
}

ListObject::Node* ListObject::NewFixedNode(size_t width, bool at_front) {
  size_t budget = NodeLimit() - sizeof(Node);
  size_t slots = budget / kGroupBytes * kGroupChars / width;
  int64_t s = GlobalEncodingLimits().list_max_listpack_size.load(std::memory_order_relaxed);
  if (s > 0) slots = std::min<size_t>(slots, static_cast<size_t>(s));
  Node* n = NewNode(FixedDataBytes(slots, width), at_front);
  std::memset(n->data, 0, n->cap);
  n->cap = static_cast<uint32_t>(slots);
  n->begin = n->end = at_front ? n->cap : 0;
  n->kind = kFixed;
  n->width = static_cast<uint8_t>(width);
  return n;
}

void ListObject::FreeNode(Node* n) {
  node_bytes_ -= malloc_usable_size(n);
  std::free(n);
}

namespace {
struct FreeDeleter {
  void operator()(ListObject::Node* n) const { std::free(n); }
};
using TempNode = std::unique_ptr<ListObject::Node, FreeDeleter>;

// A node as readers use it: itself, or (compressed) a plain copy held by *keep.
const ListObject::Node* Readable(const ListObject::Node* n, TempNode* keep);
}  // namespace

ListObject::Node* ListObject::Inflate(const Node* z) {
  ZSTD_DCtx* ctx = ZstdContexts::Get().d;
  size_t raw = z->end;
  void* mem = std::malloc(raw);
  if (mem == nullptr) throw std::bad_alloc();
  size_t got = ZSTD_decompressDCtx(ctx, mem, raw, z->data, z->cap);
  if (ZSTD_isError(got) || got != raw) {
    // Our own block: only memory corruption gets here.
    std::fprintf(stderr, "list node: corrupt compressed block\n");
    std::abort();
  }
  return static_cast<Node*>(mem);
}

ListObject::Node* ListObject::Deflate(const Node* n) {
  // The image: the header and the used bytes (a fixed node's slots are addressed by
  // index, so all of its data; its free slots are zeros).
  size_t data_bytes = n->kind == kFixed ? FixedDataBytes(n->cap, n->width) : n->used();
  size_t raw = sizeof(Node) + data_bytes;
  if (raw < kMinCompressBytes) return nullptr;
  std::string image(raw, '\0');
  Node* h = reinterpret_cast<Node*>(image.data());
  *h = *n;
  if (n->kind == kFixed) {
    std::memcpy(h->data, n->data, data_bytes);
  } else {
    h->cap = static_cast<uint32_t>(data_bytes);
    h->begin = 0;
    h->end = static_cast<uint32_t>(data_bytes);
    std::memcpy(h->data, n->data + n->begin, data_bytes);
  }
  ZSTD_CCtx* ctx = ZstdContexts::Get().c;
  std::string block(ZSTD_compressBound(raw), '\0');
  size_t len = ZSTD_compressCCtx(ctx, block.data(), block.size(), image.data(), raw, kZstdLevel);
  if (ZSTD_isError(len) || len + sizeof(Node) + kMinCompressSaving > raw) return nullptr;
  void* mem = std::malloc(sizeof(Node) + static_cast<size_t>(len));
  if (mem == nullptr) throw std::bad_alloc();
  Node* z = static_cast<Node*>(mem);
  z->cap = static_cast<uint32_t>(len);
  z->begin = 0;
  z->end = static_cast<uint32_t>(raw);
  z->count = n->count;
  z->kind = kLz4;
  z->width = 0;
  std::memcpy(z->data, block.data(), static_cast<size_t>(len));
  return z;
}

void ListObject::EnsurePlain(size_t i) {
  Node* z = nodes_[i];
  if (z->kind != kLz4) return;
  Node* n = Inflate(z);
  node_bytes_ += malloc_usable_size(n);
  ReplaceNode(i, n);
}

void ListObject::CompressIfInner(size_t i) {
  size_t d = CompressDepth();
  if (d == 0 || i < d || i + d >= nodes_.size()) return;
  Node* n = nodes_[i];
  if (n->kind == kLz4) return;
  Node* z = Deflate(n);
  if (z == nullptr) return;
  node_bytes_ += malloc_usable_size(z);
  ReplaceNode(i, z);
}

void ListObject::Rebalance() {
  size_t d = CompressDepth();
  size_t size = nodes_.size();
  // The ends plain (also after the setting changed: a compressed node that reached an end
  // is inflated before anything is pushed to or popped from it).
  size_t ends = std::min(std::max<size_t>(d, 1), size);
  for (size_t i = 0; i < ends; i++) {
    EnsurePlain(i);
    EnsurePlain(size - 1 - i);
  }
  if (d == 0 || size <= 2 * d) return;
  CompressIfInner(d);
  CompressIfInner(size - 1 - d);
}

void ListObject::CompressAll() {
  size_t d = CompressDepth();
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (d == 0 || i < d || i + d >= nodes_.size()) {
      EnsurePlain(i);
    } else {
      CompressIfInner(i);
    }
  }
}

namespace {
const ListObject::Node* Readable(const ListObject::Node* n, TempNode* keep) {
  if (n->kind != kLz4) return n;
  keep->reset(ListObject::Inflate(n));
  return keep->get();
}
}  // namespace

std::vector<std::string> ListObject::NodeElements(const Node* n) {
  TempNode keep;
  n = Readable(n, &keep);
  std::vector<std::string> out;
  out.reserve(n->count);
  if (n->kind == kFixed) {
    char buf[kFixedWidthMax];
    for (uint32_t i = n->begin; i < n->end; i++) out.emplace_back(ReadSlot(n, i, buf));
    return out;
  }
  const char* p = n->data + n->begin;
  for (uint32_t i = 0; i < n->count; i++) {
    const char* next;
    out.emplace_back(DecodeForward(p, &next));
    p = next;
  }
  return out;
}

ListObject::Node* ListObject::BuildVarNode(const std::vector<std::string>& elems) {
  size_t bytes = 0;
  for (const std::string& e : elems) bytes += ElementSize(e.size());
  Node* n = NewNode(std::max(NodeLimit() - sizeof(Node), bytes), false);
  char* w = n->data;
  for (const std::string& e : elems) w = EncodeElement(w, e);
  n->end = static_cast<uint32_t>(w - n->data);
  n->count = static_cast<uint32_t>(elems.size());
  return n;
}

void ListObject::ReplaceNode(size_t index, Node* fresh) {
  FreeNode(nodes_[index]);
  nodes_[index] = fresh;
}

namespace {

bool VarHasRoom(const ListObject::Node* n, size_t esize, size_t limit) {
  return n->width != kPlainMark && CountAllows(n->count) &&
         n->used() + esize <= limit - sizeof(ListObject::Node);
}

}  // namespace

void ListObject::PushBackPlain(std::string_view v) {
  size_t esize = ElementSize(v.size());
  size_t limit = NodeLimit();
  if (IsLarge(v.size())) [[unlikely]] {
    Node* n = NewNode(esize, false);
    EncodeElement(n->data, v);
    n->end = static_cast<uint32_t>(esize);
    n->count = 1;
    n->width = kPlainMark;
    nodes_.push_back(n);
    count_++;
    return;
  }
  Node* n = nodes_.empty() ? nullptr : nodes_.back();
  if (n != nullptr && n->kind == kFixed) {
    if (v.size() == n->width && n->end < n->cap && CountAllows(n->count) && FixedEligible(v)) {
      WriteSlot(n, n->end, v);
      n->end++;
      n->count++;
      count_++;
      return;
    }
    if (n->count < kFixedConvertBelow) {
      ReplaceNode(nodes_.size() - 1, BuildVarNode(NodeElements(n)));
      n = nodes_.back();
    } else {
      n = nullptr;
    }
  }
  if (n == nullptr || n->kind != kVar || !VarHasRoom(n, esize, limit) || n->end + esize > n->cap) {
    if (FixedEligible(v)) {
      n = NewFixedNode(v.size(), false);
      nodes_.push_back(n);
      WriteSlot(n, 0, v);
      n->end = 1;
      n->count = 1;
      count_++;
      return;
    }
    n = NewNode(std::max(limit - sizeof(Node), esize), false);
    nodes_.push_back(n);
  }
  EncodeElement(n->data + n->end, v);
  n->end += static_cast<uint32_t>(esize);
  n->count++;
  count_++;
}

void ListObject::PushFrontPlain(std::string_view v) {
  size_t esize = ElementSize(v.size());
  size_t limit = NodeLimit();
  if (IsLarge(v.size())) [[unlikely]] {
    Node* n = NewNode(esize, true);
    n->begin = 0;
    EncodeElement(n->data, v);
    n->end = static_cast<uint32_t>(esize);
    n->count = 1;
    n->width = kPlainMark;
    nodes_.push_front(n);
    count_++;
    return;
  }
  Node* n = nodes_.empty() ? nullptr : nodes_.front();
  if (n != nullptr && n->kind == kFixed) {
    if (v.size() == n->width && n->begin > 0 && CountAllows(n->count) && FixedEligible(v)) {
      n->begin--;
      WriteSlot(n, n->begin, v);
      n->count++;
      count_++;
      return;
    }
    if (n->count < kFixedConvertBelow) {
      // Rebuilt with its free space at the front, where this end grows.
      std::vector<std::string> elems = NodeElements(n);
      size_t bytes = 0;
      for (const std::string& e : elems) bytes += ElementSize(e.size());
      Node* fresh = NewNode(std::max(limit - sizeof(Node), bytes + esize), true);
      fresh->begin = static_cast<uint32_t>(fresh->cap - bytes);
      char* w = fresh->data + fresh->begin;
      for (const std::string& e : elems) w = EncodeElement(w, e);
      fresh->count = static_cast<uint32_t>(elems.size());
      ReplaceNode(0, fresh);
      n = fresh;
    } else {
      n = nullptr;
    }
  }
  if (n == nullptr || n->kind != kVar || !VarHasRoom(n, esize, limit) || n->begin < esize) {
    if (FixedEligible(v)) {
      n = NewFixedNode(v.size(), true);
      nodes_.push_front(n);
      n->begin--;
      WriteSlot(n, n->begin, v);
      n->count = 1;
      count_++;
      return;
    }
    n = NewNode(std::max(limit - sizeof(Node), esize), true);
    nodes_.push_front(n);
  }
  n->begin -= static_cast<uint32_t>(esize);
  EncodeElement(n->data + n->begin, v);
  n->count++;
  count_++;
}

std::string ListObject::PopFrontPlain() {
  Node* n = nodes_.front();
  std::string out;
  if (n->kind == kFixed) {
    char buf[kFixedWidthMax];
    out.assign(ReadSlot(n, n->begin, buf));
    n->begin++;
  } else {
    const char* next;
    out.assign(DecodeForward(n->data + n->begin, &next));
    n->begin = static_cast<uint32_t>(next - n->data);
  }
  n->count--;
  count_--;
  if (n->count == 0) {
    FreeNode(n);
    nodes_.pop_front();
  }
  return out;
}

std::string ListObject::PopBackPlain() {
  Node* n = nodes_.back();
  std::string out;
  if (n->kind == kFixed) {
    char buf[kFixedWidthMax];
    out.assign(ReadSlot(n, n->end - 1, buf));
    n->end--;
  } else {
    const char* prev;
    out.assign(DecodeBackward(n->data + n->end, &prev));
    n->end = static_cast<uint32_t>(prev - n->data);
  }
  n->count--;
  count_--;
  if (n->count == 0) {
    FreeNode(n);
    nodes_.pop_back();
  }
  return out;
}

void ListObject::PushBack(std::string_view v) {
  if (!nodes_.empty()) EnsurePlain(nodes_.size() - 1);
  size_t before = nodes_.size();
  PushBackPlain(v);
  if (nodes_.size() != before) Rebalance();
}

void ListObject::PushFront(std::string_view v) {
  if (!nodes_.empty()) EnsurePlain(0);
  size_t before = nodes_.size();
  PushFrontPlain(v);
  if (nodes_.size() != before) Rebalance();
}

std::string ListObject::PopFront() {
  EnsurePlain(0);
  size_t before = nodes_.size();
  std::string out = PopFrontPlain();
  if (nodes_.size() != before && !nodes_.empty()) Rebalance();
  return out;
}

std::string ListObject::PopBack() {
  EnsurePlain(nodes_.size() - 1);
  size_t before = nodes_.size();
  std::string out = PopBackPlain();
  if (nodes_.size() != before && !nodes_.empty()) Rebalance();
  return out;
}

size_t ListObject::CompressedNodes() const {
  size_t n = 0;
  for (const Node* x : nodes_) n += x->kind == kLz4;
  return n;
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
  char buf[kFixedWidthMax];
  if (!reverse) {
    for (; ni < nodes_.size(); ni++, skip = 0) {
      TempNode keep;
      const Node* n = Readable(nodes_[ni], &keep);
      if (n->kind == kFixed) {
        for (uint32_t i = n->begin + static_cast<uint32_t>(skip); i < n->end; i++) {
          if (!fn(ReadSlot(n, i, buf))) return;
        }
        continue;
      }
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
    TempNode keep;
    const Node* n = Readable(nodes_[k], &keep);
    size_t last = k == ni ? skip : n->count - 1;  // index within node to start from
    if (n->kind == kFixed) {
      for (size_t i = last + 1; i-- > 0;) {
        if (!fn(ReadSlot(n, n->begin + i, buf))) return;
      }
      continue;
    }
    const char* p = n->data + n->end;
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
  CompressAll();
}

void ListObject::Set(size_t index, std::string_view v) {
  size_t ni = 0, first = 0;
  while (first + nodes_[ni]->count <= index) first += nodes_[ni++]->count;
  EnsurePlain(ni);
  Node* n = nodes_[ni];
  if (n->kind == kFixed && v.size() == n->width && FixedEligible(v)) {
    WriteSlot(n, n->begin + (index - first), v);
  } else {
    std::vector<std::string> elems = NodeElements(n);
    elems[index - first].assign(v);
    ReplaceNode(ni, BuildVarNode(elems));
  }
  CompressIfInner(ni);
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
