#include "server/base/config.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(ConfigTest, DefaultsAndTypes) {
  Config c;
  EXPECT_EQ(c.Get("port"), "6379");
  EXPECT_EQ(c.Get("maxmemory"), "0");
  EXPECT_EQ(c.Get("proto-max-bulk-len"), "536870912");
  EXPECT_EQ(c.Get("appendonly"), "no");
  EXPECT_EQ(c.Set("maxmemory", "100mb", true), "");
  EXPECT_EQ(c.Int("maxmemory"), 100 << 20);
  EXPECT_EQ(c.Set("maxmemory", "lots", true), "argument must be a memory value");
  EXPECT_EQ(c.Set("databases", "4", true), "can't set immutable config");
  EXPECT_EQ(c.Set("protected-mode", "maybe", true), "argument must be 'yes' or 'no'");
  EXPECT_EQ(c.Set("nosuch", "1", true), "unknown option");
}

TEST(ConfigTest, FileLinesAndErrors) {
  Config c;
  std::string err;
  ASSERT_TRUE(
      c.LoadFileText("# comment\nport 7000\nsave \"\"\nmaxmemory 4gb\n"
                     "save 900 1 300 10\n  databases 8\n",
                     &err))
      << err;
  EXPECT_EQ(c.Int("port"), 7000);
  EXPECT_EQ(c.Int("databases"), 8);
  EXPECT_EQ(c.Int("maxmemory"), 4LL << 30);
  EXPECT_EQ(c.String("save"), "900 1 300 10");
  EXPECT_FALSE(c.LoadFileText("port 1\nbogus-key 5\n", &err));
  EXPECT_NE(err.find("line 2"), std::string::npos);
  EXPECT_NE(err.find("bogus-key"), std::string::npos);
  EXPECT_FALSE(c.LoadFileText("appendonly yes\n", &err));
}

// The packaged /etc/strata/strata.conf is built from DefaultsTemplate(): it must name
// every option, and uncommenting any of its settings must load and give the default.
TEST(ConfigTest, DefaultsTemplateListsEveryOptionAndLoadsUncommented) {
  Config c;
  const std::string tmpl = c.DefaultsTemplate();
  std::string uncommented;
  size_t settings = 0;
  size_t start = 0;
  while (start < tmpl.size()) {
    size_t end = tmpl.find('\n', start);
    if (end == std::string::npos) end = tmpl.size();
    const std::string line = tmpl.substr(start, end - start);
    start = end + 1;
    EXPECT_LE(line.size(), 120u) << line;
    if (line.empty()) continue;
    ASSERT_EQ(line[0], '#') << line;
    const std::string body = line.size() > 2 ? line.substr(2) : "";
    const std::string name = body.substr(0, body.find(' '));
    if (c.Find(name) != nullptr && c.Find(name)->name == name && body.size() > name.size()) {
      uncommented += body + "\n";
      ++settings;
    }
  }
  EXPECT_EQ(settings, c.options().size());
  for (const auto& o : c.options()) {
    EXPECT_NE(tmpl.find("\n# " + o->name + " "), std::string::npos) << o->name;
  }
  Config loaded;
  std::string err;
  ASSERT_TRUE(loaded.LoadFileText(uncommented, &err)) << err;
  for (const auto& o : c.options()) EXPECT_EQ(loaded.Get(o->name), c.Get(o->name)) << o->name;
}

TEST(ConfigTest, GlobGet) {
  Config c;
  auto m = c.GetMatching("max*");
  ASSERT_GE(m.size(), 3u);
  for (auto& kv : m) EXPECT_EQ(kv.first.rfind("max", 0), 0u);
}

}  // namespace
}  // namespace strata
