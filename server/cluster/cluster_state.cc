#include "server/cluster/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <iterator>
#include <unordered_map>

#include "core/string_util.h"

namespace strata {
namespace {

struct FlagWord {
  uint16_t bit;
  const char* word;
};
// In the order Redis prints them.
constexpr FlagWord kFlagWords[] = {
    {kNodeMyself, "myself"}, {kNodeMaster, "master"},
    {kNodeReplica, "slave"}, {kNodePFail, "fail?"},
    {kNodeFail, "fail"},     {kNodeHandshake, "handshake"},
    {kNodeNoAddr, "noaddr"}, {kNodeNoFailover, "nofailover"},
};

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

template <class T>
bool ParseNum(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseSlot(std::string_view s, uint32_t* slot) {
  return ParseNum(s, slot) && *slot < kClusterSlots;
}

void AppendRange(std::string* out, uint32_t a, uint32_t b) {
  *out += ' ';
  *out += std::to_string(a);
  if (b != a) {
    *out += '-';
    *out += std::to_string(b);
  }
}

}  // namespace

uint64_t NextNodeSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool IsNodeId(std::string_view id) {
  if (id.size() != ClusterState::kIdLen) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  }
  return true;
}

ClusterState::ClusterState(std::string my_id) {
  auto me = std::make_unique<ClusterNode>();
  me->id = std::move(my_id);
  me->flags = kNodeMyself | kNodeMaster;
  me->connected = true;
  nodes_.push_back(std::move(me));
  myself_ = 0;
}

const ClusterNode* ClusterState::FindNode(std::string_view id) const {
  for (const auto& n : nodes_) {
    if (n->id == id) return n.get();
  }
  return nullptr;
}

ClusterNode* ClusterState::FindBySerial(uint64_t serial) {
  for (auto& n : nodes_) {
    if (n->serial == serial) return n.get();
  }
  return nullptr;
}

ClusterNode* ClusterState::AddNode(std::unique_ptr<ClusterNode> n) {
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

ClusterNode* ClusterState::StartHandshake(const std::string& ip, int port, int cport,
                                          int64_t now_ms, std::string temp_id) {
  for (const auto& n : nodes_) {
    if ((n->flags & kNodeHandshake) && n->ip == ip && n->port == port && n->cport == cport)
      return nullptr;
  }
  auto n = std::make_unique<ClusterNode>();
  n->id = std::move(temp_id);
  n->ip = ip;
  n->port = port;
  n->cport = cport;
  n->flags = kNodeHandshake | kNodeMeet;
  n->ctime_ms = now_ms;
  return AddNode(std::move(n));
}

bool ClusterState::Blacklisted(std::string_view id, int64_t now_ms) {
  std::erase_if(blacklist_, [&](const auto& e) { return e.second <= now_ms; });
  return blacklist_.find(id) != blacklist_.end();
}

size_t ClusterState::SlotCount(const ClusterNode& n) const {
  size_t count = 0;
  for (const ClusterNode* o : owner_) count += o == &n;
  return count;
}

bool ClusterState::Parse(std::string_view text, std::unique_ptr<ClusterState>* out,
                         std::string* error) {
  std::unique_ptr<ClusterState> st(new ClusterState());
  bool have_myself = false;
  // Slot claims, applied once every node is known; a slot claimed twice keeps its first
  // owner, as Redis keeps it.
  std::vector<std::pair<uint32_t, uint32_t>> claims;  // [first, last] by node index
  std::vector<size_t> claim_node;
  size_t line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    line_no++;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](const std::string& why) {
      *error = "line " + std::to_string(line_no) + ": " + why;
      return false;
    };
    std::vector<std::string_view> f = Split(line, ' ');
    if (f[0] == "vars") {
      for (size_t i = 1; i + 1 < f.size(); i += 2) {
        uint64_t v = 0;
        if (EqualsIgnoreCase(f[i], "currentEpoch")) {
          if (!ParseNum(f[i + 1], &v)) return bad("currentEpoch is not a number");
          st->current_epoch_ = v;
        } else if (EqualsIgnoreCase(f[i], "lastVoteEpoch")) {
          if (!ParseNum(f[i + 1], &v)) return bad("lastVoteEpoch is not a number");
          st->last_vote_epoch_ = v;
        }  // other vars (later versions) are skipped, as Redis skips them
      }
      continue;
    }
    if (f.size() < 8) return bad("a node line has fewer than 8 fields");
    auto n = std::make_unique<ClusterNode>();
    if (!IsNodeId(f[0])) return bad("'" + std::string(f[0]) + "' is not a node id");
    if (st->FindNode(f[0]) != nullptr) return bad("node " + std::string(f[0]) + " twice");
    n->id = std::string(f[0]);
    // <ip>:<port>@<cport>[,<hostname>][,<key>=<value>...]
    std::vector<std::string_view> addr = Split(f[1], ',');
    for (size_t i = 1; i < addr.size(); i++) {
      if (addr[i].find('=') == std::string_view::npos && i == 1) n->hostname = addr[i];
    }
    std::string_view hostport = addr[0];
    size_t colon = hostport.rfind(':');
    if (colon == std::string_view::npos) return bad("no ':' in the address");
    n->ip = std::string(hostport.substr(0, colon));
    std::string_view ports = hostport.substr(colon + 1);
    size_t at = ports.find('@');
    if (!ParseNum(ports.substr(0, at), &n->port) || n->port < 0 || n->port > 65535)
      return bad("bad port");
    if (at == std::string_view::npos) {
      n->cport = n->port + 10000;
    } else if (!ParseNum(ports.substr(at + 1), &n->cport) || n->cport < 0 || n->cport > 65535) {
      return bad("bad bus port");
    }
    if (f[2] != "noflags") {
      for (std::string_view w : Split(f[2], ',')) {
        bool known = false;
        for (const FlagWord& fw : kFlagWords) {
          if (w == fw.word) {
            n->flags |= fw.bit;
            known = true;
          }
        }
        if (!known) return bad("unknown flag '" + std::string(w) + "'");
      }
    }
    if (f[3] != "-") {
      if (!IsNodeId(f[3])) return bad("'" + std::string(f[3]) + "' is not a master id");
      n->master_id = std::string(f[3]);
    }
    if (!ParseNum(f[4], &n->ping_sent_ms) || !ParseNum(f[5], &n->pong_received_ms))
      return bad("bad ping or pong time");
    if (!ParseNum(f[6], &n->config_epoch)) return bad("bad config epoch");
    if (f[7] != "connected" && f[7] != "disconnected") return bad("bad link state");
    bool me = n->flags & kNodeMyself;
    if (me) {
      if (have_myself) return bad("a second node marked myself");
      have_myself = true;
      st->myself_ = st->nodes_.size();
      n->connected = true;
      n->ping_sent_ms = n->pong_received_ms = 0;
    }
    for (size_t i = 8; i < f.size(); i++) {
      std::string_view r = f[i];
      if (r.empty()) continue;
      if (r.front() == '[') {
        // [<slot>->-<id>] migrating, [<slot>-<-<id>] importing: only myself has them.
        if (r.back() != ']') return bad("bad slot entry '" + std::string(r) + "'");
        std::string_view in = r.substr(1, r.size() - 2);
        size_t mig = in.find("->-");
        size_t imp = in.find("-<-");
        size_t cut = mig != std::string_view::npos ? mig : imp;
        uint32_t slot = 0;
        if (cut == std::string_view::npos || !ParseSlot(in.substr(0, cut), &slot) ||
            !IsNodeId(in.substr(cut + 3)))
          return bad("bad slot entry '" + std::string(r) + "'");
        (mig != std::string_view::npos ? st->migrating_ : st->importing_)[slot] =
            std::string(in.substr(cut + 3));
        continue;
      }
      size_t dash = r.find('-');
      uint32_t a = 0, b = 0;
      if (dash == std::string_view::npos) {
        if (!ParseSlot(r, &a)) return bad("bad slot '" + std::string(r) + "'");
        b = a;
      } else if (!ParseSlot(r.substr(0, dash), &a) || !ParseSlot(r.substr(dash + 1), &b) || a > b) {
        return bad("bad slot range '" + std::string(r) + "'");
      }
      claims.emplace_back(a, b);
      claim_node.push_back(st->nodes_.size());
    }
    st->nodes_.push_back(std::move(n));
  }
  if (!have_myself) {
    *error = "no node is marked myself";
    return false;
  }
  for (size_t i = 0; i < claims.size(); i++) {
    for (uint32_t s = claims[i].first; s <= claims[i].second; s++) {
      if (st->owner_[s] == nullptr) st->owner_[s] = st->nodes_[claim_node[i]].get();
    }
  }
  // A master with a replica is one that a replica may later migrate to (Redis's
  // MIGRATE_TO, which nodes.conf does not keep).
  for (const auto& n : st->nodes_) {
    if (n->master_id.empty()) continue;
    if (ClusterNode* m = st->FindNode(n->master_id); m != nullptr && m->is_master()) {
      m->flags |= kNodeMigrateTo;
    }
  }
  *out = std::move(st);
  return true;
}

std::string ClusterState::NodeLine(const ClusterNode& n, std::string_view my_ip) const {
  std::string out = n.id;
  out += ' ';
  out += (&n == nodes_[myself_].get() && n.ip.empty()) ? std::string(my_ip) : n.ip;
  out += ':';
  out += std::to_string(n.port);
  out += '@';
  out += std::to_string(n.cport);
  if (!n.hostname.empty()) {
    out += ',';
    out += n.hostname;
  }
  out += ' ';
  size_t before = out.size();
  for (const FlagWord& fw : kFlagWords) {
    if (n.flags & fw.bit) {
      if (out.size() != before) out += ',';
      out += fw.word;
    }
  }
  if (out.size() == before) out += "noflags";
  out += ' ';
  out += n.master_id.empty() ? "-" : n.master_id;
  out += ' ';
  out += std::to_string(n.ping_sent_ms);
  out += ' ';
  out += std::to_string(n.pong_received_ms);
  out += ' ';
  // A replica shows its master's config epoch.
  uint64_t epoch = n.config_epoch;
  if (!n.is_master() && !n.master_id.empty()) {
    if (const ClusterNode* m = FindNode(n.master_id)) epoch = m->config_epoch;
  }
  out += std::to_string(epoch);
  out += n.connected || (n.flags & kNodeMyself) ? " connected" : " disconnected";
  for (auto [a, b] : RangesOf(n)) AppendRange(&out, a, b);
  if (n.flags & kNodeMyself) {
    for (const auto& [slot, id] : migrating_) out += " [" + std::to_string(slot) + "->-" + id + "]";
    for (const auto& [slot, id] : importing_) out += " [" + std::to_string(slot) + "-<-" + id + "]";
  }
  return out;
}

std::string ClusterState::NodesText(std::string_view my_ip, bool with_handshakes) const {
  std::string out;
  for (const auto& n : nodes_) {
    if ((n->flags & kNodeHandshake) && !with_handshakes) continue;
    out += NodeLine(*n, my_ip);
    out += '\n';
  }
  return out;
}

std::string ClusterState::Serialize() const {
  std::string out = NodesText({}, /*with_handshakes=*/false);
  out += "vars currentEpoch " + std::to_string(current_epoch_) + " lastVoteEpoch " +
         std::to_string(last_vote_epoch_) + "\n";
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> ClusterState::RangesOf(const ClusterNode& n) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t s = 0; s < kClusterSlots; s++) {
    if (owner_[s] != &n) continue;
    if (!out.empty() && out.back().second + 1 == s) {
      out.back().second = s;
    } else {
      out.emplace_back(s, s);
    }
  }
  return out;
}

size_t ClusterState::SlotsAssigned() const {
  size_t n = 0;
  for (const ClusterNode* o : owner_) n += o != nullptr;
  return n;
}

namespace {
// Whether each node (by index) serves a slot: one pass over the slots.
std::vector<char> Serving(const std::vector<std::unique_ptr<ClusterNode>>& nodes,
                          const std::array<const ClusterNode*, kClusterSlots>& owner) {
  std::unordered_map<const ClusterNode*, size_t> index;
  for (size_t i = 0; i < nodes.size(); i++) index[nodes[i].get()] = i;
  std::vector<char> serving(nodes.size(), 0);
  const ClusterNode* last = nullptr;
  for (const ClusterNode* o : owner) {
    if (o == nullptr || o == last) continue;
    last = o;
    auto it = index.find(o);
    if (it != index.end()) serving[it->second] = 1;
  }
  return serving;
}
}  // namespace

size_t ClusterState::ServingMasters() const {
  std::vector<char> serving = Serving(nodes_, owner_);
  size_t n = 0;
  for (size_t i = 0; i < nodes_.size(); i++) n += serving[i] && nodes_[i]->is_master();
  return n;
}

bool ClusterState::Ok(bool require_full_coverage) const {
  if (require_full_coverage) {
    for (const ClusterNode* o : owner_) {
      if (o == nullptr || o->failed()) return false;
    }
  }
  size_t size = 0;
  size_t reachable = 0;
  std::vector<char> serving = Serving(nodes_, owner_);
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (!serving[i] || !nodes_[i]->is_master()) continue;
    size++;
    if (!(nodes_[i]->flags & (kNodeFail | kNodePFail))) reachable++;
  }
  return reachable >= size / 2 + 1;
}

std::shared_ptr<const SlotRouting> ClusterState::BuildRouting(bool require_full_coverage,
                                                              bool allow_reads_when_down) const {
  auto r = std::make_shared<SlotRouting>();
  for (size_t i = 0; i < nodes_.size(); i++) {
    r->endpoints.push_back(nodes_[i]->ip + ":" + std::to_string(nodes_[i]->port));
  }
  r->myself = static_cast<uint16_t>(myself_);
  std::unordered_map<const ClusterNode*, uint16_t> index;
  for (size_t i = 0; i < nodes_.size(); i++) index[nodes_[i].get()] = static_cast<uint16_t>(i);
  for (uint32_t s = 0; s < kClusterSlots; s++) {
    const ClusterNode* o = owner_[s];
    if (o == nullptr) continue;
    auto it = index.find(o);
    if (it != index.end()) r->owner[s] = it->second;
  }
  const ClusterNode& me = *nodes_[myself_];
  if (!me.is_master() && !me.master_id.empty()) {
    for (size_t i = 0; i < nodes_.size(); i++) {
      if (nodes_[i]->id == me.master_id) r->my_master = static_cast<uint16_t>(i);
    }
  }
  // Open slots: only a master's count (a replica redirects by its master's layout).
  auto index_of = [&](const std::string& id) -> int {
    for (size_t i = 0; i < nodes_.size(); i++) {
      if (nodes_[i]->id == id) return static_cast<int>(i);
    }
    return -1;
  };
  if (me.is_master()) {
    for (const auto& [slot, id] : migrating_) {
      int to = index_of(id);
      if (to < 0 || owner_[slot] != &me) continue;
      r->owner[slot] = SlotRouting::kMigrating;
      r->migrating_to[slot] = static_cast<uint16_t>(to);
    }
    for (const auto& [slot, id] : importing_) {
      int from = index_of(id);
      if (from >= 0) r->importing_from[slot] = static_cast<uint16_t>(from);
    }
  }
  r->ok = Ok(require_full_coverage);
  r->serve_fast = r->ok ? r->myself : SlotRouting::kNeverOwner;
  r->allow_reads_when_down = allow_reads_when_down;
  return r;
}

void ClusterState::Forget(const ClusterNode* n) {
  for (auto& o : owner_) {
    if (o == n) o = nullptr;
  }
  for (auto it = migrating_.begin(); it != migrating_.end();) {
    it = it->second == n->id ? migrating_.erase(it) : std::next(it);
  }
  for (auto it = importing_.begin(); it != importing_.end();) {
    it = it->second == n->id ? importing_.erase(it) : std::next(it);
  }
  for (auto& other : nodes_) {
    if (other->master_id == n->id) other->master_id.clear();
    std::erase_if(other->fail_reports, [&](const FailReport& r) { return r.from == n->id; });
  }
  for (size_t i = 0; i < nodes_.size(); i++) {
    if (nodes_[i].get() == n) {
      nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i));
      if (myself_ > i) myself_--;
      return;
    }
  }
}

std::vector<const ClusterNode*> ClusterState::ReplicasOf(const ClusterNode& master) const {
  std::vector<const ClusterNode*> out;
  for (const auto& n : nodes_) {
    if ((n->flags & kNodeReplica) && n->master_id == master.id) out.push_back(n.get());
  }
  return out;
}

uint64_t ClusterState::MaxEpoch() const {
  uint64_t e = current_epoch_;
  for (const auto& n : nodes_) e = std::max(e, n->config_epoch);
  return e;
}

void ClusterState::Reset(bool hard, const std::string& new_id) {
  std::unique_ptr<ClusterNode> me = std::move(nodes_[myself_]);
  nodes_.clear();
  owner_.fill(nullptr);
  migrating_.clear();
  importing_.clear();
  me->flags = kNodeMyself | kNodeMaster;
  me->master_id.clear();
  if (hard) {
    me->id = new_id;
    me->config_epoch = 0;
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
  }
  nodes_.push_back(std::move(me));
  myself_ = 0;
}

}  // namespace strata
