#include "tools/strata-mem/resp_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tools/strata-mem/populate.h"

namespace strata::mem {
namespace {

// A one-connection server on a loopback port, driven by a handler on its own thread.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int fd)> handler) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listen_fd_, 4), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, handler] {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      handler(fd);
      ::close(fd);
    });
  }
  ~FakeServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    thread_.join();
  }
  Endpoint endpoint() const { return Endpoint{"127.0.0.1", port_}; }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until `count` complete RESP requests have arrived (counts "*" at line starts of
// simple requests whose arguments hold no CRLF), or the peer closes.
std::string ReadRequests(int fd, int count) {
  std::string in;
  char buf[4096];
  auto complete = [&] {
    int seen = 0;
    size_t pos = 0;
    while (pos < in.size()) {
      if (in[pos] != '*') return false;
      size_t nl = in.find("\r\n", pos);
      if (nl == std::string::npos) return false;
      int args = std::stoi(in.substr(pos + 1, nl - pos - 1));
      pos = nl + 2;
      for (int i = 0; i < args; i++) {
        nl = in.find("\r\n", pos);
        if (nl == std::string::npos) return false;
        size_t len = std::stoul(in.substr(pos + 1, nl - pos - 1));
        pos = nl + 2 + len + 2;
        if (pos > in.size()) return false;
      }
      seen++;
    }
    return seen >= count;
  };
  while (!complete()) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  return in;
}

ClientOptions Options(int timeout_ms = 2000) {
  ClientOptions o;
  o.timeout_ms = timeout_ms;
  return o;
}

TEST(EndpointTest, Parse) {
  Endpoint e;
  std::string err;
  ASSERT_TRUE(Endpoint::Parse("127.0.0.1:7000", &e, &err));
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 7000);
  ASSERT_TRUE(Endpoint::Parse("cache.example:6379", &e, &err));
  EXPECT_EQ(e.host, "cache.example");
  ASSERT_TRUE(Endpoint::Parse("[::1]:6379", &e, &err));
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.ToString(), "[::1]:6379");
  for (const char* bad : {"", "host", "host:", ":1", "h:0", "h:65536", "h:-1", "h:12x", "::1:5",
                          "[::1]", "[::1]6379", "h:+5"}) {
    EXPECT_FALSE(Endpoint::Parse(bad, &e, &err)) << bad;
    EXPECT_NE(err.find("invalid server"), std::string::npos) << bad;
  }
}

TEST(RespClientTest, PipelinedRepliesArrivingInPieces) {
  FakeServer server([](int fd) {
    ReadRequests(fd, 3);
    std::string replies = "+OK\r\n$11\r\nhello world\r\n*2\r\n:1\r\n$-1\r\n";
    for (char c : replies) {  // one byte at a time
      SendAll(fd, std::string_view(&c, 1));
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  RespClient c;
  std::string err;
  ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
  c.Append({"SET", "k", "v"});
  c.Append({"GET", "k"});
  c.Append(std::vector<std::string_view>{"X"});
  ASSERT_TRUE(c.Flush(&err)) << err;
  Reply r;
  ASSERT_TRUE(c.Read(&r, &err)) << err;
  EXPECT_EQ(r.str, "OK");
  ASSERT_TRUE(c.Read(&r, &err)) << err;
  EXPECT_EQ(r.str, "hello world");
  ASSERT_TRUE(c.Read(&r, &err)) << err;
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_TRUE(r.elements[1].is_nil());
}

TEST(RespClientTest, ConnectionRefused) {
  int port;
  {
    FakeServer probe([](int) {});
    port = probe.endpoint().port;
    // Connect once so the server thread ends; the port is closed after this scope.
    RespClient c;
    std::string err;
    ASSERT_TRUE(c.Connect(probe.endpoint(), Options(), &err));
  }
  RespClient c;
  std::string err;
  EXPECT_FALSE(c.Connect(Endpoint{"127.0.0.1", port}, Options(), &err));
  EXPECT_NE(err.find("cannot connect"), std::string::npos) << err;
  EXPECT_NE(err.find("127.0.0.1:"), std::string::npos) << err;
}

TEST(RespClientTest, SilentServerTimesOut) {
  FakeServer server([](int fd) {
    ReadRequests(fd, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  });
  RespClient c;
  std::string err;
  ASSERT_TRUE(c.Connect(server.endpoint(), Options(150), &err)) << err;
  Reply r;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(c.Call({"PING"}, &r, &err));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  EXPECT_NE(err.find("timed out after 150 ms"), std::string::npos) << err;
  EXPECT_LT(ms, 550);
}

TEST(RespClientTest, MalformedReplyAndClose) {
  {
    FakeServer server([](int fd) {
      ReadRequests(fd, 1);
      SendAll(fd, "HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    RespClient c;
    std::string err;
    ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
    Reply r;
    EXPECT_FALSE(c.Call({"PING"}, &r, &err));
    EXPECT_NE(err.find("malformed reply"), std::string::npos) << err;
  }
  {
    FakeServer server([](int fd) {
      ReadRequests(fd, 1);
      SendAll(fd, "$10\r\nabc");
    });
    RespClient c;
    std::string err;
    ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
    Reply r;
    EXPECT_FALSE(c.Call({"GET", "k"}, &r, &err));
    EXPECT_NE(err.find("connection closed"), std::string::npos) << err;
  }
}

TEST(RespClientTest, ErrorReplies) {
  FakeServer server([](int fd) {
    ReadRequests(fd, 1);
    SendAll(fd, "-ERR nope\r\n");
  });
  RespClient c;
  std::string err;
  ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
  Reply r;
  EXPECT_FALSE(c.CallOk({"FLUSHALL"}, &r, &err));
  EXPECT_EQ(err, "server " + server.endpoint().ToString() + " replied: ERR nope");
}

TEST(RespClientTest, AuthFailure) {
  FakeServer server([](int fd) {
    std::string req = ReadRequests(fd, 1);
    EXPECT_NE(req.find("AUTH"), std::string::npos);
    SendAll(fd, "-WRONGPASS invalid username-password pair\r\n");
  });
  RespClient c;
  std::string err;
  ClientOptions o = Options();
  o.password = "bad";
  EXPECT_FALSE(c.Connect(server.endpoint(), o, &err));
  EXPECT_NE(err.find("AUTH failed: WRONGPASS"), std::string::npos) << err;
}

TEST(PopulateTest, StopsAtFirstErrorReply) {
  FakeServer server([](int fd) {
    ReadRequests(fd, 4);
    SendAll(fd, "+OK\r\n+OK\r\n-ERR unknown command 'HSET'\r\n+OK\r\n");
  });
  RespClient c;
  std::string err;
  ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
  PopulateOptions o;
  o.keys = 4;
  o.pipeline = 4;
  o.type = DataType::kHash;
  EXPECT_FALSE(Populate(&c, o, nullptr, &err));
  EXPECT_EQ(err, "server " + server.endpoint().ToString() +
                     " replied: ERR unknown command 'HSET' (writing key 'memtier-3')");
}

TEST(PopulateTest, SendsEveryKeyInBatches) {
  std::string received;
  {
    FakeServer server([&](int fd) {
      for (int batch = 0; batch < 3; batch++) {
        // Batches of 2, 2 and 1 commands.
        int n = batch < 2 ? 2 : 1;
        received += ReadRequests(fd, n);
        for (int i = 0; i < n; i++) SendAll(fd, "+OK\r\n");
      }
    });
    RespClient c;
    std::string err;
    ASSERT_TRUE(c.Connect(server.endpoint(), Options(), &err)) << err;
    PopulateOptions o;
    o.keys = 5;
    o.pipeline = 2;
    o.data_size = 8;
    EXPECT_TRUE(Populate(&c, o, nullptr, &err)) << err;
  }
  for (int k = 1; k <= 5; k++) {
    EXPECT_NE(received.find("$9\r\nmemtier-" + std::to_string(k) + "\r\n$8\r\n"), std::string::npos)
        << k;
  }
}

}  // namespace
}  // namespace strata::mem
