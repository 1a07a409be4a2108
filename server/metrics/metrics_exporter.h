// The Prometheus endpoint: `metrics-port` (0 = off) serves GET /metrics over HTTP in the
// Prometheus text format (version 0.0.4).
//
// Design. A thread of its own, outside the workers, handles one scrape at a time: it
// accepts on metrics-bind:metrics-port, reads the request (at most 8 KB, 2 s), and for
// /metrics asks the server for `INFO everything` over RESP on its own port, as
// redis_exporter does (with AUTH when requirepass is set). INFO gathers each worker's
// figures with one hop per worker, so a scrape never holds a worker for more than one of
// its loop turns, and every figure is the one INFO shows. The reply translates INFO:
//   - redis_exporter's names where a counterpart exists (redis_up, redis_commands_total,
//     redis_commands_duration_seconds_total, redis_memory_used_bytes,
//     redis_connected_clients, redis_keyspace_hits_total, redis_db_keys, ...);
//   - strata's own under strata_: per-shard memory and keys, keys and bytes per key by
//     type, snapshot and spill (tiered) figures, the thread count and the io backend.
// When the server does not answer, the scrape still succeeds with redis_up 0.
//
// Thread-safety: Start and Stop on the main thread; the rest on the exporter's thread.
// PrometheusFromInfo is a pure function.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace strata {

// The Prometheus text for an INFO reply (sections and "field:value" lines).
std::string PrometheusFromInfo(std::string_view info);

class MetricsServer {
 public:
  struct Options {
    std::string bind = "127.0.0.1";
    int port = 0;
    std::string server_host = "127.0.0.1";  // where the RESP server listens
    int server_port = 6379;
    std::string password;  // requirepass, "" for none
  };

  MetricsServer() = default;
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Opens the listening socket and starts the thread; false with *error when the
  // address cannot be bound.
  bool Start(const Options& opts, std::string* error);
  void Stop();

 private:
  void Run();
  void Serve(int fd);
  std::string Scrape();

  Options opts_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace strata
