#include "server/engine/remote_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace strata {
namespace {

std::string Encode(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::vector<std::string> Strings(const std::vector<std::string_view>& v) {
  return std::vector<std::string>(v.begin(), v.end());
}

// Items that travel as their arguments and items that travel as the client's request
// give back the same views; the latter also give back the request's bytes.
TEST(RemoteBatchTest, ArgumentsComeBackWhetherTheyTravelAsThemselvesOrAsTheRequest) {
  RemoteBatch b;
  std::vector<std::vector<std::string>> commands = {
      {"SET", "key:000000012345", std::string(100, 'v')},
      {"GET", "k"},
      {"SET", "", std::string(12345, 'x')},
      std::vector<std::string>(11, "a"),
      std::vector<std::string>(40, "many"),  // more than ExecuteRemoteBatch keeps inline
  };
  // Arguments of every length around the small-copy sizes (CopySmall).
  for (size_t n = 0; n <= 40; n++) {
    std::string key(n, 'k');
    for (size_t j = 0; j < n; j++) key[j] = static_cast<char>('a' + (j * 7 + n) % 26);
    commands.push_back({"GET", key});
  }
  std::vector<std::string> raws;
  for (const auto& c : commands) raws.push_back(Encode(c));
  // The same request with other bytes after a bulk (RESP does not check them): still
  // its arguments.
  raws.push_back("*2\r\n$3\r\nGETXY$1\r\nk\n\n");
  commands.push_back({"GET", "k"});
  for (size_t i = 0; i < commands.size(); i++) {
    std::vector<std::string_view> views(commands[i].begin(), commands[i].end());
    b.Add(nullptr, nullptr, i, 0, 2, views.data(), views.size(), 0);
    b.Add(nullptr, nullptr, i, 0, 2, views.data(), views.size(), 0, raws[i]);
  }
  ASSERT_EQ(b.items.size(), 2 * commands.size());
  std::vector<std::string_view> out;
  for (size_t i = 0; i < commands.size(); i++) {
    out.assign(b.items[2 * i].argc, std::string_view());
    EXPECT_TRUE(b.ArgsOf(b.items[2 * i], out.data()).empty());
    EXPECT_EQ(Strings(out), commands[i]) << i;
    if (out.size() >= 2) {
      EXPECT_EQ(b.SecondArgOf(b.items[2 * i]).data(), out[1].data()) << i;
      EXPECT_EQ(b.SecondArgOf(b.items[2 * i]).size(), out[1].size()) << i;
    }
    out.assign(b.items[2 * i + 1].argc, std::string_view());
    EXPECT_EQ(b.ArgsOf(b.items[2 * i + 1], out.data()), raws[i]) << i;
    EXPECT_EQ(Strings(out), commands[i]) << i;
  }
}

}  // namespace
}  // namespace strata
