// List values: the small form and ListObject.
//
// Small form (OBJECT ENCODING "listpack", as Redis 7.2 reports a one-node list): a packed
// list (packed_list.h) of the elements inside the entry, kept while it fits one node of
// list-max-listpack-size (negative: -1..-5 = 4..64 KiB of encoded elements; positive:
// that many elements). Past it the list becomes a ListObject and stays one.
//
// ListObject (OBJECT ENCODING "quicklist"): a deque of nodes of up to a node's worth of
// bytes (list-max-listpack-size), each one mimalloc block with free space kept at both
// ends, so pushes and pops at either end touch only the end node. A node holds either
//   - variable elements: [varint length][bytes][length again, written backwards], so
//     it is walked from either end; or
//   - fixed-width text: elements of one length, all bytes below 0x80, packed 16
//     characters in 14 bytes with no per-element overhead (a list of 10-byte ids costs
//     8.75 bytes per element).
// Index lookups walk node counts from the nearer end, then elements inside one node.
// Changes in the middle (LSET, LINSERT, LREM, LTRIM) re-encode only the nodes they
// touch (LINSERT/LREM rebuild the list).
//
// Compression (list-compress-depth d > 0, as Redis's quicklist): the d nodes at each end
// stay plain and the inner ones are kept compressed with zstd (level 1: on log-like text
// about half the bytes of Redis's LZF, bench/results) - the node's header and used bytes
// as one frame, replacing the node (a node under 48 bytes, or one that would not
// shrink by 8 bytes, stays plain). Pushes and pops touch only end nodes, so a push or pop
// that adds or drops a node compresses or inflates at most one node at each end
// (Rebalance). Reads (LRANGE, LINDEX, the snapshot) inflate an inner node into a
// temporary copy; LSET inflates it, changes it and compresses it again. The bytes counted
// are the compressed blocks'. A change of the setting applies to a list the next time it
// changes (a rebuild applies it to every node).
//
// Thread-safety: shard-owned, like the entry holding the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/object.h"

namespace strata {

class ListObject final : public CollectionObject {
 public:
  ListObject();
  ~ListObject() override;
  ListObject(const ListObject&) = delete;
  ListObject& operator=(const ListObject&) = delete;

  void PushFront(std::string_view v);
  void PushBack(std::string_view v);
  // REQUIRES: Length() > 0.
  std::string PopFront();
  std::string PopBack();

  // Element at index (0-based from the front); REQUIRES: index < Length().
  std::string At(size_t index) const;
  void Set(size_t index, std::string_view v);
  // Calls fn(element) for elements [start, start + n) in order, or in reverse order from
  // `start` backwards when reverse is set; fn returns false to stop.
  void Walk(size_t start, bool reverse, const std::function<bool(std::string_view)>& fn) const;
  // Replaces the whole content (used by LINSERT, LREM, LTRIM, which rebuild).
  void Assign(const std::vector<std::string>& elements);
  std::vector<std::string> Elements() const;

  size_t Bytes() const override;
  const char* Encoding() const override { return "quicklist"; }
  size_t Length() const override { return count_; }
  void Serialize(std::string* out) const override;
  size_t ReleaseSome(size_t budget) override;

 public:
  struct Node;  // list_type.cc
  // The plain copy of a compressed node (malloc'd; the caller frees it), and a compressed
  // copy of a plain one (null when it does not pay).
  static Node* Inflate(const Node* z);
  static Node* Deflate(const Node* n);
  // The nodes as they are stored (tests).
  size_t NodeCount() const { return nodes_.size(); }
  size_t CompressedNodes() const;

 private:
  void PushFrontPlain(std::string_view v);
  void PushBackPlain(std::string_view v);
  std::string PopFrontPlain();
  std::string PopBackPlain();
  Node* NewNode(size_t data_cap, bool at_front);
  // Compression (see above): the in-place forms that replace nodes_[i] keeping
  // node_bytes_ right.
  void EnsurePlain(size_t i);
  void CompressIfInner(size_t i);
  // After a push or pop: the end nodes plain, the first inner one at each end compressed.
  void Rebalance();
  // After a rebuild: every node as the depth says.
  void CompressAll();
  Node* NewFixedNode(size_t width, bool at_front);
  Node* BuildVarNode(const std::vector<std::string>& elems);
  void ReplaceNode(size_t index, Node* fresh);
  static std::vector<std::string> NodeElements(const Node* n);
  void FreeNode(Node* n);
  size_t NodeLimit() const;

  std::deque<Node*> nodes_;
  size_t count_ = 0;
  size_t node_bytes_ = 0;
};

// Whether a list of `count` elements whose packed body is `body_bytes` long fits the
// small form under list-max-listpack-size.
bool ListFitsPacked(size_t count, size_t body_bytes);

// Reads over either form (REQUIRES: e->Type() == ValueType::kList).
namespace list_access {
size_t Length(const Entry* e);
std::vector<std::string> Elements(const Entry* e);
}  // namespace list_access

// Builds the stored form from elements: the packed list (returned in *packed) when it
// fits the small form, else a ListObject.
std::unique_ptr<ListObject> BuildList(const std::vector<std::string>& elements,
                                      std::string* packed);

// MaterializeCollection for lists.
std::unique_ptr<CollectionObject> MaterializeList(std::string_view serialized, SlabHeap& heap);

}  // namespace strata
