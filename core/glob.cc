#include "core/glob.h"

#include <cctype>

namespace strata {
namespace {

// Recursion depth is bounded by the number of '*' in the pattern; consecutive '*' are
// collapsed and each '*' level tries each suffix once, as Redis's stringmatchlen does,
// plus a "skip" flag that stops pathological patterns from going exponential.
bool MatchImpl(const char* p, size_t plen, const char* s, size_t slen, bool nocase,
               bool* skip_longer, int nesting) {
  if (nesting > 1000) return false;
  auto fold = [nocase](unsigned char c) { return nocase ? std::tolower(c) : c; };
  while (plen && slen) {
    switch (p[0]) {
      case '*': {
        while (plen > 1 && p[1] == '*') {
          p++;
          plen--;
        }
        if (plen == 1) return true;
        while (slen) {
          if (MatchImpl(p + 1, plen - 1, s, slen, nocase, skip_longer, nesting + 1)) return true;
          if (*skip_longer) return false;
          s++;
          slen--;
        }
        *skip_longer = true;
        return false;
      }
      case '?':
        s++;
        slen--;
        break;
      case '[': {
        p++;
        plen--;
        bool negate = plen && p[0] == '^';
        if (negate) {
          p++;
          plen--;
        }
        bool match = false;
        while (true) {
          if (plen == 0) {
            // Unterminated class: step back so the outer loop sees the end.
            break;
          }
          if (p[0] == '\\' && plen >= 2) {
            p++;
            plen--;
            if (fold(p[0]) == fold(s[0])) match = true;
          } else if (p[0] == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            int start = fold(p[0]);
            int end = fold(p[2]);
            int c = fold(s[0]);
            if (start > end) std::swap(start, end);
            p += 2;
            plen -= 2;
            if (c >= start && c <= end) match = true;
          } else {
            if (fold(p[0]) == fold(s[0])) match = true;
          }
          p++;
          plen--;
        }
        if (plen == 0) {
          // Redis treats the pattern as ended here; keep p pointing at the end.
          p--;
          plen++;
        }
        if (negate) match = !match;
        if (!match) return false;
        s++;
        slen--;
        break;
      }
      case '\\':
        if (plen >= 2) {
          p++;
          plen--;
        }
        [[fallthrough]];
      default:
        if (fold(p[0]) != fold(s[0])) return false;
        s++;
        slen--;
        break;
    }
    p++;
    plen--;
    if (slen == 0) {
      while (plen && *p == '*') {
        p++;
        plen--;
      }
      break;
    }
  }
  if (slen == 0) {
    while (plen && *p == '*') {
      p++;
      plen--;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  bool skip_longer = false;
  return MatchImpl(pattern.data(), pattern.size(), text.data(), text.size(), nocase, &skip_longer,
                   0);
}

}  // namespace strata
