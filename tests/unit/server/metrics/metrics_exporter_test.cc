#include "server/metrics/metrics_exporter.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

const char kInfo[] =
    "# Server\r\nredis_version:7.0.15\r\nstrata_version:0.1.0\r\nredis_mode:standalone\r\n"
    "os:Linux\r\nio_backend:io_uring\r\nrun_id:abc\r\ntcp_port:6379\r\nuptime_in_seconds:42\r\n"
    "thread_count:2\r\n\r\n"
    "# Clients\r\nconnected_clients:3\r\nblocked_clients:0\r\n\r\n"
    "# Memory\r\nused_memory:1000\r\nused_memory_human:1000B\r\nmaxmemory:0\r\n"
    "mem_fragmentation_ratio:1.50\r\nmem_keys:2\r\n"
    "mem_type_string:keys=1,bytes=8,bytes_per_key=8.00\r\n"
    "mem_shard_0:used=600,dataset=8,table=7296,clients=10,io=14,keys=1,connections=1\r\n\r\n"
    "# Persistence\r\nloading:0\r\nrdb_last_save_time:1700000000\r\nsnapshot_last_bytes:99\r\n"
    "snapshot_last_kind:none\r\n\r\n"
    "# Tiered\r\ntiered_enabled:0\r\n\r\n"
    "# Stats\r\ntotal_commands_processed:10\r\nkeyspace_hits:4\r\nkeyspace_misses:1\r\n\r\n"
    "# Commandstats\r\ncmdstat_get:calls=5,usec=250,usec_per_call=50.00,rejected_calls=0,"
    "failed_calls=1\r\ncmdstat_client|list:calls=1,usec=10,usec_per_call=10.00,"
    "rejected_calls=0,failed_calls=0\r\n\r\n"
    "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=1500\r\n";

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(MetricsExporterTest, RedisExporterNames) {
  std::string t = PrometheusFromInfo(kInfo);
  EXPECT_TRUE(Has(t, "redis_up 1"));
  EXPECT_TRUE(Has(t, "redis_connected_clients 3"));
  EXPECT_TRUE(Has(t, "redis_memory_used_bytes 1000"));
  EXPECT_TRUE(Has(t, "redis_mem_fragmentation_ratio 1.50"));
  EXPECT_TRUE(Has(t, "redis_keyspace_hits_total 4"));
  EXPECT_TRUE(Has(t, "redis_commands_processed_total 10"));
  EXPECT_TRUE(Has(t, "redis_commands_total{cmd=\"get\"} 5"));
  EXPECT_TRUE(Has(t, "redis_commands_duration_seconds_total{cmd=\"get\"} 0.00025000000000000001"));
  EXPECT_TRUE(Has(t, "redis_commands_failed_calls_total{cmd=\"get\"} 1"));
  EXPECT_TRUE(Has(t, "redis_commands_total{cmd=\"client|list\"} 1"));
  EXPECT_TRUE(Has(t, "redis_db_keys{db=\"db0\"} 2"));
  EXPECT_TRUE(Has(t, "redis_db_keys_expiring{db=\"db0\"} 1"));
  EXPECT_TRUE(Has(t, "redis_db_avg_ttl_seconds{db=\"db0\"} 1.5"));
  EXPECT_TRUE(Has(t, "redis_rdb_last_save_timestamp_seconds 1700000000"));
  EXPECT_TRUE(Has(t, "# TYPE redis_commands_total counter"));
  EXPECT_TRUE(Has(t, "# TYPE redis_connected_clients gauge"));
  // A text field is not a number: no sample.
  EXPECT_EQ(t.find("used_memory_human"), std::string::npos);
  EXPECT_EQ(t.find("snapshot_last_kind"), std::string::npos);
}

TEST(MetricsExporterTest, AReplicasFigures) {
  std::string info =
      "# Server\r\nrun_id:abc\r\n\r\n# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"
      "master_link_status:down\r\nmaster_last_io_seconds_ago:-1\r\n"
      "master_sync_in_progress:0\r\nmaster_link_down_since_seconds:7\r\n"
      "slave_repl_offset:123\r\nslave_priority:100\r\nslave_read_only:1\r\n"
      "master_repl_offset:123\r\n";
  std::string t = PrometheusFromInfo(info);
  EXPECT_TRUE(Has(t, "redis_master_link_up 0"));
  EXPECT_TRUE(Has(t, "redis_master_link_down_since_seconds 7"));
  EXPECT_TRUE(Has(t, "redis_slave_repl_offset 123"));
  EXPECT_TRUE(Has(t, "redis_master_repl_offset 123"));
  EXPECT_TRUE(Has(t, "redis_slave_read_only 1"));
  EXPECT_NE(t.find("role=\"slave\""), std::string::npos);
  EXPECT_EQ(t.find("master_host"), std::string::npos);
  // A master has no link to report.
  EXPECT_EQ(PrometheusFromInfo(kInfo).find("redis_master_link_up"), std::string::npos);
  EXPECT_NE(PrometheusFromInfo(kInfo).find("role=\"master\""), std::string::npos);
}

TEST(MetricsExporterTest, StrataFigures) {
  std::string t = PrometheusFromInfo(kInfo);
  EXPECT_TRUE(Has(t, "strata_type_keys{type=\"string\"} 1"));
  EXPECT_TRUE(Has(t, "strata_type_bytes_per_key{type=\"string\"} 8.00"));
  EXPECT_TRUE(Has(t, "strata_shard_used_memory_bytes{shard=\"0\"} 600"));
  EXPECT_TRUE(Has(t, "strata_shard_keys{shard=\"0\"} 1"));
  EXPECT_TRUE(Has(t, "strata_snapshot_last_bytes 99"));
  EXPECT_TRUE(Has(t, "strata_tiered_enabled 0"));
  EXPECT_TRUE(Has(t, "strata_threads 2"));
  EXPECT_TRUE(Has(t, "strata_io_backend{backend=\"io_uring\"} 1"));
}

TEST(MetricsExporterTest, EveryFamilyHasHelpAndTypeOnce) {
  std::string t = PrometheusFromInfo(kInfo);
  size_t helps = 0, types = 0, pos = 0;
  while ((pos = t.find("# HELP redis_commands_total ", pos)) != std::string::npos) {
    helps++;
    pos++;
  }
  pos = 0;
  while ((pos = t.find("# TYPE redis_commands_total ", pos)) != std::string::npos) {
    types++;
    pos++;
  }
  EXPECT_EQ(helps, 1u);
  EXPECT_EQ(types, 1u);
}

}  // namespace
}  // namespace strata
