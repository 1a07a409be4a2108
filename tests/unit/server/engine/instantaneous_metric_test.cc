#include "server/engine/instantaneous_metric.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(InstantaneousMetricTest, MeanOfTheLastSamplesAfterARampUp) {
  InstantaneousMetric m;
  EXPECT_EQ(m.PerSecond(), 0u);
  uint64_t counter = 0;
  int64_t now = 1000;
  m.Sample(now, counter);  // the first sample only sets the base
  EXPECT_EQ(m.PerSecond(), 0u);
  // 500 a tick of 100 ms: 5000 a second once every sample holds it.
  for (int i = 1; i <= InstantaneousMetric::kSamples; i++) {
    counter += 500;
    now += 100;
    m.Sample(now, counter);
    EXPECT_EQ(m.PerSecond(), 5000u * i / InstantaneousMetric::kSamples);
  }
  // Idle: the rate falls to nothing within kSamples ticks.
  for (int i = 0; i < InstantaneousMetric::kSamples; i++) {
    now += 100;
    m.Sample(now, counter);
  }
  EXPECT_EQ(m.PerSecond(), 0u);
}

TEST(InstantaneousMetricTest, UnevenTicksAndAClockThatStandsOrStepsBack) {
  InstantaneousMetric m;
  m.Sample(1000, 0);
  m.Sample(1250, 1000);  // 4000 a second over 250 ms
  EXPECT_EQ(m.PerSecond(), 4000u / InstantaneousMetric::kSamples);
  m.Sample(1250, 5000);  // no time passed: no sample, the base stays
  m.Sample(900, 6000);   // the wall clock stepped back: no sample either
  EXPECT_EQ(m.PerSecond(), 4000u / InstantaneousMetric::kSamples);
  m.Sample(1350, 2000);  // 1000 over 100 ms since the last base (1250, 1000)
  EXPECT_EQ(m.PerSecond(), (4000u + 10000u) / InstantaneousMetric::kSamples);
}

}  // namespace
}  // namespace strata
