// net's Connection with a fake event loop: reading and parsing in place, replies kept in
// request order through reserved slots, suppression, one send per flush, protocol errors,
// pausing input, and the lifetime rules (deleted only once the loop released it and the
// owner no longer uses it).
#include "server/net/connection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace strata {
namespace {

// Records what a connection asks of its loop; the test plays the kernel.
class FakeLoop final : public EventLoop {
 public:
  const char* name() const override { return "fake"; }
  void AddListener(int, AcceptFn) override {}
  void AddConn(IoConn* c) override { added++; }
  void ArmRecv(IoConn* c, char* buf, size_t cap) override {
    recv_buf = buf;
    recv_cap = cap;
    armed++;
  }
  bool Send(IoConn* c, const char* data, size_t len) override {
    sends.emplace_back(data, len);
    if (!complete_sends) c->send_active = true;
    return complete_sends;
  }
  void Close(IoConn* c) override { closed.push_back(c); }
  void SetWakeFd(int, std::function<void()>) override {}
  void Poll(int) override {}
  void PollNested() override {}
  bool HasReadyWork() const override { return false; }

  // Delivers bytes to the armed receive.
  void Receive(IoConn* c, std::string_view bytes) {
    ASSERT_GE(recv_cap, bytes.size());
    std::memcpy(recv_buf, bytes.data(), bytes.size());
    recv_cap = 0;
    c->OnRecv(static_cast<ssize_t>(bytes.size()));
  }

  // Everything sent so far, in order.
  std::string AllSent() const {
    std::string all;
    for (const std::string& s : sends) all += s;
    return all;
  }

  int added = 0;
  int armed = 0;
  char* recv_buf = nullptr;
  size_t recv_cap = 0;
  bool complete_sends = true;
  std::vector<std::string> sends;
  std::vector<IoConn*> closed;
};

// An owner that answers each request with "+<first argument>", or, for "LATER", reserves
// a slot the test fills afterwards.
class EchoConnection final : public Connection {
 public:
  EchoConnection(EventLoop* loop, bool* destroyed) : Connection(loop, -1), destroyed_(destroyed) {}
  ~EchoConnection() override { *destroyed_ = true; }

  using Connection::AppendSharedBlock;
  using Connection::BeginFlush;
  using Connection::BufferBytes;
  using Connection::BuffersChanged;
  using Connection::close_after_reply;
  using Connection::closing;
  using Connection::FillSlot;
  using Connection::MaybeDestroy;
  using Connection::ResumeInput;

  // What the owner does once a turn: take the scheduled flush and send.
  size_t Flush() {
    BeginFlush();
    return FlushNow();
  }

  void OnInput(size_t n) override {
    inputs++;
    ProcessInput();
  }
  void ProcessInput() {
    RespLimits limits;
    while (HasInput()) {
      if (pause_after_each) {
        if (input_paused()) break;
      }
      size_t consumed = 0;
      auto r = ParseNext(limits, &consumed);
      if (r == RespParser::Result::kNeedMore) break;
      if (r == RespParser::Result::kError) {
        errors.push_back(parse_error());
        std::string* t = ReplyTarget(false);
        size_t start = t->size();
        t->append("-ERR " + parse_error() + "\r\n");
        CommitReply(t, false, start);
        break;
      }
      std::string first(args()[0]);
      Consume(consumed);
      if (first == "LATER") {
        later.push_back(ReserveSlot(false));
      } else if (first == "NESTED") {
        // A fill that arrives while this reply is being written (the slots' arena is
        // being written at its end): the fill must wait for the write.
        std::string* t = ReplyTarget(false);
        size_t start = t->size();
        t->append("+NES");
        FillSlot(later.back(), "+filled-during-write\r\n");
        t->append("TED\r\n");
        CommitReply(t, false, start);
      } else {
        bool suppress = first == "QUIET";
        std::string* t = ReplyTarget(suppress);
        size_t start = t->size();
        t->append("+" + first + "\r\n");
        CommitReply(t, suppress, start);
      }
      if (pause_after_each) PauseInput();
    }
    FinishInput();
  }
  void RequestFlush() override { flush_requests++; }
  bool InUse() const override { return in_use; }
  void OnSent(size_t bytes) override { sent_later += bytes; }

  bool pause_after_each = false;
  bool in_use = false;
  int inputs = 0;
  int flush_requests = 0;
  size_t sent_later = 0;
  std::vector<uint64_t> later;
  std::vector<std::string> errors;
  bool* destroyed_;
};

struct Fixture {
  FakeLoop loop;
  bool destroyed = false;
  EchoConnection* c = new EchoConnection(&loop, &destroyed);
  Fixture() { c->Start(); }
  ~Fixture() {
    if (destroyed) return;
    c->in_use = false;
    c->Kill();
    static_cast<IoConn*>(c)->OnClosed();
    if (!destroyed) {  // a flush was still scheduled: the owner's flush deletes it
      c->BeginFlush();
      c->MaybeDestroy();
    }
    EXPECT_TRUE(destroyed);
  }
};

TEST(ConnectionTest, ParsesPipelinedRequestsAndRepliesInOneSend) {
  Fixture f;
  EXPECT_EQ(f.loop.added, 1);
  EXPECT_EQ(f.loop.armed, 1);
  f.loop.Receive(f.c, "*1\r\n$1\r\nA\r\nB\r\n*1\r\n$1\r\nC\r\n");
  EXPECT_EQ(f.c->flush_requests, 1);
  EXPECT_EQ(f.loop.armed, 2);  // read again
  EXPECT_EQ(f.c->Flush(), 12u);
  ASSERT_EQ(f.loop.sends.size(), 1u);
  EXPECT_EQ(f.loop.sends[0], "+A\r\n+B\r\n+C\r\n");
  EXPECT_EQ(f.c->Flush(), 0u);  // nothing new
}

TEST(ConnectionTest, APartialRequestWaitsForTheRest) {
  Fixture f;
  f.loop.Receive(f.c, "*2\r\n$3\r\nGET\r\n$1");
  EXPECT_EQ(f.c->query_buffer_bytes(), 15u);
  EXPECT_EQ(f.c->Flush(), 0u);
  f.loop.Receive(f.c, "\r\nk\r\n");
  EXPECT_EQ(f.c->query_buffer_bytes(), 0u);
  f.c->Flush();
  EXPECT_EQ(f.loop.sends.back(), "+GET\r\n");
}

TEST(ConnectionTest, LaterRepliesKeepRequestOrder) {
  Fixture f;
  f.loop.Receive(f.c, "LATER\r\nA\r\nLATER\r\nB\r\n");
  ASSERT_EQ(f.c->later.size(), 2u);
  // Nothing may leave before the first pending reply.
  EXPECT_EQ(f.c->Flush(), 0u);
  f.c->FillSlot(f.c->later[1], "+second\r\n");
  EXPECT_EQ(f.c->Flush(), 0u);
  f.c->FillSlot(f.c->later[0], "+first\r\n");
  f.c->Flush();
  ASSERT_EQ(f.loop.sends.size(), 1u);
  EXPECT_EQ(f.loop.sends[0], "+first\r\n+A\r\n+second\r\n+B\r\n");
}

TEST(ConnectionTest, SuppressedRepliesAreDroppedInPlace) {
  Fixture f;
  f.loop.Receive(f.c, "A\r\nQUIET\r\nB\r\n");
  f.c->Flush();
  EXPECT_EQ(f.loop.sends[0], "+A\r\n+B\r\n");
}

TEST(ConnectionTest, AProtocolErrorDropsTheRestAndClosesAfterTheReply) {
  Fixture f;
  f.loop.Receive(f.c, "A\r\n*x\r\nB\r\n");
  ASSERT_EQ(f.c->errors.size(), 1u);
  EXPECT_EQ(f.c->errors[0], "Protocol error: invalid multibulk length");
  EXPECT_TRUE(f.c->close_after_reply());
  EXPECT_EQ(f.c->query_buffer_bytes(), 0u);
  EXPECT_EQ(f.loop.armed, 1);  // no further read
  f.c->Flush();
  EXPECT_EQ(f.loop.sends[0], "+A\r\n-ERR Protocol error: invalid multibulk length\r\n");
}

TEST(ConnectionTest, PausedInputIsNotReadUntilResumed) {
  Fixture f;
  f.c->pause_after_each = true;
  f.loop.Receive(f.c, "A\r\nB\r\n");
  EXPECT_EQ(f.loop.armed, 1);  // paused: the read is not re-armed
  EXPECT_EQ(f.c->query_buffer_bytes(), 3u);
  f.c->ResumeInput();
  f.c->ProcessInput();
  EXPECT_EQ(f.c->query_buffer_bytes(), 0u);
  EXPECT_EQ(f.loop.armed, 1);  // paused again after B
  f.c->ResumeInput();
  f.c->ProcessInput();
  EXPECT_EQ(f.loop.armed, 2);  // nothing left and not paused: read again
  f.c->Flush();
  EXPECT_EQ(f.loop.sends[0], "+A\r\n+B\r\n");
}

TEST(ConnectionTest, AnAsynchronousSendHoldsItsBytesUntilDone) {
  Fixture f;
  f.loop.complete_sends = false;
  f.loop.Receive(f.c, "A\r\n");
  EXPECT_EQ(f.c->Flush(), 0u);  // sent later
  f.loop.Receive(f.c, "B\r\n");
  EXPECT_EQ(f.c->Flush(), 0u);  // still sending: B waits
  EXPECT_EQ(f.loop.sends.size(), 1u);
  EXPECT_EQ(f.c->output_bytes(), 8u);
  int flushes = f.c->flush_requests;
  f.c->send_active = false;
  static_cast<IoConn*>(f.c)->OnSendDone(0);
  EXPECT_EQ(f.c->sent_later, 4u);
  EXPECT_EQ(f.c->flush_requests, flushes + 1);  // B is waiting
  f.loop.complete_sends = true;
  f.c->Flush();
  EXPECT_EQ(f.loop.sends.back(), "+B\r\n");
}

// A big shared piece is sent from its buffer, which the connection keeps alive until the
// send ends; a small one is copied. Both keep their place in the output's order.
TEST(ConnectionTest, SharedBlocksAreSentFromTheirBufferInOrder) {
  Fixture f;
  f.loop.complete_sends = false;
  f.loop.Receive(f.c, "A\r\n");  // "+A\r\n" waits in the open block
  auto big = std::make_shared<const std::string>(std::string(10000, 'x') + "tail");
  std::weak_ptr<const std::string> watch = big;
  f.c->AppendSharedBlock(big, std::string_view(*big).substr(2));
  f.c->AppendSharedBlock(big, std::string_view(*big).substr(0, 2));  // small: copied
  big.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(f.c->output_bytes(), 4u + 10002u + 2u);
  EXPECT_EQ(f.c->sealed_blocks(), 2u);  // "+A", then the shared piece; "xx" is open
  EXPECT_EQ(f.c->Flush(), 0u);
  ASSERT_EQ(f.loop.sends.size(), 1u);
  EXPECT_EQ(f.loop.sends[0], "+A\r\n");
  f.c->send_active = false;
  static_cast<IoConn*>(f.c)->OnSendDone(0);
  EXPECT_EQ(f.c->Flush(), 0u);
  ASSERT_EQ(f.loop.sends.size(), 2u);
  EXPECT_EQ(f.loop.sends[1], std::string(9998, 'x') + "tail");
  EXPECT_FALSE(watch.expired());  // the send in flight holds the buffer
  f.c->send_active = false;
  static_cast<IoConn*>(f.c)->OnSendDone(0);
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(f.c->sent_later, 4u + 10002u);
  f.loop.complete_sends = true;
  EXPECT_EQ(f.c->Flush(), 2u);
  EXPECT_EQ(f.loop.sends.back(), "xx");
  EXPECT_EQ(f.c->output_bytes(), 0u);
}

TEST(ConnectionTest, EndOfStreamClosesAndDeletesOnceNothingUsesIt) {
  Fixture f;
  f.c->in_use = true;
  static_cast<IoConn*>(f.c)->OnRecv(0);
  ASSERT_EQ(f.loop.closed.size(), 1u);
  EXPECT_TRUE(f.c->closing());
  static_cast<IoConn*>(f.c)->OnClosed();
  EXPECT_FALSE(f.destroyed);  // still in use by its owner
  f.c->in_use = false;
  f.c->MaybeDestroy();
  EXPECT_TRUE(f.destroyed);
}

TEST(ConnectionTest, BufferCapacityChangesAreReportedOnce) {
  Fixture f;
  EXPECT_TRUE(f.c->BuffersChanged());  // first charge
  EXPECT_FALSE(f.c->BuffersChanged());
  EXPECT_GE(f.c->BufferBytes(), Connection::kReadChunk);
  size_t idle = f.c->BufferBytes();
  f.loop.Receive(f.c, "LATER\r\n");  // the first slot: the slot list grows
  EXPECT_TRUE(f.c->BuffersChanged());
  EXPECT_FALSE(f.c->BuffersChanged());
  size_t one_slot = f.c->BufferBytes();
  EXPECT_GT(one_slot, idle);
  // A reply behind the pending one sits in the slots' arena, and is charged.
  f.loop.Receive(f.c, "*1\r\n$100\r\n" + std::string(100, 'v') + "\r\n");
  EXPECT_TRUE(f.c->BuffersChanged());
  EXPECT_GE(f.c->BufferBytes(), one_slot + 100);
  f.c->FillSlot(f.c->later[0], "+x\r\n");
  // The output block grew; the arena and the list keep their capacity for the next
  // pipelined run, and are still charged.
  EXPECT_TRUE(f.c->BuffersChanged());
  EXPECT_FALSE(f.c->BuffersChanged());
  EXPECT_EQ(f.c->pending_reply_bytes(), 0u);
  EXPECT_GE(f.c->BufferBytes(), one_slot + 100);
  f.c->Flush();
  EXPECT_EQ(f.loop.sends.back(), "+x\r\n+" + std::string(100, 'v') + "\r\n");
}

// Slots behind a reply that is always due (a client that keeps a reply from another
// shard pending without pause): the arena drops the bytes already sent, so it stays
// within about twice what is live, and the order holds throughout.
TEST(ConnectionTest, TheSlotArenaStaysBoundedWhileRepliesStayPending) {
  Fixture f;
  const std::string big(300, 'b');
  const std::string request = "LATER\r\n*1\r\n$300\r\n" + big + "\r\n";
  f.loop.Receive(f.c, request);
  std::string expected;
  size_t peak = 0;
  for (int i = 0; i < 500; i++) {
    f.loop.Receive(f.c, request);  // [due i, big, due i+1, big]
    f.c->FillSlot(f.c->later[static_cast<size_t>(i)], "+r" + std::to_string(i) + "\r\n");
    expected += "+r" + std::to_string(i) + "\r\n+" + big + "\r\n";
    f.c->Flush();
    peak = std::max(peak, f.c->BufferBytes());
    EXPECT_EQ(f.c->pending_reply_bytes(), big.size() + 3);
  }
  // A read buffer, a slot list, an arena of a few kilobytes at most.
  EXPECT_LT(peak, Connection::kReadChunk + 16 * 1024);
  f.c->FillSlot(f.c->later.back(), "+last\r\n");
  expected += "+last\r\n+" + big + "\r\n";
  f.c->Flush();
  EXPECT_EQ(f.loop.AllSent(), expected);
  EXPECT_EQ(f.c->pending_reply_bytes(), 0u);
}

// A long pipelined run behind a pending reply grows the slot list and the arena; once
// it has drained, a connection keeps only a few kilobytes of them for the next run.
TEST(ConnectionTest, ABigRunsSlotsAreFreedOnceItDrains) {
  Fixture f;
  size_t idle = f.c->BufferBytes();
  std::string run = "LATER\r\n";
  for (int i = 0; i < 400; i++) run += "*1\r\n$20\r\n" + std::string(20, 'r') + "\r\n";
  f.loop.Receive(f.c, run);
  EXPECT_GT(f.c->BufferBytes(), idle + 400 * 23);
  f.c->FillSlot(f.c->later[0], "+x\r\n");
  f.c->Flush();
  EXPECT_EQ(f.c->pending_reply_bytes(), 0u);
  EXPECT_LE(f.c->BufferBytes(),
            idle + Connection::kKeptArenaBytes + Connection::kKeptSlots * 64 + 4096);
}

// A fill that arrives while a reply is being written behind pending ones waits for the
// write to end, then takes its place in order.
TEST(ConnectionTest, AFillDuringAReplysWriteWaitsForIt) {
  Fixture f;
  f.loop.Receive(f.c, "LATER\r\nLATER\r\nNESTED\r\n");
  ASSERT_EQ(f.c->later.size(), 2u);
  EXPECT_EQ(f.c->Flush(), 0u);
  f.c->FillSlot(f.c->later[0], "+first\r\n");
  f.c->Flush();
  EXPECT_EQ(f.loop.AllSent(), "+first\r\n+filled-during-write\r\n+NESTED\r\n");
}

// The front slot's reply arriving while the next reply is written: that reply becomes
// the front, and leaves once written.
TEST(ConnectionTest, AReplyWrittenAfterItsFrontDrainedLeavesAtOnce) {
  Fixture f;
  f.loop.Receive(f.c, "LATER\r\n");
  f.c->later.push_back(f.c->later[0]);  // NESTED fills the newest: the front here
  f.loop.Receive(f.c, "NESTED\r\n");
  f.c->Flush();
  EXPECT_EQ(f.loop.AllSent(), "+filled-during-write\r\n+NESTED\r\n");
}

}  // namespace
}  // namespace strata
