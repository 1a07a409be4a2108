// TextTable: a plain-text table with aligned columns, for terminal output.
//
// Columns are sized to their widest cell (counted in UTF-8 characters), separated by two
// spaces, with a dashed line under the header. Cells are used as given; escape them
// (escape.h) before adding.
// Thread-safety: a value type.
#pragma once

#include <string>
#include <vector>

namespace strata::mem {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  void AddColumn(std::string header, Align align);
  // A row with one cell per column (missing cells are blank, extra ones dropped).
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// Characters in a UTF-8 string (bytes that do not continue a sequence).
size_t DisplayWidth(const std::string& s);

}  // namespace strata::mem
