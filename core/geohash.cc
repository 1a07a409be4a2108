#include "core/geohash.h"

#include <algorithm>
#include <cmath>

namespace strata::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kMercatorMax = 20037726.37;

double ToRad(double deg) { return deg * kDegToRad; }
double ToDeg(double rad) { return rad / kDegToRad; }

// Spreads the 32 bits of v to the even bit positions of a 64-bit word.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// The inverse: the even bits of v, packed into 32.
uint32_t Gather(uint64_t v) {
  uint64_t x = v & 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

// A double converted to uint64_t as x86-64 code compiled from C does it (so a sorted-set
// score that is no geohash decodes as it does in Redis): values from 2^63 up go through
// the subtract-and-flip path, and out-of-range ones give the processor's "indefinite"
// integer.
uint64_t ScoreBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = 0x8000000000000000ULL;
  auto truncate = [](double d) -> uint64_t {
    if (!(d >= -kTwo63 && d < kTwo63)) return kIndefinite;
    return static_cast<uint64_t>(static_cast<int64_t>(d));
  };
  if (score < kTwo63) return truncate(score);
  return truncate(score - kTwo63) ^ kIndefinite;
}

// Moves a cell one step along one axis (the odd bits are longitude, the even bits
// latitude), wrapping around. The other axis's bit positions are filled with ones so
// that the carry or borrow runs through them.
void Move(Cell* c, bool lon_axis, int d) {
  if (d == 0) return;
  const uint64_t odd = 0xaaaaaaaaaaaaaaaaULL, even = 0x5555555555555555ULL;
  const uint64_t mine_mask = lon_axis ? odd : even;
  const uint64_t other_mask = lon_axis ? even : odd;
  uint64_t mine = c->bits & mine_mask;
  uint64_t other = c->bits & other_mask;
  uint64_t fill = other_mask >> (64 - c->step * 2);
  if (d > 0) {
    mine += fill + 1;
  } else {
    mine = (mine | fill) - (fill + 1);
  }
  mine &= mine_mask >> (64 - c->step * 2);
  c->bits = mine | other;
}

int EstimateSteps(double range_meters, double lat) {
  if (range_meters == 0) return kStepMax;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // so that the range fits in most cases
  // Cells narrow towards the poles.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

// The shape's bounding box: min lon, min lat, max lon, max lat.
void BoundingBox(const Shape& s, double* min_lon, double* min_lat, double* max_lon,
                 double* max_lat) {
  double height = s.to_meters * (s.box ? s.height / 2 : s.radius);
  double width = s.to_meters * (s.box ? s.width / 2 : s.radius);
  const double lat_delta = ToDeg(height / kEarthRadiusMeters);
  const double lon_delta_top =
      ToDeg(width / kEarthRadiusMeters / std::cos(ToRad(s.lat + lat_delta)));
  const double lon_delta_bottom =
      ToDeg(width / kEarthRadiusMeters / std::cos(ToRad(s.lat - lat_delta)));
  // The box is widest on the side nearer the equator.
  bool south = s.lat < 0;
  *min_lon = south ? s.lon - lon_delta_bottom : s.lon - lon_delta_top;
  *max_lon = south ? s.lon + lon_delta_bottom : s.lon + lon_delta_top;
  *min_lat = s.lat - lat_delta;
  *max_lat = s.lat + lat_delta;
}

struct Neighbours {
  Cell n, s, e, w, ne, nw, se, sw;
};

Neighbours NeighboursOf(Cell c) {
  Neighbours r;
  auto at = [&](int dx, int dy) {
    Cell m = c;
    Move(&m, true, dx);
    Move(&m, false, dy);
    return m;
  };
  r.e = at(1, 0);
  r.w = at(-1, 0);
  r.s = at(0, -1);
  r.n = at(0, 1);
  r.nw = at(-1, 1);
  r.ne = at(1, 1);
  r.se = at(1, -1);
  r.sw = at(-1, -1);
  return r;
}

}  // namespace

bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, Cell* out) {
  if (step > 32 || step == 0 || !ValidLonLat(lon, lat)) return false;
  out->bits = 0;
  out->step = static_cast<uint8_t>(step);
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  out->bits =
      Spread(static_cast<uint32_t>(lat_offset)) | (Spread(static_cast<uint32_t>(lon_offset)) << 1);
  return true;
}

uint64_t Score(double lon, double lat) {
  Cell c;
  Encode(kLonRange, kLatRange, lon, lat, kStepMax, &c);
  return Align52(c);
}

bool Decode(Range lon_range, Range lat_range, Cell cell, Area* out) {
  if (cell.none()) return false;
  uint32_t ilat = Gather(cell.bits);
  uint32_t ilon = Gather(cell.bits >> 1);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  double cells = static_cast<double>(1ULL << cell.step);
  out->lat.min = lat_range.min + (ilat * 1.0 / cells) * lat_scale;
  out->lat.max = lat_range.min + (static_cast<uint32_t>(ilat + 1) * 1.0 / cells) * lat_scale;
  out->lon.min = lon_range.min + (ilon * 1.0 / cells) * lon_scale;
  out->lon.max = lon_range.min + (static_cast<uint32_t>(ilon + 1) * 1.0 / cells) * lon_scale;
  return true;
}

bool DecodeScore(double score, double* lon, double* lat) {
  Area a;
  if (!Decode(kLonRange, kLatRange, Cell{ScoreBits(score), kStepMax}, &a)) return false;
  double x = (a.lon.min + a.lon.max) / 2;
  double y = (a.lat.min + a.lat.max) / 2;
  *lon = x > kLonMax ? kLonMax : x < kLonMin ? kLonMin : x;
  *lat = y > kLatMax ? kLatMax : y < kLatMin ? kLatMin : y;
  return true;
}

std::string HashText(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double lon, lat;
  DecodeScore(score, &lon, &lat);
  Cell c;
  Encode(kLonRange, kStdLatRange, lon, lat, kStepMax, &c);
  std::string out(11, '0');
  // 52 bits give ten characters of five bits; the eleventh is taken as zero.
  for (int i = 0; i < 10; i++) out[i] = kAlphabet[(c.bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lat1r = ToRad(lat1);
  double lon1r = ToRad(lon1);
  double lat2r = ToRad(lat2);
  double lon2r = ToRad(lon2);
  double u = std::sin((lat2r - lat1r) / 2);
  double v = std::sin((lon2r - lon1r) / 2);
  return 2.0 * kEarthRadiusMeters *
         std::asin(std::sqrt(u * u + std::cos(lat1r) * std::cos(lat2r) * v * v));
}

bool InShape(const Shape& s, double lon, double lat, double* dist) {
  if (!s.box) {
    *dist = Distance(s.lon, s.lat, lon, lat);
    return !(*dist > s.radius * s.to_meters);
  }
  double width_m = s.width * s.to_meters, height_m = s.height * s.to_meters;
  double lon_distance = Distance(lon, lat, s.lon, lat);
  double lat_distance = Distance(lon, lat, lon, s.lat);
  if (lon_distance > width_m / 2 || lat_distance > height_m / 2) return false;
  *dist = Distance(s.lon, s.lat, lon, lat);
  return true;
}

ShapeFilter::ShapeFilter(const Shape& s) : lon_(s.lon), lat_(s.lat) {
  constexpr double kRelMargin = 1e-6, kAbsMarginDeg = 1e-8;
  // Along a meridian the distance is R * |dlat| exactly: beyond the half-height (box) or
  // the radius (circle), a point is out.
  double reach_m = s.to_meters * (s.box ? s.height / 2 : s.radius);
  lat_limit_ = ToDeg(reach_m / kEarthRadiusMeters) * (1 + kRelMargin) + kAbsMarginDeg;
  lon_limit_ = 360;
  // The least cosine of latitude over the band a passing point can be in (0 when the
  // band reaches a pole: no longitude limit then).
  double lo = s.lat - lat_limit_, hi = s.lat + lat_limit_;
  if (lo <= -90 || hi >= 90) return;
  double cmin = std::min(std::cos(ToRad(lo)), std::cos(ToRad(hi)));
  if (!(cmin > 0)) return;
  // haversine: sin^2(d/2R) = sin^2(dlat/2) + cos(lat1) cos(lat2) sin^2(dlon/2), so
  // sin^2(dlon/2) <= sin^2(d/2R) / (cos(lat1) cos(lat2)) for a point within d. A box
  // measures its width along the point's own latitude: cos^2(lat2) sin^2(dlon/2).
  double half_width_m = s.to_meters * (s.box ? s.width / 2 : s.radius);
  double angle = half_width_m / kEarthRadiusMeters / 2;
  if (angle >= M_PI / 2) return;
  double sin_half = std::sin(angle);
  double denom = s.box ? cmin * cmin : std::cos(ToRad(s.lat)) * cmin;
  if (!(denom > 0)) return;
  double bound = sin_half * sin_half * (1 + kRelMargin) / denom;
  if (bound >= 1) return;
  lon_limit_ = ToDeg(2 * std::asin(std::sqrt(bound))) * (1 + kRelMargin) + kAbsMarginDeg;
}

std::array<Cell, 9> Areas(const Shape& s) {
  double min_lon, min_lat, max_lon, max_lat;
  BoundingBox(s, &min_lon, &min_lat, &max_lon, &max_lat);
  // A box's reach is its half-diagonal.
  double radius_meters =
      s.box ? std::sqrt((s.width / 2) * (s.width / 2) + (s.height / 2) * (s.height / 2)) : s.radius;
  radius_meters *= s.to_meters;
  int steps = EstimateSteps(radius_meters, s.lat);

  Cell centre;
  Area area;
  Neighbours nb;
  auto cover = [&] {
    Encode(kLonRange, kLatRange, s.lon, s.lat, steps, &centre);
    nb = NeighboursOf(centre);
    Decode(kLonRange, kLatRange, centre, &area);
  };
  cover();
  // Near a cell's edge the estimate can be one step too fine: a neighbour would not
  // reach the far side of the shape.
  Area north, south, east, west;
  Decode(kLonRange, kLatRange, nb.n, &north);
  Decode(kLonRange, kLatRange, nb.s, &south);
  Decode(kLonRange, kLatRange, nb.e, &east);
  Decode(kLonRange, kLatRange, nb.w, &west);
  bool coarser = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon ||
                 west.lon.min > min_lon;
  if (steps > 1 && coarser) {
    steps--;
    cover();
  }
  // Neighbours the shape cannot reach are dropped.
  if (steps >= 2) {
    if (area.lat.min < min_lat) nb.s = nb.sw = nb.se = Cell{};
    if (area.lat.max > max_lat) nb.n = nb.ne = nb.nw = Cell{};
    if (area.lon.min < min_lon) nb.w = nb.sw = nb.nw = Cell{};
    if (area.lon.max > max_lon) nb.e = nb.se = nb.ne = Cell{};
  }
  return {centre, nb.n, nb.s, nb.e, nb.w, nb.ne, nb.nw, nb.se, nb.sw};
}

}  // namespace strata::geo
