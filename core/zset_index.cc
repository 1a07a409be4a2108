#include "core/zset_index.h"

#include <mimalloc.h>

#include <cstring>
#include <new>

namespace strata {

namespace {

bool ItemLess(const ScoreIndex::Item& a, double score, std::string_view member) {
  return ScoreIndex::Compare(a.score, a.member(), score, member) < 0;
}

}  // namespace

ScoreIndex::~ScoreIndex() { Clear(); }

void ScoreIndex::Clear() {
  if (root_ != nullptr) FreeTree(root_);
  root_ = nullptr;
  size_ = 0;
}

ScoreIndex::Leaf* ScoreIndex::NewLeaf() {
  void* mem = mi_malloc(sizeof(Leaf));
  if (mem == nullptr) throw std::bad_alloc();
  bytes_ += mi_usable_size(mem);
  return new (mem) Leaf();
}

ScoreIndex::Inner* ScoreIndex::NewInner() {
  void* mem = mi_malloc(sizeof(Inner));
  if (mem == nullptr) throw std::bad_alloc();
  bytes_ += mi_usable_size(mem);
  Inner* in = new (mem) Inner();
  in->leaf = false;
  return in;
}

void ScoreIndex::FreeNode(Node* n) {
  bytes_ -= mi_usable_size(n);
  mi_free(n);
}

void ScoreIndex::FreeTree(Node* n) {
  if (!n->leaf) {
    Inner* in = static_cast<Inner*>(n);
    for (uint32_t i = 0; i < in->n; i++) FreeTree(in->child[i]);
  }
  FreeNode(n);
}

size_t ScoreIndex::NodeCount(const Node* n) {
  if (n->leaf) return n->n;
  const Inner* in = static_cast<const Inner*>(n);
  size_t c = 0;
  for (uint32_t i = 0; i < in->n; i++) c += in->counts[i];
  return c;
}

const ScoreIndex::Item& ScoreIndex::NodeMax(const Node* n) {
  if (n->leaf) return static_cast<const Leaf*>(n)->items[n->n - 1];
  const Inner* in = static_cast<const Inner*>(n);
  return in->maxes[in->n - 1];
}

// ---- insert ----

void ScoreIndex::Insert(double score, Entry* e) {
  Item it{score, e};
  if (root_ == nullptr) root_ = NewLeaf();
  Node* right = InsertRec(root_, it);
  size_++;
  if (right != nullptr) {
    Inner* r = NewInner();
    r->n = 2;
    r->child[0] = root_;
    r->child[1] = right;
    r->counts[0] = NodeCount(root_);
    r->counts[1] = NodeCount(right);
    r->maxes[0] = NodeMax(root_);
    r->maxes[1] = NodeMax(right);
    root_ = r;
  }
}

ScoreIndex::Node* ScoreIndex::InsertLeaf(Leaf* l, const Item& it) {
  std::string_view m = it.member();
  uint32_t lo = 0, hi = l->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (ItemLess(l->items[mid], it.score, m)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  uint32_t pos = lo;
  if (l->n < kLeafCap) {
    std::memmove(&l->items[pos + 1], &l->items[pos], (l->n - pos) * sizeof(Item));
    l->items[pos] = it;
    l->n++;
    return nullptr;
  }
  // Full: split. Appending past the last leaf or prepending before the first keeps the
  // old leaf full, so sets built in order fill their leaves.
  Leaf* r = NewLeaf();
  uint32_t split;
  if (l->next == nullptr && pos == l->n) {
    split = l->n;
  } else if (l->prev == nullptr && pos == 0) {
    split = 0;
  } else {
    split = l->n / 2;
  }
  r->n = static_cast<uint16_t>(l->n - split);
  std::memcpy(&r->items[0], &l->items[split], r->n * sizeof(Item));
  l->n = static_cast<uint16_t>(split);
  r->next = l->next;
  r->prev = l;
  if (l->next != nullptr) l->next->prev = r;
  l->next = r;
  Leaf* target;
  uint32_t at;
  if (pos < split || (pos == split && l->n < kLeafCap)) {
    target = l;
    at = pos;
  } else {
    target = r;
    at = pos - split;
  }
  std::memmove(&target->items[at + 1], &target->items[at], (target->n - at) * sizeof(Item));
  target->items[at] = it;
  target->n++;
  return r;
}

bool ScoreIndex::ShiftToNeighbour(Inner* p, uint32_t i) {
  Leaf* l = static_cast<Leaf*>(p->child[i]);
  if (i > 0) {
    Leaf* left = static_cast<Leaf*>(p->child[i - 1]);
    uint32_t room = kLeafCap - left->n;
    if (room > 0) {
      uint32_t k = (room + 1) / 2;
      std::memcpy(&left->items[left->n], &l->items[0], k * sizeof(Item));
      left->n = static_cast<uint16_t>(left->n + k);
      std::memmove(&l->items[0], &l->items[k], (l->n - k) * sizeof(Item));
      l->n = static_cast<uint16_t>(l->n - k);
      p->counts[i - 1] += k;
      p->counts[i] -= k;
      p->maxes[i - 1] = left->items[left->n - 1];
      return true;
    }
  }
  if (i + 1 < p->n) {
    Leaf* right = static_cast<Leaf*>(p->child[i + 1]);
    uint32_t room = kLeafCap - right->n;
    if (room > 0) {
      uint32_t k = (room + 1) / 2;
      std::memmove(&right->items[k], &right->items[0], right->n * sizeof(Item));
      std::memcpy(&right->items[0], &l->items[l->n - k], k * sizeof(Item));
      right->n = static_cast<uint16_t>(right->n + k);
      l->n = static_cast<uint16_t>(l->n - k);
      p->counts[i + 1] += k;
      p->counts[i] -= k;
      p->maxes[i] = l->items[l->n - 1];
      return true;
    }
  }
  return false;
}

ScoreIndex::Node* ScoreIndex::InsertRec(Node* n, const Item& it) {
  if (n->leaf) return InsertLeaf(static_cast<Leaf*>(n), it);
  Inner* in = static_cast<Inner*>(n);
  std::string_view m = it.member();
  uint32_t i = 0;
  while (i + 1 < in->n && ItemLess(in->maxes[i], it.score, m)) i++;
  Node* c = in->child[i];
  if (c->leaf && c->n == kLeafCap && ShiftToNeighbour(in, i)) {
    // The item now belongs to the left neighbour when it sorts before that one's new
    // largest item, or to the right one when it sorts after this leaf's new largest.
    if (i > 0 && !ItemLess(in->maxes[i - 1], it.score, m)) {
      i--;
    } else if (i + 1 < in->n && ItemLess(in->maxes[i], it.score, m)) {
      i++;
    }
    c = in->child[i];
  }
  Node* right = InsertRec(c, it);
  in->counts[i]++;
  in->maxes[i] = NodeMax(c);
  if (right == nullptr) return nullptr;
  in->counts[i] = NodeCount(c);
  uint32_t at = i + 1;
  Inner* target = in;
  Inner* split = nullptr;
  if (in->n == kInnerCap) {
    split = NewInner();
    uint32_t half = in->n / 2;
    split->n = static_cast<uint16_t>(in->n - half);
    std::memcpy(split->counts, &in->counts[half], split->n * sizeof(uint64_t));
    std::memcpy(split->maxes, &in->maxes[half], split->n * sizeof(Item));
    std::memcpy(split->child, &in->child[half], split->n * sizeof(Node*));
    in->n = static_cast<uint16_t>(half);
    if (at > half) {
      target = split;
      at -= half;
    }
  }
  uint32_t tail = target->n - at;
  std::memmove(&target->counts[at + 1], &target->counts[at], tail * sizeof(uint64_t));
  std::memmove(&target->maxes[at + 1], &target->maxes[at], tail * sizeof(Item));
  std::memmove(&target->child[at + 1], &target->child[at], tail * sizeof(Node*));
  target->counts[at] = NodeCount(right);
  target->maxes[at] = NodeMax(right);
  target->child[at] = right;
  target->n++;
  return split;
}

// ---- erase ----

bool ScoreIndex::Erase(double score, const Entry* e) {
  if (root_ == nullptr) return false;
  if (!EraseRec(root_, score, e)) return false;
  size_--;
  if (root_->n == 0) {
    FreeNode(root_);
    root_ = nullptr;
  } else if (!root_->leaf && root_->n == 1) {
    Inner* old = static_cast<Inner*>(root_);
    root_ = old->child[0];
    FreeNode(old);
  }
  return true;
}

void ScoreIndex::RemoveChild(Inner* p, uint32_t i) {
  Node* c = p->child[i];
  if (c->leaf) {
    Leaf* l = static_cast<Leaf*>(c);
    if (l->prev != nullptr) l->prev->next = l->next;
    if (l->next != nullptr) l->next->prev = l->prev;
  }
  FreeNode(c);
  uint32_t tail = p->n - i - 1;
  std::memmove(&p->counts[i], &p->counts[i + 1], tail * sizeof(uint64_t));
  std::memmove(&p->maxes[i], &p->maxes[i + 1], tail * sizeof(Item));
  std::memmove(&p->child[i], &p->child[i + 1], tail * sizeof(Node*));
  p->n--;
}

bool ScoreIndex::EraseRec(Node* n, double score, const Entry* e) {
  std::string_view m = e->Key();
  if (n->leaf) {
    Leaf* l = static_cast<Leaf*>(n);
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
      uint32_t mid = (lo + hi) / 2;
      if (ItemLess(l->items[mid], score, m)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo >= l->n || l->items[lo].e != e || l->items[lo].score != score) return false;
    std::memmove(&l->items[lo], &l->items[lo + 1], (l->n - lo - 1) * sizeof(Item));
    l->n--;
    return true;
  }
  Inner* in = static_cast<Inner*>(n);
  uint32_t i = 0;
  while (i < in->n && ItemLess(in->maxes[i], score, m)) i++;
  if (i == in->n) return false;
  Node* c = in->child[i];
  if (!EraseRec(c, score, e)) return false;
  in->counts[i]--;
  if (c->n == 0) {
    RemoveChild(in, i);
    return true;
  }
  in->maxes[i] = NodeMax(c);
  Rebalance(in, i);
  return true;
}

void ScoreIndex::Rebalance(Inner* p, uint32_t i) {
  Node* c = p->child[i];
  uint32_t cap = c->leaf ? kLeafCap : kInnerCap;
  if (c->n >= cap / 4 || p->n < 2) return;
  uint32_t a = i + 1 < p->n ? i : i - 1;  // merge or balance children a and a + 1
  Node* x = p->child[a];
  Node* y = p->child[a + 1];
  uint32_t total = x->n + y->n;
  uint32_t want_x = total <= cap ? total : total / 2;  // x's size afterwards
  if (x->leaf) {
    Leaf* lx = static_cast<Leaf*>(x);
    Leaf* ly = static_cast<Leaf*>(y);
    if (want_x > lx->n) {
      uint32_t k = want_x - lx->n;
      std::memcpy(&lx->items[lx->n], &ly->items[0], k * sizeof(Item));
      std::memmove(&ly->items[0], &ly->items[k], (ly->n - k) * sizeof(Item));
      lx->n = static_cast<uint16_t>(lx->n + k);
      ly->n = static_cast<uint16_t>(ly->n - k);
      p->counts[a] += k;
      p->counts[a + 1] -= k;
    } else if (want_x < lx->n) {
      uint32_t k = lx->n - want_x;
      std::memmove(&ly->items[k], &ly->items[0], ly->n * sizeof(Item));
      std::memcpy(&ly->items[0], &lx->items[want_x], k * sizeof(Item));
      lx->n = static_cast<uint16_t>(want_x);
      ly->n = static_cast<uint16_t>(ly->n + k);
      p->counts[a] -= k;
      p->counts[a + 1] += k;
    }
  } else {
    Inner* ix = static_cast<Inner*>(x);
    Inner* iy = static_cast<Inner*>(y);
    if (want_x > ix->n) {
      uint32_t k = want_x - ix->n;
      uint64_t moved = 0;
      for (uint32_t j = 0; j < k; j++) moved += iy->counts[j];
      std::memcpy(&ix->counts[ix->n], &iy->counts[0], k * sizeof(uint64_t));
      std::memcpy(&ix->maxes[ix->n], &iy->maxes[0], k * sizeof(Item));
      std::memcpy(&ix->child[ix->n], &iy->child[0], k * sizeof(Node*));
      uint32_t rest = iy->n - k;
      std::memmove(&iy->counts[0], &iy->counts[k], rest * sizeof(uint64_t));
      std::memmove(&iy->maxes[0], &iy->maxes[k], rest * sizeof(Item));
      std::memmove(&iy->child[0], &iy->child[k], rest * sizeof(Node*));
      ix->n = static_cast<uint16_t>(ix->n + k);
      iy->n = static_cast<uint16_t>(rest);
      p->counts[a] += moved;
      p->counts[a + 1] -= moved;
    } else if (want_x < ix->n) {
      uint32_t k = ix->n - want_x;
      uint64_t moved = 0;
      for (uint32_t j = want_x; j < ix->n; j++) moved += ix->counts[j];
      std::memmove(&iy->counts[k], &iy->counts[0], iy->n * sizeof(uint64_t));
      std::memmove(&iy->maxes[k], &iy->maxes[0], iy->n * sizeof(Item));
      std::memmove(&iy->child[k], &iy->child[0], iy->n * sizeof(Node*));
      std::memcpy(&iy->counts[0], &ix->counts[want_x], k * sizeof(uint64_t));
      std::memcpy(&iy->maxes[0], &ix->maxes[want_x], k * sizeof(Item));
      std::memcpy(&iy->child[0], &ix->child[want_x], k * sizeof(Node*));
      ix->n = static_cast<uint16_t>(want_x);
      iy->n = static_cast<uint16_t>(iy->n + k);
      p->counts[a] -= moved;
      p->counts[a + 1] += moved;
    }
  }
  p->maxes[a] = NodeMax(x);
  if (y->n == 0) {
    p->maxes[a] = NodeMax(x);
    RemoveChild(p, a + 1);
  } else {
    p->maxes[a + 1] = NodeMax(y);
  }
}

// ---- queries ----

size_t ScoreIndex::Rank(double score, const Entry* e) const {
  std::string_view m = e->Key();
  return CountWhile([&](const Item& it) { return ItemLess(it, score, m); });
}

ScoreIndex::Pos ScoreIndex::Seek(size_t r) const {
  const Node* n = root_;
  while (!n->leaf) {
    const Inner* in = static_cast<const Inner*>(n);
    uint32_t i = 0;
    while (i + 1 < in->n && r >= in->counts[i]) r -= in->counts[i++];
    n = in->child[i];
  }
  return Pos{const_cast<Leaf*>(static_cast<const Leaf*>(n)), static_cast<uint32_t>(r)};
}

bool ScoreIndex::Next(Pos* p) {
  if (p->i + 1 < p->leaf->n) {
    p->i++;
    return true;
  }
  p->leaf = p->leaf->next;
  p->i = 0;
  return p->leaf != nullptr;
}

bool ScoreIndex::Prev(Pos* p) {
  if (p->i > 0) {
    p->i--;
    return true;
  }
  p->leaf = p->leaf->prev;
  p->i = p->leaf != nullptr ? p->leaf->n - 1u : 0;
  return p->leaf != nullptr;
}

// ---- checks ----

bool ScoreIndex::ValidRec(const Node* n, size_t* count, const Item** max,
                          const Leaf** prev_leaf) const {
  if (n->leaf) {
    const Leaf* l = static_cast<const Leaf*>(n);
    if (l->n == 0 || l->n > kLeafCap) return false;
    if (l->prev != *prev_leaf) return false;
    if (*prev_leaf != nullptr && (*prev_leaf)->next != l) return false;
    for (uint32_t i = 0; i < l->n; i++) {
      const Item& it = l->items[i];
      if (*max != nullptr && Compare((*max)->score, (*max)->member(), it.score, it.member()) >= 0)
        return false;
      *max = &it;
    }
    *prev_leaf = l;
    *count = l->n;
    return true;
  }
  const Inner* in = static_cast<const Inner*>(n);
  if (in->n == 0 || in->n > kInnerCap || (n != root_ && in->n < 1)) return false;
  size_t total = 0;
  for (uint32_t i = 0; i < in->n; i++) {
    size_t c = 0;
    if (!ValidRec(in->child[i], &c, max, prev_leaf)) return false;
    if (c != in->counts[i]) return false;
    if ((*max)->e != in->maxes[i].e || (*max)->score != in->maxes[i].score) return false;
    total += c;
  }
  *count = total;
  return true;
}

bool ScoreIndex::Valid() const {
  if (root_ == nullptr) return size_ == 0;
  size_t count = 0;
  const Item* max = nullptr;
  const Leaf* prev = nullptr;
  if (!ValidRec(root_, &count, &max, &prev)) return false;
  if (prev->next != nullptr) return false;
  if (!root_->leaf && root_->n < 2) return false;
  return count == size_;
}

}  // namespace strata
