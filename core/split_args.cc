#include "core/split_args.h"

#include <cctype>

namespace strata {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && std::isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= n) return true;
    std::string cur;
    bool in_dq = false;
    bool in_sq = false;
    bool done = false;
    while (!done) {
      if (in_dq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          cur += static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3]));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          i++;
          char c = line[i];
          switch (c) {
            case 'n':
              c = '\n';
              break;
            case 'r':
              c = '\r';
              break;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'a':
              c = '\a';
              break;
            default:
              break;
          }
          cur += c;
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur += line[i];
        }
      } else if (in_sq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          cur += '\'';
        } else if (line[i] == '\'') {
          if (i + 1 < n && !std::isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          cur += line[i];
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        switch (line[i]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_dq = true;
            break;
          case '\'':
            in_sq = true;
            break;
          default:
            cur += line[i];
            break;
        }
      }
      if (i < n) i++;
    }
    out->push_back(std::move(cur));
  }
}

}  // namespace strata
