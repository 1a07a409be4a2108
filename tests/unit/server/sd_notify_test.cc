// SdNotify: the datagram systemd reads for Type=notify services, to a path or an
// abstract socket; nothing without NOTIFY_SOCKET; a clear error for a bad one.
#include "server/sd_notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace strata {
namespace {

class SdNotifyTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NOTIFY_SOCKET");
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }

  // Binds a datagram socket at `name` ('@' = abstract) and points NOTIFY_SOCKET at it.
  void Listen(const std::string& name) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      path_ = name;
    }
    ASSERT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr),
                   static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())),
              0)
        << std::strerror(errno);
    setenv("NOTIFY_SOCKET", name.c_str(), 1);
  }

  std::string Receive() {
    char buf[256];
    const ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  int fd_ = -1;
  std::string path_;
};

TEST_F(SdNotifyTest, NoSocketIsANoOp) {
  unsetenv("NOTIFY_SOCKET");
  std::string error;
  EXPECT_TRUE(SdNotify("READY=1", &error));
  EXPECT_TRUE(error.empty());
}

TEST_F(SdNotifyTest, SendsToAPath) {
  Listen("/tmp/strata-sd-notify-test-" + std::to_string(getpid()));
  std::string error;
  ASSERT_TRUE(SdNotify("READY=1\nSTATUS=up", &error)) << error;
  EXPECT_EQ(Receive(), "READY=1\nSTATUS=up");
}

TEST_F(SdNotifyTest, SendsToAnAbstractSocket) {
  Listen("@strata-sd-notify-test-" + std::to_string(getpid()));
  std::string error;
  ASSERT_TRUE(SdNotify("STOPPING=1", &error)) << error;
  EXPECT_EQ(Receive(), "STOPPING=1");
}

TEST_F(SdNotifyTest, BadSocketsAreErrors) {
  std::string error;
  setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_FALSE(SdNotify("READY=1", &error));
  EXPECT_NE(error.find("relative/path"), std::string::npos) << error;
  setenv("NOTIFY_SOCKET", "/nonexistent/strata/notify", 1);
  error.clear();
  EXPECT_FALSE(SdNotify("READY=1", &error));
  EXPECT_NE(error.find("/nonexistent/strata/notify"), std::string::npos) << error;
}

}  // namespace
}  // namespace strata
