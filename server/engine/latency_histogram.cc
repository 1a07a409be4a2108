#include "server/engine/latency_histogram.h"

#include <cmath>

namespace strata::latency {

void Merge(std::vector<uint64_t>* a, const std::vector<uint64_t>& b) {
  if (b.empty()) return;
  if (a->empty()) a->assign(kBuckets, 0);
  for (size_t i = 0; i < kBuckets && i < b.size(); i++) (*a)[i] += b[i];
}

uint64_t Total(const std::vector<uint64_t>& h) {
  uint64_t n = 0;
  for (uint64_t c : h) n += c;
  return n;
}

double PercentileMicros(const std::vector<uint64_t>& h, double p, uint64_t ticks_per_us) {
  uint64_t total = Total(h);
  if (total == 0) return 0;
  // The rank of the run at p% (at least the first).
  uint64_t want = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total)));
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (size_t b = 0; b < h.size(); b++) {
    seen += h[b];
    if (seen >= want) {
      return static_cast<double>(BucketUpperTicks(b)) / static_cast<double>(ticks_per_us);
    }
  }
  return static_cast<double>(BucketUpperTicks(h.size() - 1)) / static_cast<double>(ticks_per_us);
}

std::vector<std::pair<uint64_t, uint64_t>> CumulativeMicros(const std::vector<uint64_t>& h,
                                                            uint64_t ticks_per_us) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t total = Total(h);
  if (total == 0) return out;
  uint64_t cumulative = 0, previous = 0;
  size_t b = 0;
  for (uint64_t bound_ns = kFirstBoundNs;; bound_ns *= 2) {
    uint64_t edge_ns = HighestEquivalentNs(bound_ns);
    // Every bucket whose runs all lie at or under the step's edge.
    while (b < h.size() &&
           static_cast<double>(BucketUpperTicks(b)) * 1000.0 / static_cast<double>(ticks_per_us) <=
               static_cast<double>(edge_ns)) {
      cumulative += h[b++];
    }
    bool last = bound_ns >= kLastBoundNs;
    if (last) cumulative = total;  // Redis clamps runs to 1 s: the last step takes the rest
    if (cumulative > previous) out.emplace_back(edge_ns / 1000, cumulative);
    previous = cumulative;
    if (last || cumulative == total) break;
  }
  return out;
}

}  // namespace strata::latency
