#include "core/geohash.h"

#include <gtest/gtest.h>

#include <cstdio>
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

}  // namespace
}  // namespace strata::geo
