// Geohash in Redis's form, so that a geo key (a sorted set whose scores are 52-bit
// geohashes) holds the same scores in strata and in Redis, and every search, distance and
// coordinate comes out the same to the last digit.
//
// The encoding: the world between longitude -180..180 and latitude -85.05112878..
// 85.05112878 (the Web Mercator limits) is halved `step` times along each axis; a point's
// cell is the two step-bit offsets interleaved, latitude in the even bits and longitude in
// the odd ones. A member's score is its cell at step 26 (52 bits), a whole number that a
// double holds exactly. Decoding gives the cell's centre, clamped to the limits.
//
// A search (Areas) covers its shape with the centre cell and its eight neighbours at a
// step chosen from the radius, drops the neighbours the shape cannot reach, and each
// remaining cell is one score range [min, max) of the sorted set. Candidates are then kept
// by their exact distance (haversine on a sphere of radius 6372797.560856 m), in the same
// order of operations as Redis 7.0, so the same points pass the same tests.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace strata::geo {

constexpr double kLonMin = -180;
constexpr double kLonMax = 180;
constexpr double kLatMin = -85.05112878;
constexpr double kLatMax = 85.05112878;
constexpr int kStepMax = 26;  // 52 bits
constexpr double kEarthRadiusMeters = 6372797.560856;

// A cell: `step` bits per axis, interleaved. All zero means "no cell" (a dropped
// neighbour).
struct Cell {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool none() const { return bits == 0 && step == 0; }
};

struct Range {
  double min, max;
};
struct Area {
  Range lon, lat;
};

// The coordinate ranges: Redis's (latitude to the Mercator limit) and the standard
// geohash's (latitude -90..90, for GEOHASH's text).
constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};
constexpr Range kStdLatRange{-90, 90};

// Whether a point may be stored (GEOADD's check).
inline bool ValidLonLat(double lon, double lat) {
  return !(lon < kLonMin || lon > kLonMax || lat < kLatMin || lat > kLatMax);
}

// The cell of (lon, lat) at step (1..32); false outside the ranges.
bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, Cell* out);
// The 52-bit score of a valid point.
uint64_t Score(double lon, double lat);
// A cell's bounds; false for the empty cell.
bool Decode(Range lon_range, Range lat_range, Cell cell, Area* out);
// A score's point (its cell's centre, clamped); false when it is not a cell (0).
bool DecodeScore(double score, double* lon, double* lat);
// The 11-character geohash text of a score (Redis's GEOHASH).
std::string HashText(double score);

// A cell aligned to 52 bits (the lowest score inside it).
inline uint64_t Align52(Cell c) { return c.bits << (52 - c.step * 2); }

double Distance(double lon1, double lat1, double lon2, double lat2);

// A search shape around (lon, lat): a circle of `radius`, or a box `width` x `height`,
// in units of `to_meters` metres.
struct Shape {
  bool box = false;
  double lon = 0, lat = 0;
  double radius = 0;
  double width = 0, height = 0;
  double to_meters = 1;
};

// Whether a point lies in the shape; *dist is its distance from the centre (metres).
bool InShape(const Shape& s, double lon, double lat, double* dist);

// A cheap test that rules out most candidates of a search before InShape's trigonometry:
// a point whose latitude difference from the centre, or whose longitude difference given
// the least cosine of latitude the shape reaches, already puts it beyond the shape fails
// InShape too. The limits carry a margin (a millionth, and 1e-8 degrees) far above the
// rounding of InShape's arithmetic, so a point at the edge always gets the exact test and
// results do not change.
class ShapeFilter {
 public:
  explicit ShapeFilter(const Shape& s);
  bool Excludes(double lon, double lat) const {
    double dlat = lat - lat_;
    if (dlat > lat_limit_ || -dlat > lat_limit_) return true;
    double dlon = lon > lon_ ? lon - lon_ : lon_ - lon;
    if (dlon > 180) dlon = 360 - dlon;
    return dlon > lon_limit_;
  }

 private:
  double lon_, lat_;
  double lat_limit_, lon_limit_;  // degrees; 360 when there is none
};

// The cells that cover a shape, in Redis's order: centre, N, S, E, W, NE, NW, SE, SW.
// Dropped ones are none().
std::array<Cell, 9> Areas(const Shape& s);

}  // namespace strata::geo
