#include "server/commands/memory_report.h"

#include <mimalloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "server/base/config.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/function_store.h"
#include "server/engine/pubsub.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_vm.h"
#include "server/scripting/script_store.h"

namespace strata {

namespace {

void AddLine(std::string* s, const char* k, const std::string& v) {
  *s += k;
  *s += ':';
  *s += v;
  *s += "\r\n";
}

void AddLine(std::string* s, const char* k, size_t v) { AddLine(s, k, std::to_string(v)); }

std::string Fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

double Ratio(size_t a, size_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / b; }

int64_t Diff(size_t a, size_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); }

size_t TotalSystemMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

}  // namespace

size_t ProcessRssBytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

std::string HumanBytes(uint64_t bytes) {
  char buf[64];
  double d = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lluB", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  } else if (bytes < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fM", d / (1024 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  }
  return buf;
}

ShardMemory CollectShardMemory(Worker& w, uint32_t dbs) {
  ShardMemory m;
  Keyspace& ks = w.keyspace();
  m.shard = w.index();
  m.entry_bytes = ks.entry_bytes();
  m.table_bytes = ks.table_bytes();
  m.client_bytes = w.client_bytes();
  m.io_bytes = w.RefreshIoBufferBytes();
  m.tier_bytes = w.tier_bytes();
  m.pubsub_bytes = w.pubsub().bytes();
  m.tracking_bytes = w.tracking().bytes();
  m.clients = w.connections().size();
  m.keys = ks.key_count();
  m.expires = ks.expires_count();
  m.slab_page_bytes = ks.heap().page_bytes();
  m.slab_slot_bytes = ks.heap().slot_bytes();
  m.lazyfree_pending = ks.lazyfree_pending();
  for (int t = 0; t < kValueTypeCount; t++) {
    m.type_bytes[t] = ks.type_bytes(static_cast<ValueType>(t));
    m.type_keys[t] = ks.type_keys(static_cast<ValueType>(t));
  }
  for (uint32_t db = 0; db < dbs && db < ks.db_count(); db++) {
    m.db_keys.push_back(ks.DbSize(db));
    m.db_table_bytes.push_back(ks.table(db).OverheadBytes());
  }
  return m;
}

MemorySummary Summarize(Engine& srv, std::vector<ShardMemory> shards) {
  MemorySummary m;
  for (const ShardMemory& s : shards) {
    m.dataset += s.entry_bytes;
    m.table += s.table_bytes;
    m.clients += s.client_bytes;
    m.io += s.io_bytes;
    m.tiered += s.tier_bytes;
    m.pubsub += s.pubsub_bytes;
    m.tracking += s.tracking_bytes;
    m.keys += s.keys;
    m.expires += s.expires;
    m.client_count += s.clients;
    m.slab_page_bytes += s.slab_page_bytes;
    m.slab_slot_bytes += s.slab_slot_bytes;
    m.lazyfree_pending += s.lazyfree_pending;
    for (int t = 0; t < kValueTypeCount; t++) {
      m.type_bytes[t] += s.type_bytes[t];
      m.type_keys[t] += s.type_keys[t];
    }
  }
  m.shards = std::move(shards);
  m.pubsub += srv.pubsub().bytes();
  m.used = m.dataset + m.table + m.clients + m.io + m.tiered + m.pubsub + m.tracking;
  m.overhead = m.used - m.dataset;
  m.startup = srv.StartupMemory();
  srv.UpdatePeakMemory(m.used);
  m.peak = std::max(srv.PeakMemory(), m.used);
  m.rss = ProcessRssBytes();
  size_t elapsed = 0, user = 0, sys = 0, rss = 0, peak_rss = 0, commit = 0, peak_commit = 0,
         faults = 0;
  mi_process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
  m.mimalloc_committed = commit;
  m.allocator_active = m.used + (m.slab_page_bytes - m.slab_slot_bytes);
  // mimalloc reports what it has committed, not what is resident (it commits ahead), so
  // there is no honest separate resident figure: resident is reported as active, and
  // the rest of RSS shows up in rss_overhead.
  m.allocator_resident = m.allocator_active;
  m.maxmemory = srv.config().Int("maxmemory");
  m.maxmemory_policy = srv.config().String("maxmemory-policy");
  m.total_system_memory = TotalSystemMemory();
  return m;
}

void AppendInfoMemory(const MemorySummary& m, std::string* out) {
  AddLine(out, "used_memory", m.used);
  AddLine(out, "used_memory_human", HumanBytes(m.used));
  AddLine(out, "used_memory_rss", m.rss);
  AddLine(out, "used_memory_rss_human", HumanBytes(m.rss));
  AddLine(out, "used_memory_peak", m.peak);
  AddLine(out, "used_memory_peak_human", HumanBytes(m.peak));
  AddLine(out, "used_memory_peak_perc", Fixed(100.0 * Ratio(m.used, m.peak)) + "%");
  AddLine(out, "used_memory_overhead", m.overhead);
  AddLine(out, "used_memory_startup", m.startup);
  AddLine(out, "used_memory_dataset", m.dataset);
  size_t net = m.used > m.startup ? m.used - m.startup : 0;
  AddLine(out, "used_memory_dataset_perc",
          Fixed(net == 0 ? 0.0 : 100.0 * Ratio(m.dataset, net)) + "%");
  AddLine(out, "allocator_allocated", m.used);
  AddLine(out, "allocator_active", m.allocator_active);
  AddLine(out, "allocator_resident", m.allocator_resident);
  AddLine(out, "total_system_memory", m.total_system_memory);
  AddLine(out, "total_system_memory_human", HumanBytes(m.total_system_memory));
  // Scripts: every worker's interpreter (this one's at least, made if need be), and the
  // script bodies; neither is part of used_memory (Lua has its own allocator), as in Redis.
  LuaVm::ForThisThread();
  size_t lua = LuaVm::AllMemoryBytes();
  size_t scripts = ScriptStore::Get().body_bytes();
  size_t cached = ScriptStore::Get().size();
  AddLine(out, "used_memory_lua", lua);
  AddLine(out, "used_memory_tiered", m.tiered);
  AddLine(out, "used_memory_vm_eval", lua);
  AddLine(out, "used_memory_lua_human", HumanBytes(lua));
  AddLine(out, "used_memory_scripts_eval", scripts);
  AddLine(out, "number_of_cached_scripts", cached);
  // Functions run in the same interpreters as EVAL (one per worker), so their VM memory
  // is inside used_memory_vm_eval; used_memory_functions is the libraries' code.
  FunctionStore& functions = FunctionStore::Get();
  size_t function_bytes = functions.code_bytes();
  AddLine(out, "number_of_functions", functions.function_count());
  AddLine(out, "number_of_libraries", functions.library_count());
  AddLine(out, "used_memory_vm_functions", "0");
  AddLine(out, "used_memory_vm_total", lua);
  AddLine(out, "used_memory_vm_total_human", HumanBytes(lua));
  AddLine(out, "used_memory_functions", function_bytes);
  AddLine(out, "used_memory_scripts", scripts + function_bytes);
  AddLine(out, "used_memory_scripts_human", HumanBytes(scripts + function_bytes));
  AddLine(out, "maxmemory", std::to_string(m.maxmemory));
  AddLine(out, "maxmemory_human", HumanBytes(static_cast<uint64_t>(m.maxmemory)));
  AddLine(out, "maxmemory_policy", m.maxmemory_policy);
  AddLine(out, "allocator_frag_ratio", Fixed(Ratio(m.allocator_active, m.used)));
  AddLine(out, "allocator_frag_bytes", std::to_string(Diff(m.allocator_active, m.used)));
  AddLine(out, "allocator_rss_ratio", Fixed(Ratio(m.allocator_resident, m.allocator_active)));
  AddLine(out, "allocator_rss_bytes",
          std::to_string(Diff(m.allocator_resident, m.allocator_active)));
  AddLine(out, "rss_overhead_ratio", Fixed(Ratio(m.rss, m.allocator_resident)));
  AddLine(out, "rss_overhead_bytes", std::to_string(Diff(m.rss, m.allocator_resident)));
  AddLine(out, "mem_fragmentation_ratio", Fixed(Ratio(m.rss, m.used)));
  AddLine(out, "mem_fragmentation_bytes", std::to_string(Diff(m.rss, m.used)));
  AddLine(out, "mem_not_counted_for_evict", "0");
  AddLine(out, "mem_replication_backlog", "0");
  AddLine(out, "mem_total_replication_buffers", "0");
  AddLine(out, "mem_clients_slaves", "0");
  AddLine(out, "mem_clients_normal", m.clients);
  AddLine(out, "mem_pubsub", m.pubsub);
  AddLine(out, "mem_cluster_links", "0");
  AddLine(out, "mem_aof_buffer", "0");
  AddLine(out, "mem_allocator", "mimalloc-" + std::to_string(mi_version()) + "+slab");
  AddLine(out, "active_defrag_running", "0");
  AddLine(out, "lazyfree_pending_objects", m.lazyfree_pending);
  AddLine(out, "lazyfreed_objects", "0");
  // strata's breakdown: the parts of used_memory, then per value type and per shard.
  AddLine(out, "mem_table", m.table);
  AddLine(out, "mem_tracking", m.tracking);
  AddLine(out, "mem_io_buffers", m.io);
  AddLine(out, "mem_slab_pages", m.slab_page_bytes);
  AddLine(out, "mem_slab_used", m.slab_slot_bytes);
  AddLine(out, "mem_mimalloc_committed", m.mimalloc_committed);
  AddLine(out, "mem_keys", m.keys);
  AddLine(out, "mem_bytes_per_key",
          Fixed(m.keys == 0 ? 0.0 : Ratio(m.used > m.startup ? m.used - m.startup : 0, m.keys)));
  for (int t = 0; t < kValueTypeCount; t++) {
    std::string k = std::string("mem_type_") + ValueTypeName(static_cast<ValueType>(t));
    AddLine(out, k.c_str(),
            "keys=" + std::to_string(m.type_keys[t]) + ",bytes=" + std::to_string(m.type_bytes[t]) +
                ",bytes_per_key=" + Fixed(Ratio(m.type_bytes[t], m.type_keys[t])));
  }
  for (const ShardMemory& s : m.shards) {
    std::string k = "mem_shard_" + std::to_string(s.shard);
    AddLine(out, k.c_str(),
            "used=" + std::to_string(s.used()) + ",dataset=" + std::to_string(s.entry_bytes) +
                ",table=" + std::to_string(s.table_bytes) +
                ",clients=" + std::to_string(s.client_bytes) + ",io=" + std::to_string(s.io_bytes) +
                ",keys=" + std::to_string(s.keys) + ",connections=" + std::to_string(s.clients));
  }
}

void ReplyMemoryStats(const MemorySummary& m, ReplyBuilder& rb) {
  std::vector<uint32_t> dbs_with_keys;
  size_t db_count = m.shards.empty() ? 0 : m.shards[0].db_keys.size();
  for (uint32_t db = 0; db < db_count; db++) {
    size_t keys = 0;
    for (const ShardMemory& s : m.shards) keys += s.db_keys[db];
    if (keys > 0) dbs_with_keys.push_back(db);
  }
  size_t net = m.used > m.startup ? m.used - m.startup : 0;
  rb.Map(27 + dbs_with_keys.size() + kValueTypeCount + m.shards.size() + 4);
  auto kv = [&](const char* k, int64_t v) {
    rb.Bulk(k);
    rb.Integer(v);
  };
  auto kd = [&](const char* k, double v) {
    rb.Bulk(k);
    rb.Double(v);
  };
  kv("peak.allocated", static_cast<int64_t>(m.peak));
  kv("total.allocated", static_cast<int64_t>(m.used));
  kv("startup.allocated", static_cast<int64_t>(m.startup));
  kv("replication.backlog", 0);
  kv("clients.slaves", 0);
  kv("clients.normal", static_cast<int64_t>(m.clients));
  kv("cluster.links", 0);
  kv("aof.buffer", 0);
  kv("lua.caches", 0);
  kv("functions.caches", 0);
  for (uint32_t db : dbs_with_keys) {
    size_t table = 0;
    for (const ShardMemory& s : m.shards) table += s.db_table_bytes[db];
    rb.Bulk("db." + std::to_string(db));
    rb.Map(2);
    kv("overhead.hashtable.main", static_cast<int64_t>(table));
    kv("overhead.hashtable.expires", 0);  // expiry lives inside entries
  }
  kv("overhead.total", static_cast<int64_t>(m.overhead));
  kv("keys.count", static_cast<int64_t>(m.keys));
  kv("keys.bytes-per-key", m.keys == 0 ? 0 : static_cast<int64_t>(net / m.keys));
  kv("dataset.bytes", static_cast<int64_t>(m.dataset));
  kd("dataset.percentage", net == 0 ? 0.0 : 100.0 * Ratio(m.dataset, net));
  kd("peak.percentage", 100.0 * Ratio(m.used, m.peak));
  kv("allocator.allocated", static_cast<int64_t>(m.used));
  kv("allocator.active", static_cast<int64_t>(m.allocator_active));
  kv("allocator.resident", static_cast<int64_t>(m.allocator_resident));
  kd("allocator-fragmentation.ratio", Ratio(m.allocator_active, m.used));
  kv("allocator-fragmentation.bytes", Diff(m.allocator_active, m.used));
  kd("allocator.rss-ratio", Ratio(m.allocator_resident, m.allocator_active));
  kv("allocator.rss-bytes", Diff(m.allocator_resident, m.allocator_active));
  kd("rss-overhead.ratio", Ratio(m.rss, m.allocator_resident));
  kv("rss-overhead.bytes", Diff(m.rss, m.allocator_resident));
  kd("fragmentation", Ratio(m.rss, m.used));
  kv("fragmentation.bytes", Diff(m.rss, m.used));
  // strata's own figures.
  kv("table.bytes", static_cast<int64_t>(m.table));
  kv("io-buffers.bytes", static_cast<int64_t>(m.io));
  kv("slab.pages.bytes", static_cast<int64_t>(m.slab_page_bytes));
  kv("slab.used.bytes", static_cast<int64_t>(m.slab_slot_bytes));
  for (int t = 0; t < kValueTypeCount; t++) {
    rb.Bulk(std::string("type.") + ValueTypeName(static_cast<ValueType>(t)));
    rb.Map(2);
    kv("keys", static_cast<int64_t>(m.type_keys[t]));
    kv("bytes", static_cast<int64_t>(m.type_bytes[t]));
  }
  for (const ShardMemory& s : m.shards) {
    rb.Bulk("shard." + std::to_string(s.shard));
    rb.Map(6);
    kv("used", static_cast<int64_t>(s.used()));
    kv("dataset", static_cast<int64_t>(s.entry_bytes));
    kv("table", static_cast<int64_t>(s.table_bytes));
    kv("clients", static_cast<int64_t>(s.client_bytes));
    kv("io", static_cast<int64_t>(s.io_bytes));
    kv("keys", static_cast<int64_t>(s.keys));
  }
}

std::string MemoryDoctor(const MemorySummary& m) {
  constexpr size_t kMiB = 1024 * 1024;
  if (m.used < 5 * kMiB && m.keys < 1000) {
    return "This instance holds very little data (" + HumanBytes(m.used) + " used, " +
           std::to_string(m.keys) +
           " keys), so there is nothing to diagnose yet. Load some data and ask again.";
  }
  std::vector<std::string> findings;
  if (m.peak > m.used + m.used / 2) {
    findings.push_back("Peak memory: used_memory once reached " + HumanBytes(m.peak) +
                       ", more than 150% of the current " + HumanBytes(m.used) +
                       ". Memory freed since then may still be held by the allocator or "
                       "counted in RSS; MEMORY PURGE returns what it can to the OS.");
  }
  if (m.rss > m.used + m.used * 2 / 5 && m.rss - m.used > 10 * kMiB) {
    findings.push_back("High fragmentation: RSS is " + Fixed(Ratio(m.rss, m.used)) +
                       " times used_memory (" + HumanBytes(m.rss - m.used) +
                       " more). Typical after many deletions or overwrites with values of "
                       "a different size; see allocator_frag_bytes (unfilled slab pages) and "
                       "allocator_rss_bytes (memory mimalloc keeps) in INFO memory.");
  }
  size_t slack = m.slab_page_bytes - m.slab_slot_bytes;
  if (slack > 4 * kMiB && slack * 5 > m.slab_page_bytes) {
    findings.push_back("Sparse slab pages: entry pages are only " +
                       Fixed(100.0 * Ratio(m.slab_slot_bytes, m.slab_page_bytes), 0) + "% full (" +
                       HumanBytes(slack) +
                       " of free slots). New keys of similar size reuse them; a page is "
                       "returned to the OS only when all its entries are gone.");
  }
  if (m.clients > 16 * kMiB && m.clients * 10 > m.used) {
    findings.push_back("Client buffers: " + std::to_string(m.client_count) + " connections hold " +
                       HumanBytes(m.clients) + " (average " +
                       HumanBytes(m.client_count ? m.clients / m.client_count : 0) +
                       "). Very deep pipelines, big replies or clients that read slowly "
                       "cause this; CLIENT LIST shows qbuf and omem per client.");
  }
  if (m.shards.size() > 1) {
    size_t max_used = 0;
    uint32_t max_shard = 0;
    for (const ShardMemory& s : m.shards) {
      if (s.entry_bytes > max_used) {
        max_used = s.entry_bytes;
        max_shard = s.shard;
      }
    }
    size_t others = (m.dataset - max_used) / (m.shards.size() - 1);
    if (max_used > 16 * kMiB && max_used > 2 * others) {
      findings.push_back(
          "Skewed shards: shard " + std::to_string(max_shard) + " holds " + HumanBytes(max_used) +
          " of data, more than twice the average of the other shards (" + HumanBytes(others) +
          "). Keys sharing one {hash tag} all live on one shard, so one thread "
          "serves them all. maxmemory still applies to the whole process.");
    }
  }
  if (m.maxmemory > 0 && m.used * 10 > static_cast<size_t>(m.maxmemory) * 9) {
    findings.push_back("Near the limit: used_memory is " +
                       Fixed(100.0 * Ratio(m.used, static_cast<size_t>(m.maxmemory)), 0) +
                       "% of maxmemory (" + HumanBytes(static_cast<uint64_t>(m.maxmemory)) +
                       ") with policy " + m.maxmemory_policy +
                       ": commands that add data will get OOM errors once it is exceeded.");
  }
  if (m.maxmemory == 0 && m.total_system_memory > 0 && m.rss * 2 > m.total_system_memory) {
    findings.push_back("No maxmemory is set and RSS is " +
                       Fixed(100.0 * Ratio(m.rss, m.total_system_memory), 0) +
                       "% of system memory: the OS may kill the process before it refuses "
                       "writes. Set maxmemory to keep a margin.");
  }
  std::string summary =
      "used_memory is " + HumanBytes(m.used) + " for " + std::to_string(m.keys) + " keys (" +
      Fixed(m.keys ? Ratio(m.used > m.startup ? m.used - m.startup : 0, m.keys) : 0.0, 1) +
      " bytes per key), RSS is " + HumanBytes(m.rss) + ".";
  if (findings.empty()) return "No memory problems found. " + summary;
  std::string out = "Found " + std::to_string(findings.size()) + " thing" +
                    (findings.size() == 1 ? "" : "s") + " worth a look (" + summary + ")\n";
  for (size_t i = 0; i < findings.size(); i++) {
    out += "\n * " + findings[i] + "\n";
  }
  return out;
}

}  // namespace strata
