#include "core/geohash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace strata::geo {
namespace {

std::string Human(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17Lf", static_cast<long double>(v));
  std::string s(buf);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// Redis 7's documented example values (GEOADD Sicily ... Palermo, Catania).
TEST(GeohashTest, ScoresMatchRedis) {
  EXPECT_EQ(Score(13.361389, 38.115556), 3479099956230698ULL);
  EXPECT_EQ(Score(15.087269, 37.502669), 3479447370796909ULL);
}

TEST(GeohashTest, DecodeGivesCellCentre) {
  double lon, lat;
  ASSERT_TRUE(DecodeScore(3479099956230698.0, &lon, &lat));
  EXPECT_EQ(Human(lon), "13.36138933897018433");
  EXPECT_EQ(Human(lat), "38.11555639549629859");
}

TEST(GeohashTest, HashTextMatchesRedis) {
  EXPECT_EQ(HashText(3479099956230698.0), "sqc8b49rny0");
  EXPECT_EQ(HashText(3479447370796909.0), "sqdtr74hyu0");
}

TEST(GeohashTest, DistanceMatchesRedis) {
  double lon1, lat1, lon2, lat2;
  DecodeScore(3479099956230698.0, &lon1, &lat1);
  DecodeScore(3479447370796909.0, &lon2, &lat2);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", Distance(lon1, lat1, lon2, lat2));
  EXPECT_STREQ(buf, "166274.1516");
  std::snprintf(buf, sizeof(buf), "%.4f", Distance(lon1, lat1, lon2, lat2) / 1000);
  EXPECT_STREQ(buf, "166.2742");
}

TEST(GeohashTest, RangeLimits) {
  EXPECT_TRUE(ValidLonLat(180, 85.05112878));
  EXPECT_TRUE(ValidLonLat(-180, -85.05112878));
  EXPECT_FALSE(ValidLonLat(180.0001, 0));
  EXPECT_FALSE(ValidLonLat(0, 85.06));
  Cell c;
  EXPECT_FALSE(Encode(kLonRange, kLatRange, 0, 86, kStepMax, &c));
  EXPECT_FALSE(Encode(kLonRange, kLatRange, 0, 0, 0, &c));
  // The corners decode inside the limits (clamped).
  double lon, lat;
  DecodeScore(static_cast<double>(Score(180, 85.05112878)), &lon, &lat);
  EXPECT_LE(lon, kLonMax);
  EXPECT_LE(lat, kLatMax);
}

TEST(GeohashTest, EncodeDecodeRoundTripWithinACell) {
  for (double lon = -179.5; lon < 180; lon += 7.3) {
    for (double lat = -85; lat < 85; lat += 5.9) {
      double dlon, dlat;
      DecodeScore(static_cast<double>(Score(lon, lat)), &dlon, &dlat);
      EXPECT_NEAR(dlon, lon, 360.0 / (1 << 26));
      EXPECT_NEAR(dlat, lat, 171.0 / (1 << 26));
    }
  }
}

TEST(GeohashTest, AreasCoverTheCircle) {
  Shape s;
  s.lon = 15;
  s.lat = 37;
  s.radius = 200;
  s.to_meters = 1000;
  auto cells = Areas(s);
  ASSERT_FALSE(cells[0].none());
  // Every point of the circle's bounding box lies in one of the cells.
  for (double dlon = -2.2; dlon <= 2.2; dlon += 0.1) {
    for (double dlat = -1.8; dlat <= 1.8; dlat += 0.1) {
      double d;
      if (!InShape(s, 15 + dlon, 37 + dlat, &d)) continue;
      uint64_t score = Score(15 + dlon, 37 + dlat);
      bool covered = false;
      for (const Cell& c : cells) {
        if (c.none()) continue;
        uint64_t lo = Align52(c), hi = Align52(Cell{c.bits + 1, c.step});
        covered |= score >= lo && score < hi;
      }
      EXPECT_TRUE(covered) << dlon << "," << dlat;
    }
  }
}

TEST(GeohashTest, BoxUsesAxisDistances) {
  Shape s;
  s.box = true;
  s.lon = 0;
  s.lat = 0;
  s.width = 200;
  s.height = 100;
  s.to_meters = 1000;
  double d;
  EXPECT_TRUE(InShape(s, 0.8, 0.4, &d));    // ~89 km east, ~44 km north
  EXPECT_FALSE(InShape(s, 0.0, 0.5, &d));   // ~55 km north: outside the 50 km half-height
  EXPECT_FALSE(InShape(s, 0.95, 0.0, &d));  // ~105 km east
}

// The filter never rules out a point that InShape keeps: random shapes anywhere (poles,
// the antimeridian, tiny and planet-sized), random points near them and points placed
// right at the edge.
TEST(GeohashTest, FilterNeverExcludesAPointInTheShape) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  int excluded = 0, kept = 0;
  for (int shape_i = 0; shape_i < 3000; shape_i++) {
    Shape s;
    s.box = shape_i % 2 == 1;
    s.lon = -180 + 360 * u(rng);
    s.lat = kLatMin + (kLatMax - kLatMin) * u(rng);
    if (shape_i % 7 == 0) s.lat = (shape_i % 14 == 0 ? 1 : -1) * (84 + u(rng));
    double scale = std::pow(10, -1 + 8 * u(rng));  // 0.1 m .. 10000 km
    s.radius = scale;
    s.width = scale * (0.2 + 3 * u(rng));
    s.height = scale * (0.2 + 3 * u(rng));
    s.to_meters = 1;
    ShapeFilter f(s);
    double reach_deg = std::max(s.radius, std::max(s.width, s.height)) / 111000.0;
    for (int i = 0; i < 200; i++) {
      double lon, lat;
      if (i < 100) {
        lon = s.lon + (u(rng) * 2 - 1) * reach_deg * 3;
        lat = s.lat + (u(rng) * 2 - 1) * reach_deg * 1.5;
      } else {
        lon = -180 + 360 * u(rng);
        lat = kLatMin + (kLatMax - kLatMin) * u(rng);
      }
      if (lon > 180) lon -= 360;
      if (lon < -180) lon += 360;
      lat = std::clamp(lat, kLatMin, kLatMax);
      double d;
      bool in = InShape(s, lon, lat, &d);
      bool ex = f.Excludes(lon, lat);
      ASSERT_FALSE(in && ex) << s.box << " " << s.lon << "," << s.lat << " r=" << s.radius
                             << " point " << lon << "," << lat;
      excluded += ex;
      kept += !ex;
    }
    // Points at the edge: bisect along a random bearing to the last point inside.
    double bearing = u(rng) * 2 * M_PI;
    double lo = 0, hi = reach_deg * 4;
    for (int it = 0; it < 60; it++) {
      double mid = (lo + hi) / 2;
      double lon = s.lon + mid * std::cos(bearing), lat = s.lat + mid * std::sin(bearing);
      double d;
      if (lat > kLatMax || lat < kLatMin || lon > 180 || lon < -180) {
        hi = mid;
        continue;
      }
      (InShape(s, lon, lat, &d) ? lo : hi) = mid;
    }
    double lon = s.lon + lo * std::cos(bearing), lat = s.lat + lo * std::sin(bearing);
    double d;
    if (InShape(s, lon, lat, &d)) {
      ASSERT_FALSE(f.Excludes(lon, lat));
    }
  }
  // The filter does its job: most far points are ruled out cheaply.
  EXPECT_GT(excluded, kept);
}

}  // namespace
}  // namespace strata::geo
