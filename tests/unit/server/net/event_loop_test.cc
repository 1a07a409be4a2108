// Event loop contract tests, run against both backends: bytes that arrive faster than
// the connection reads them are delivered without waiting for another I/O event.
#include "server/net/event_loop.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace strata {
namespace {

class Sink final : public IoConn {
 public:
  Sink(EventLoop* loop, size_t chunk) : loop_(loop), buf_(chunk) {}
  void Arm() { loop_->ArmRecv(this, buf_.data(), buf_.size()); }
  void OnRecv(ssize_t n) override {
    if (n <= 0) {
      eof = true;
      return;
    }
    received.append(buf_.data(), static_cast<size_t>(n));
    Arm();  // read again at once, with a buffer smaller than what is waiting
  }
  void OnSendDone(int) override {}
  void OnClosed() override { closed = true; }

  std::string received;
  bool eof = false;
  bool closed = false;

 private:
  EventLoop* loop_;
  std::vector<char> buf_;
};

void RunSmallReadsTest(std::unique_ptr<EventLoop> loop) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  std::string payload(96 * 1024, 'x');
  for (size_t i = 0; i < payload.size(); i++) payload[i] = static_cast<char>('a' + i % 26);
  Sink sink(loop.get(), 1024);
  sink.fd = fds[0];
  loop->AddConn(&sink);
  sink.Arm();
  size_t written = 0;
  auto start = std::chrono::steady_clock::now();
  for (int turn = 0; turn < 2000 && sink.received.size() < payload.size(); turn++) {
    if (written < payload.size()) {
      ssize_t w = write(fds[1], payload.data() + written, payload.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
    }
    // A loop that forgot pending input would sit out this whole timeout each turn.
    loop->Poll(written < payload.size() ? 10 : 250);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(sink.received, payload);
  EXPECT_LT(secs, 2.0);
  loop->Close(&sink);
  for (int i = 0; i < 10 && !sink.closed; i++) loop->Poll(10);
  EXPECT_TRUE(sink.closed);
  close(fds[1]);
}

TEST(EventLoopTest, EpollDeliversBufferedBytesPromptly) {
  std::string error;
  auto loop = CreateEpollLoop(&error);
  ASSERT_TRUE(loop) << error;
  RunSmallReadsTest(std::move(loop));
}

TEST(EventLoopTest, UringDeliversBufferedBytesPromptly) {
  std::string why;
  if (!IoUringAvailable(&why)) GTEST_SKIP() << "io_uring unavailable: " << why;
  std::string error;
  auto loop = CreateUringLoop(&error);
  ASSERT_TRUE(loop) << error;
  RunSmallReadsTest(std::move(loop));
}

}  // namespace
}  // namespace strata
