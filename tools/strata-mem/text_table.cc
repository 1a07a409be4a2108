#include "tools/strata-mem/text_table.h"

#include <algorithm>

namespace strata::mem {

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80) n++;
  }
  return n;
}

void TextTable::AddColumn(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); c++) {
    width[c] = DisplayWidth(headers_[c]);
    for (const auto& row : rows_) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); c++) {
      size_t pad = width[c] - DisplayWidth(cells[c]);
      if (c > 0) line += "  ";
      if (aligns_[c] == Align::kRight) line.append(pad, ' ');
      line += cells[c];
      if (aligns_[c] == Align::kLeft && c + 1 < cells.size()) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  emit(headers_);
  std::vector<std::string> dashes;
  for (size_t w : width) dashes.emplace_back(w, '-');
  emit(dashes);
  for (const auto& row : rows_) emit(row);
  return out;
}

}  // namespace strata::mem
