#include "tools/strata-mem/bench_cmd.h"

#include <unistd.h>

#include <chrono>
#include <thread>

namespace strata::mem {
namespace {

bool DbSize(RespClient* client, int64_t* out, std::string* error) {
  Reply reply;
  if (!client->CallOk({"DBSIZE"}, &reply, error)) return false;
  if (reply.type != Reply::Type::kInteger) {
    *error = "server " + client->name() + " answered DBSIZE with " + reply.Describe();
    return false;
  }
  *out = reply.integer;
  return true;
}

void Settle(int ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace

bool BenchOneServer(const BenchOptions& options, const Endpoint& endpoint, BenchResult* result,
                    std::string* error) {
  RespClient client;
  if (!client.Connect(endpoint, options.client, error)) return false;
  InfoFields server_info;
  if (!FetchInfo(&client, "server", &server_info, error)) return false;
  result->server = endpoint.ToString();
  result->identity = IdentifyServer(server_info);
  result->type = DataTypeName(options.populate.type);
  result->keys = options.populate.keys;
  result->data_size = options.populate.data_size;
  result->fields = options.populate.fields;
  result->key_prefix = options.populate.key_prefix;

  int64_t size = 0;
  if (!DbSize(&client, &size, error)) return false;
  Reply reply;
  if (options.yes) {
    if (!client.CallOk({"FLUSHALL"}, &reply, error)) return false;
  } else if (size > 0) {
    *error = "server " + client.name() + " holds " + std::to_string(size) +
             " keys in db 0; bench measures an empty server. Pass --yes to FLUSHALL it "
             "first (this deletes every key on that server)";
    return false;
  }
  Settle(options.settle_ms);
  if (!FetchMemory(&client, &result->before, error)) return false;

  Progress progress(ProgressEnabled(options.progress, STDERR_FILENO), "populating " + client.name(),
                    options.populate.keys);
  auto start = std::chrono::steady_clock::now();
  if (!Populate(&client, options.populate, &progress, error)) {
    progress.Abandon();
    return false;
  }
  result->populate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.Finish(options.populate.keys);

  Settle(options.settle_ms);
  if (!FetchMemory(&client, &result->after, error)) return false;
  if (!DbSize(&client, &size, error)) return false;
  if (static_cast<uint64_t>(size) != options.populate.keys) {
    std::fprintf(stderr,
                 "strata-mem: warning: server %s holds %lld keys after writing %llu "
                 "(evictions, maxmemory, or another client?); bytes/key divides by %llu\n",
                 client.name().c_str(), static_cast<long long>(size),
                 static_cast<unsigned long long>(options.populate.keys),
                 static_cast<unsigned long long>(options.populate.keys));
  }
  return true;
}

int RunBench(const BenchOptions& options, FILE* out) {
  std::vector<BenchResult> results;
  for (const Endpoint& endpoint : options.servers) {
    BenchResult result;
    std::string error;
    if (!BenchOneServer(options, endpoint, &result, &error)) {
      std::fprintf(stderr, "strata-mem bench: %s\n", error.c_str());
      return 1;
    }
    results.push_back(std::move(result));
  }
  std::string text = RenderBench(results, options.format);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
  return 0;
}

}  // namespace strata::mem
