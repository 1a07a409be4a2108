// ScoreIndex: the order of a big sorted set's members, a B+tree of (score, member entry)
// items that also knows how many items each subtree holds.
//
// Owns: its nodes (one mimalloc block each). It does not own the member entries it points
// at: ZSetObject (zset_type.h) keeps those in its Table and frees them.
//
// Shape
//   Items are 16 bytes: the score and a pointer to the member's entry (the member's bytes
//   are the entry's key). They are ordered by score, then by member bytes (unsigned, the
//   shorter first on a common prefix: Redis's order). Leaves hold up to kLeafCap items in
//   order and are linked both ways, so a range is walked leaf by leaf. An inner node holds
//   up to kInnerCap children with, for each, the number of items under it and its largest
//   item; those largest items always exist in the tree (they are refreshed on every change
//   below them), so no pointer in an inner node ever outlives its entry.
//   - a search by item or by any predicate that holds for a prefix of the order descends
//     one path, summing the counts of the children it passes: rank in O(log n);
//   - a rank is found by descending on the counts: select in O(log n);
//   - a full leaf first hands items to a neighbour with room, and splits only when both
//     neighbours are full (an append at either end leaves the old leaf full), so leaves
//     stay ~70-100% full; a leaf that falls under a quarter merges with a neighbour or
//     takes items from it. That is ~16-23 bytes per member, against Redis's skiplist node
//     (~50 bytes) and its share of a dict.
//
// Thread-safety: owned by the thread of the shard holding the sorted set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/entry.h"

namespace strata {

class ScoreIndex {
 public:
  struct Item {
    double score;
    Entry* e;
    std::string_view member() const { return e->Key(); }
  };

  static constexpr uint32_t kLeafCap = 62;   // a leaf is 1016 bytes: mimalloc's 1 KiB class
  static constexpr uint32_t kInnerCap = 31;  // an inner node is 1000 bytes

  struct Node {
    uint16_t n = 0;
    bool leaf = true;
  };
  struct Leaf : Node {
    Leaf* prev = nullptr;
    Leaf* next = nullptr;
    Item items[kLeafCap];
  };
  struct Inner : Node {
    uint64_t counts[kInnerCap];
    Item maxes[kInnerCap];
    Node* child[kInnerCap];
  };

  // A position: an item of a leaf. Null past either end.
  struct Pos {
    Leaf* leaf = nullptr;
    uint32_t i = 0;
    explicit operator bool() const { return leaf != nullptr; }
    const Item& item() const { return leaf->items[i]; }
  };

  ScoreIndex() = default;
  ~ScoreIndex();
  ScoreIndex(const ScoreIndex&) = delete;
  ScoreIndex& operator=(const ScoreIndex&) = delete;

  size_t size() const { return size_; }
  // Every node's bytes at usable size.
  size_t Bytes() const { return bytes_; }

  // REQUIRES: no item with e's member is present.
  void Insert(double score, Entry* e);
  // Removes the item (score, e); false when it is not there.
  bool Erase(double score, const Entry* e);
  // The 0-based rank of (score, e), present or not: the number of smaller items.
  size_t Rank(double score, const Entry* e) const;
  // The number of leading items for which below(const Item&) holds. below must hold for
  // a prefix of the order and fail for the rest (a lower bound). *pos, when given, is the
  // first item where it fails (null when it holds for every item).
  template <class Below>
  size_t CountWhile(Below below, Pos* pos = nullptr) const;
  // The item of rank r. REQUIRES: r < size().
  Pos Seek(size_t r) const;
  static bool Next(Pos* p);
  static bool Prev(Pos* p);
  Pos First() const { return size_ == 0 ? Pos{} : Seek(0); }
  Pos Last() const { return size_ == 0 ? Pos{} : Seek(size_ - 1); }

  // Frees every node.
  void Clear();
  // Checks the tree's invariants (order, counts, largest items, links); for tests.
  bool Valid() const;

  // (score, member) order. Comparing an item with itself gives 0.
  static int Compare(double score_a, std::string_view a, double score_b, std::string_view b) {
    if (score_a < score_b) return -1;
    if (score_a > score_b) return 1;
    int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }

 private:
  static size_t NodeCount(const Node* n);
  static const Item& NodeMax(const Node* n);
  Leaf* NewLeaf();
  Inner* NewInner();
  void FreeNode(Node* n);
  void FreeTree(Node* n);
  // Inserts into the subtree at n; returns a new right sibling when n split.
  Node* InsertRec(Node* n, const Item& it);
  Node* InsertLeaf(Leaf* l, const Item& it);
  // Moves items of the full leaf p->child[i] into a neighbour with room; false if none.
  bool ShiftToNeighbour(Inner* p, uint32_t i);
  bool EraseRec(Node* n, double score, const Entry* e);
  // Merges or evens out p->child[i] with a neighbour when it is under a quarter full.
  void Rebalance(Inner* p, uint32_t i);
  void RemoveChild(Inner* p, uint32_t i);
  bool ValidRec(const Node* n, size_t* count, const Item** max, const Leaf** prev_leaf) const;

  Node* root_ = nullptr;
  size_t size_ = 0;
  size_t bytes_ = 0;
};

template <class Below>
size_t ScoreIndex::CountWhile(Below below, Pos* pos) const {
  if (pos != nullptr) *pos = Pos{};
  if (root_ == nullptr) return 0;
  size_t rank = 0;
  const Node* n = root_;
  while (!n->leaf) {
    const Inner* in = static_cast<const Inner*>(n);
    uint32_t i = 0;
    while (i < in->n && below(in->maxes[i])) rank += in->counts[i++];
    if (i == in->n) return rank;  // every item is below
    n = in->child[i];
  }
  const Leaf* l = static_cast<const Leaf*>(n);
  uint32_t lo = 0, hi = l->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (below(l->items[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (pos != nullptr && lo < l->n) *pos = Pos{const_cast<Leaf*>(l), lo};
  return rank + lo;
}

}  // namespace strata
