// The operator's introspection commands over the process-wide records of slow runs
// (server/engine/slowlog.h): SLOWLOG GET/LEN/RESET/HELP and LATENCY LATEST/HISTORY/RESET/
// GRAPH/DOCTOR/HISTOGRAM/HELP, with Redis 7's replies and errors; and MONITOR (its feed:
// server/engine/monitor.cc).
//
// Thread-safety: connection commands, run on the client's worker; the records take their
// own lock.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/latency_histogram.h"
#include "server/engine/slowlog.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

std::string Uppercase(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// Redis's addReplyHelp: the title line, the command's lines, then HELP's own.
void ReplyHelp(ReplyBuilder& rb, std::string_view command, const std::vector<const char*>& lines) {
  rb.Array(lines.size() + 3);
  rb.Simple(Uppercase(command) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (const char* l : lines) rb.Simple(l);
  rb.Simple("HELP");
  rb.Simple("    Prints this help.");
}

void UnknownSubcommand(ReplyBuilder& rb, std::string_view command, std::string_view sub) {
  rb.Error("ERR unknown subcommand '" + std::string(sub) + "'. Try " + Uppercase(command) +
           " HELP.");
}

// ---- SLOWLOG ----

void CmdSlowLog(Client& c, CmdArgs args, ReplyBuilder& rb) {
  SlowLog& log = c.worker().engine().slowlog();
  std::string sub = Lowercase(args[1]);
  if (sub == "get" && args.size() <= 3) {
    int64_t count = 10;
    if (args.size() == 3 && (!ParseInt64(args[2], &count) || count < -1)) {
      rb.Error("ERR count should be greater than or equal to -1");
      return;
    }
    std::vector<SlowLogEntry> entries = log.Newest(count);
    rb.Array(entries.size());
    for (const SlowLogEntry& e : entries) {
      rb.Array(6);
      rb.Integer(static_cast<int64_t>(e.id));
      rb.Integer(e.time_sec);
      rb.Integer(static_cast<int64_t>(e.duration_us));
      rb.Array(e.args.size());
      for (const std::string& a : e.args) rb.Bulk(a);
      rb.Bulk(e.addr);
      rb.Bulk(e.name);
    }
  } else if (sub == "len" && args.size() == 2) {
    rb.Integer(static_cast<int64_t>(log.Length()));
  } else if (sub == "reset" && args.size() == 2) {
    log.Reset();
    rb.Ok();
  } else if (sub == "help" && args.size() == 2) {
    ReplyHelp(rb, "slowlog",
              {"GET [<count>]",
               "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
               "    Entries are made of:",
               "    id, timestamp, time in microseconds, arguments array, client IP and port,",
               "    client name", "LEN", "    Return the length of the slowlog.", "RESET",
               "    Reset the slowlog."});
  } else if (sub == "get") {
    // GET's arity (-2) lets any count of arguments through to here, as in Redis.
    rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
             "'. Try SLOWLOG HELP.");
  } else if (sub == "len" || sub == "reset" || sub == "help") {
    rb.Error(WrongArityError("slowlog|" + sub));
  } else {
    UnknownSubcommand(rb, "slowlog", args[1]);
  }
}

// ---- LATENCY ----

// A small text graph of an event's samples, newest on the right: one column per sample
// (at most 80, the newest), bars scaled between the lowest and highest sample.
std::string LatencyGraph(const std::string& event, const LatencyEvent& ev, int64_t now_sec) {
  constexpr size_t kColumns = 80, kRows = 4;
  size_t first = ev.samples.size() > kColumns ? ev.samples.size() - kColumns : 0;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (size_t i = first; i < ev.samples.size(); i++) {
    lo = std::min(lo, ev.samples[i].latency_ms);
    hi = std::max(hi, ev.samples[i].latency_ms);
  }
  std::string out = event + " - high " + std::to_string(hi) + " ms, low " + std::to_string(lo) +
                    " ms (all time high " + std::to_string(ev.max_ms) + " ms)\n";
  size_t width = ev.samples.size() - first;
  out += std::string(width, '-') + "\n";
  for (size_t row = kRows; row > 0; row--) {
    std::string line;
    for (size_t i = first; i < ev.samples.size(); i++) {
      uint32_t v = ev.samples[i].latency_ms;
      // The height of this sample, 1..kRows.
      size_t h = hi == lo ? kRows : 1 + (static_cast<size_t>(v - lo) * (kRows - 1)) / (hi - lo);
      line += h >= row ? (h == row ? '_' : '|') : ' ';
    }
    out += line + "\n";
  }
  out += "\n";
  // The age of each sample, one digit group per column, as Redis labels its graph.
  std::vector<std::string> ages;
  size_t rows = 0;
  for (size_t i = first; i < ev.samples.size(); i++) {
    int64_t age = now_sec - ev.samples[i].time_sec;
    std::string a = age < 60 ? std::to_string(age) + "s" : std::to_string(age / 60) + "m";
    rows = std::max(rows, a.size());
    ages.push_back(a);
  }
  for (size_t r = 0; r < rows; r++) {
    std::string line;
    for (const std::string& a : ages) line += r < a.size() ? a[r] : ' ';
    out += line + "\n";
  }
  return out;
}

std::string LatencyDoctor(const std::map<std::string, LatencyEvent>& events, int64_t threshold) {
  if (threshold == 0 && events.empty()) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a "
           "look at https://redis.io/topics/latency-monitor.\n";
  }
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, "
           "not in the slightest bit. I honestly think you ought to sit down calmly, take a "
           "stress pill, and think things over.\n";
  }
  std::string out =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
      "about it, do you Dave?\n\n";
  int n = 1;
  for (const auto& [name, ev] : events) {
    uint64_t sum = 0;
    for (const LatencySample& s : ev.samples) sum += s.latency_ms;
    uint64_t avg = ev.samples.empty() ? 0 : sum / ev.samples.size();
    int64_t first = ev.samples.empty() ? 0 : ev.samples.front().time_sec;
    int64_t last = ev.samples.empty() ? 0 : ev.samples.back().time_sec;
    int64_t period = ev.samples.size() > 1 ? (last - first) / (int64_t)(ev.samples.size() - 1) : 0;
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "%d. %s: %zu latency spikes (average %llums, mean deviation 0ms, period %lld "
                  "sec). Worst all time event %ums.\n",
                  n++, name.c_str(), ev.samples.size(), static_cast<unsigned long long>(avg),
                  static_cast<long long>(period), ev.max_ms);
    out += buf;
  }
  out += "\nI have a few advices for you:\n\n";
  if (events.count("command") != 0 || events.count("fast-command") != 0) {
    out +=
        "- Check your Slow Log to understand what are the commands you are running which are "
        "too slow to execute. Please check https://redis.io/commands/slowlog for more "
        "information.\n";
  }
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "- The latency monitor threshold is %lld milliseconds: spikes shorter than that "
                "are not recorded.\n",
                static_cast<long long>(threshold));
  out += buf;
  return out;
}

void CmdLatency(Client& c, CmdArgs args, ReplyBuilder& rb) {
  Engine& srv = c.worker().engine();
  SlowLog& log = srv.slowlog();
  std::string sub = Lowercase(args[1]);
  int64_t now_sec = c.worker().now_ms() / 1000;
  if (sub == "history" && args.size() == 3) {
    auto events = log.LatencyEvents();
    auto it = events.find(std::string(args[2]));
    if (it == events.end()) {
      rb.Array(0);
      return;
    }
    rb.Array(it->second.samples.size());
    for (const LatencySample& s : it->second.samples) {
      rb.Array(2);
      rb.Integer(s.time_sec);
      rb.Integer(s.latency_ms);
    }
  } else if (sub == "latest" && args.size() == 2) {
    auto events = log.LatencyEvents();
    rb.Array(events.size());
    for (const auto& [name, ev] : events) {
      rb.Array(4);
      rb.Bulk(name);
      rb.Integer(ev.samples.empty() ? 0 : ev.samples.back().time_sec);
      rb.Integer(ev.samples.empty() ? 0 : ev.samples.back().latency_ms);
      rb.Integer(ev.max_ms);
    }
  } else if (sub == "graph" && args.size() == 3) {
    auto events = log.LatencyEvents();
    auto it = events.find(std::string(args[2]));
    if (it == events.end() || it->second.samples.empty()) {
      rb.Error("ERR No samples available for event '" + std::string(args[2]) + "'");
      return;
    }
    rb.Verbatim(LatencyGraph(it->first, it->second, now_sec));
  } else if (sub == "doctor" && args.size() == 2) {
    rb.Verbatim(LatencyDoctor(log.LatencyEvents(), srv.config().latency_monitor_threshold()));
  } else if (sub == "reset") {
    std::vector<std::string> names(args.begin() + 2, args.end());
    rb.Integer(static_cast<int64_t>(log.ResetLatency(names)));
  } else if (sub == "help" && args.size() == 2) {
    ReplyHelp(rb, "latency",
              {"DOCTOR", "    Return a human readable latency analysis report.", "GRAPH <event>",
               "    Return an ASCII latency graph for the <event> class.", "HISTORY <event>",
               "    Return time-latency samples for the <event> class.", "LATEST",
               "    Return the latest latency samples for all events.", "RESET [<event> ...]",
               "    Reset latency data of one or more <event> classes.",
               "    (default: reset all data for all event classes)", "HISTOGRAM [COMMAND ...]",
               "    Return a cumulative distribution of latencies in the format of a histogram "
               "for the specified command names.",
               "    If no commands are specified then all histograms are replied."});
  } else if (sub == "history" || sub == "latest" || sub == "graph" || sub == "doctor" ||
             sub == "help") {
    rb.Error(WrongArityError("latency|" + sub));
  } else {
    UnknownSubcommand(rb, "latency", args[1]);
  }
}

// LATENCY HISTOGRAM [command ...]: every worker's histograms, merged (one hop each).
bool LatencyNeedsFiber(CmdArgs args) { return EqualsIgnoreCase(args[1], "histogram"); }

Fiber LatencyHistogramFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  const CommandRegistry& reg = CommandRegistry::Get();
  // The statistics slots asked for, in order (unknown names skipped), or every one: a
  // container's name stands for itself and each of its subcommands, "container|sub" for
  // that subcommand alone (as Redis 7).
  std::vector<size_t> wanted;
  auto want = [&](size_t slot) {
    if (std::find(wanted.begin(), wanted.end(), slot) == wanted.end()) wanted.push_back(slot);
  };
  if (args.size() > 2) {
    for (size_t i = 2; i < args.size(); i++) {
      std::string_view name = args[i];
      size_t bar = name.find('|');
      const CommandSpec* s = reg.Find(name.substr(0, bar));
      if (s == nullptr) continue;
      if (bar != std::string_view::npos) {
        const CommandSpec* sub = s->ForSubcommand(name.substr(bar + 1));
        if (sub != s) want(sub->stat_id);
        continue;
      }
      want(s->stat_id);
      for (const CommandSpec* sub : s->sub_specs) want(sub->stat_id);
    }
  } else {
    for (size_t i = 0; i < reg.stat_count(); i++) wanted.push_back(i);
  }
  std::vector<std::vector<uint64_t>> merged(wanted.size());
  std::mutex mu;
  co_await RunOn(srv.AllShards(), [&](Worker& w) {
    std::lock_guard<std::mutex> lock(mu);  // the shards run in parallel
    for (size_t i = 0; i < wanted.size(); i++) {
      const auto& cmds = w.stats().commands;
      if (wanted[i] < cmds.size()) latency::Merge(&merged[i], cmds[wanted[i]].latency);
    }
  });
  size_t n = 0;
  for (const auto& h : merged) n += latency::Total(h) != 0;
  rb.Map(n);
  for (size_t i = 0; i < wanted.size(); i++) {
    uint64_t calls = latency::Total(merged[i]);
    if (calls == 0) continue;
    rb.Bulk(reg.stat_name(wanted[i]));
    rb.Map(2);
    rb.Bulk("calls");
    rb.Integer(static_cast<int64_t>(calls));
    rb.Bulk("histogram_usec");
    auto buckets = latency::CumulativeMicros(merged[i], CycleClock::TicksPerMicro());
    rb.Map(buckets.size());
    for (const auto& [us, count] : buckets) {
      rb.Integer(static_cast<int64_t>(us));
      rb.Integer(static_cast<int64_t>(count));
    }
  }
  c->FinishFiber(std::move(out));
}

// ---- MONITOR ----

void CmdMonitor(Client& c, CmdArgs, ReplyBuilder& rb) {
  if (c.monitor) return;  // a second MONITOR is ignored, without a reply (as Redis)
  c.worker().AddMonitor(&c);
  rb.Ok();
}

}  // namespace

const std::vector<std::string> kSlowLogSubcommands = {"get", "len", "reset", "help"};
const std::vector<std::string> kLatencySubcommands = {"doctor", "graph",     "history", "latest",
                                                      "reset",  "histogram", "help"};

void RegisterIntrospectionFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, ConnFn fn,
                 const std::vector<std::string>* subs, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags | kCmdServer, 0, 0, 0};
    s.conn_fn = fn;
    s.subcommands = subs;
    s.group = "server";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("slowlog", -2, kCmdAdmin | kCmdLoading | kCmdStale, CmdSlowLog, &kSlowLogSubcommands,
      "2.2.12", "A container for slow log commands.");
  add("monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, CmdMonitor, nullptr,
      "1.0.0", "Listens for all requests received by the server in real-time.");
  add("latency", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, CmdLatency,
      &kLatencySubcommands, "2.8.13", "A container for latency diagnostics commands.");
  CommandSpec* latency = r.FindMutable("latency");
  latency->fiber_fn = LatencyHistogramFiber;
  latency->needs_fiber = LatencyNeedsFiber;
}

}  // namespace strata
