// Set algebra: SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE and
// SMOVE, on one shard or across several.
//
// The algorithms are Redis's (t_set.c): intersection walks the smallest set and probes
// the others; difference picks between "probe the others for each member of the first"
// and "copy the first, remove the others" by the same work estimate; results that are
// stored are built member by member in a SetBuilder, so they end in the encoding Redis
// would give them. They run over SetSource views, which are either stored entries (the
// single-shard path, on the shard's thread) or members copied off their shards (the
// fiber, on the client's thread).
//
// Keys on one shard: the command runs there like any keyed command. Keys on several
// shards: a fiber takes the keys' intent locks shard by shard in increasing order
// (exclusive on the shard of a written key), copies the sources' members with RunOn,
// computes on the client's thread, writes the destination with RunOn, and only then
// releases the locks, so no client sees the sources change between the read and the
// write, nor half of an SMOVE.
//
// Thread-safety: EntrySetSource runs on the thread of the shard owning its entry;
// SnapshotSetSource and the algorithms on any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/set_type.h"
#include "server/engine/command.h"

namespace strata {

// A read-only set an algorithm takes as input.
class SetSource {
 public:
  virtual ~SetSource() = default;
  virtual size_t Size() const = 0;
  virtual SetEncoding Encoding() const = 0;
  virtual bool Contains(std::string_view member) const = 0;
  // Calls fn(member) for every member in storage order until fn returns false.
  virtual void ForEach(const std::function<bool(std::string_view)>& fn) const = 0;
};

// A stored set on this shard (valid until the shard's next write).
class EntrySetSource final : public SetSource {
 public:
  explicit EntrySetSource(const Entry* e) : e_(e) {}
  size_t Size() const override { return set_access::Length(e_); }
  SetEncoding Encoding() const override { return set_access::Encoding(e_); }
  bool Contains(std::string_view member) const override { return set_access::Contains(e_, member); }
  void ForEach(const std::function<bool(std::string_view)>& fn) const override;

 private:
  const Entry* e_;
};

// A set's members copied off its shard.
struct SetSnapshot {
  enum class State { kMissing, kWrongType, kSet };
  State state = State::kMissing;
  SetEncoding encoding = SetEncoding::kIntSet;
  std::vector<std::string> members;  // storage order
  // Copies the set at key (counting a keyspace hit or miss, as a read).
  static SetSnapshot Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms);
};

class SnapshotSetSource final : public SetSource {
 public:
  explicit SnapshotSetSource(const SetSnapshot* s) : s_(s) {}
  size_t Size() const override { return s_->members.size(); }
  SetEncoding Encoding() const override { return s_->encoding; }
  bool Contains(std::string_view member) const override;
  void ForEach(const std::function<bool(std::string_view)>& fn) const override;

 private:
  const SetSnapshot* s_;
  mutable std::unordered_set<std::string_view> index_;  // built on the first probe
};

// One call of a set algebra command, parsed.
struct SetAlgebraCall {
  enum class Op { kInter, kInterCard, kUnion, kDiff };
  Op op = Op::kInter;
  bool store = false;
  std::string_view dst;                // when store
  std::vector<std::string_view> keys;  // the sources
  uint64_t limit = 0;                  // SINTERCARD LIMIT; 0 = none
  // Parses args; false (error replied) when they are invalid.
  static bool Parse(CmdArgs args, ReplyBuilder& rb, SetAlgebraCall* out);
};

// Computes the call over its sources (sets[i] for keys[i]; nullptr: missing key) and
// replies, except for the STORE commands, whose result is left in *result for the caller
// to store and whose reply (the result's cardinality) the caller sends.
void ComputeSetAlgebra(const SetAlgebraCall& call, const std::vector<const SetSource*>& sets,
                       ReplyBuilder& rb, SetBuilder* result);

// Registers SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF and
// SDIFFSTORE with their single-shard handlers and fibers.
void RegisterSetAlgebraCommands(CommandRegistry& r);

}  // namespace strata
