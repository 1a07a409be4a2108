// Connection: one client socket's I/O - its read buffer and request parsing, its output
// buffer with reply slots that keep pipelined replies in request order, flushing, and
// closing. It knows nothing of commands or shards: the layer above (the engine's
// ClientConnection) derives from it, runs the requests it parses and fills the replies.
//
// Input
//   Bytes land in the read buffer (ArmRead, OnRecv); OnInput() tells the owner, which
//   calls ParseNext() for one request at a time (views into the buffer, nothing copied),
//   Consume()s each request it takes, and ends with FinishInput(), which schedules a
//   flush and re-arms the read unless input was paused (PauseInput; ResumeInput() undoes
//   it). After a protocol error the rest of the input is dropped and the connection
//   closes once the owner's error reply is written.
//
// Output
//   A reply is written at ReplyTarget(): straight into the open output block while no
//   earlier reply is pending, otherwise into a new slot. A reply that will arrive later
//   reserves its slot (ReserveSlot) and is filled by FillSlot(seq, ...); ready slots at
//   the front move to the output in order. Slots keep their bytes in one arena per
//   connection (pending_), appended in the order they are written; a slot is an offset
//   and a length. So a pipelined run behind a reply from another shard costs no
//   allocation per reply once the arena has grown, and what the slots cost is the
//   arena's and the slot list's capacity. The arena is emptied when the last slot
//   drains, and rewritten with only the live bytes once most of it is dead (a client
//   that keeps replies pending without pause), so it stays within twice what is live.
//   Once the open block holds kReplyBlockBytes it is sealed: moved, not copied, to the
//   end of a chain of blocks, and a new one opens. A big reply is a block of its own. So
//   queued output never moves as it grows, and each block is freed once sent. FlushNow()
//   hands the output to the event loop block by block, oldest first (usually one send
//   for everything gathered in a loop turn). A block may also be a buffer given up by
//   its owner (AppendOwnedBlock), or a view into a buffer shared with others that it
//   keeps alive until sent (AppendSharedBlock: a master's stream, held by its backlog
//   too).
//
// Lifetime: Kill() stops input at once and closes the socket; the object deletes itself
// (MaybeDestroy) once the loop has released it, no flush is scheduled and the owner says
// nothing else refers to it (InUse()).
// Thread-safety: owned by one worker thread for its whole life.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/net/event_loop.h"
#include "server/net/resp_parser.h"

namespace strata {

class Connection : public IoConn {
 public:
  static constexpr size_t kReadChunk = 16 * 1024;
  // The open output block is sealed once it holds this much (Redis's reply chunk size).
  static constexpr size_t kReplyBlockBytes = 16 * 1024;
  // Reply slots and their arena kept for reuse once all slots have drained (bigger ones
  // are freed then): enough for a pipeline of ~100 small commands across shards.
  static constexpr size_t kKeptArenaBytes = 8 * 1024;
  static constexpr size_t kKeptSlots = 128;

  Connection(EventLoop* loop, int fd);
  ~Connection() override = default;

  // Registers the socket with the loop and starts reading.
  void Start();
  // Closes once the pending output is written (QUIT), or at once (CLIENT KILL).
  void CloseAfterReply() { close_after_reply_ = true; }
  void Kill();

  // Start() with bytes read from the socket by someone else taken as the first input:
  // they are processed (OnInput) before the first read is armed, as a read in flight
  // owns the buffer's free end.
  void StartWithInput(std::string_view bytes);
  size_t query_buffer_bytes() const { return rend_ - rstart_; }
  // Reply bytes queued to be written: sealed blocks, the open block, the send in flight
  // (not replies still being gathered in slots: pending_reply_bytes()).
  size_t output_bytes() const {
    return blocks_bytes_ + out_.size() + sending_.size() + sending_shared_view_.size();
  }
  // Bytes of replies waiting in slots behind one still due from another shard
  // (O(slots), at most the pipelined commands in flight).
  size_t pending_reply_bytes() const;
  // For CLIENT LIST: bytes in the open block (obl), sealed blocks (oll).
  size_t open_block_bytes() const { return out_.size(); }
  size_t sealed_blocks() const { return blocks_.size() - blocks_head_; }

 protected:
  // ---- hooks for the owner (called on this thread from the loop's callbacks)
  // n > 0 new bytes are in the read buffer.
  virtual void OnInput(size_t n) = 0;
  // Output is waiting: the owner must call FlushNow() later in this loop turn.
  virtual void RequestFlush() = 0;
  // Kill() started closing (before the socket is handed back to the loop).
  virtual void OnClosing() {}
  // True while other work still refers to this connection (it is not deleted).
  virtual bool InUse() const { return false; }
  // An asynchronous send of `bytes` completed.
  virtual void OnSent(size_t bytes) {}

  // ---- input
  bool HasInput() const { return rstart_ < rend_ && !close_after_reply_ && !closing_; }
  // Parses the request at the read position into args(); on kOk, *consumed is its size
  // (Consume() it once taken). On kError (parse_error() says why) the rest of the input
  // is dropped and the connection closes after its output: the owner replies the error.
  RespParser::Result ParseNext(const RespLimits& limits, size_t* consumed) {
    auto r = parser_.Parse(rbuf_.get() + rstart_, rend_ - rstart_, limits, consumed, &args_);
    if (r == RespParser::Result::kError) {
      close_after_reply_ = true;
      rstart_ = rend_;
    }
    return r;
  }
  void Consume(size_t n) {
    rstart_ += n;
    consumed_ = n;
  }
  std::vector<std::string_view>& args() { return args_; }
  // The bytes read and not consumed yet: the request at the read position and those
  // after it (valid until the next read or Consume).
  std::string_view PendingInput() const {
    return std::string_view(rbuf_.get() + rstart_, rend_ - rstart_);
  }
  // The bytes of the request that `args` are, while it runs (after Consume, until the
  // next read): empty unless `args` is args() itself (not a copy, nor other arguments)
  // and the parser found the request canonical (RespParser::canonical()).
  std::string_view RawRequestOf(std::span<const std::string_view> args) const {
    if (args.data() != args_.data() || args.size() != args_.size() || !parser_.canonical())
      return {};
    return std::string_view(rbuf_.get() + rstart_ - consumed_, consumed_);
  }
  const std::string& parse_error() const { return parser_.error(); }
  // Ends a round of input: schedules a flush and reads again unless input is paused.
  void FinishInput();
  void PauseInput() { paused_ = true; }
  bool input_paused() const { return paused_; }
  // Clears the pause; the owner then processes what is already buffered.
  void ResumeInput() { paused_ = false; }

  // ---- output
  // Where the next in-order reply goes (see the header comment). Forced inline, as
  // CommitReply: both sit on every command's path, and tiny.
  [[gnu::always_inline]] std::string* ReplyTarget(bool suppress) {
    if (no_slots()) return &out_;
    slots_.Push(Slot{pending_.size(), 0, false, suppress, true});
    return &pending_;
  }
  // Appends an out-of-band push (a Pub/Sub message) in reply order: after the replies
  // due, but ahead of a reply being written right now (the client's own command
  // published to it, as Redis writes the push first).
  void AppendPush(std::string_view bytes) {
    if (no_slots()) {
      out_.append(bytes);
    } else if (slots_.back().writing) {
      pending_.append(bytes);  // the reply being written is the arena's tail
    } else {
      slots_.Push(Slot{pending_.size(), bytes.size(), true, false, false});
      pending_.append(bytes);
      live_bytes_ += bytes.size();
    }
  }
  // AppendPush of a buffer the caller gives up: it becomes a sealed block of its own,
  // moved rather than copied, when no reply is pending (a replica's stream).
  void AppendOwnedBlock(std::string&& bytes);
  // AppendPush of bytes that live in a buffer shared with others (a master's stream,
  // also held by its backlog): a big piece becomes a block that keeps the buffer alive
  // and points into it, not copied; a small one is copied into the open block (many
  // small blocks would cost a send each).
  static constexpr size_t kSharedBlockMinBytes = 4 * 1024;
  void AppendSharedBlock(std::shared_ptr<const std::string> buffer, std::string_view bytes);
  // True when the reply just written at target made it a block's worth: the open block
  // is then sealed (LargeReplyWritten) and the owner checks its output limits.
  static bool IsLarge(const std::string* target) { return target->size() >= kReplyBlockBytes; }
  void LargeReplyWritten(std::string* target) {
    if (target == &out_) SealBlock();
  }
  // Seals the open block once it holds a block's worth and no reply is pending (output
  // that is not replies: a replica's stream).
  void SealIfLarge() {
    if (no_slots() && IsLarge(&out_)) SealBlock();
  }
  // Makes a reply written at target since `start` final (dropped when suppressed).
  [[gnu::always_inline]] void CommitReply(std::string* target, bool suppress, size_t start) {
    if (target == &out_) {
      if (suppress) out_.resize(start);
      return;
    }
    EndWriting(nullptr);
  }
  // Changes the suppression of the reply just written at target (CLIENT REPLY decides it
  // after running).
  void CommitReplyAs(std::string* target, bool suppress, size_t start) {
    if (target == &out_) {
      if (suppress) out_.resize(start);
    } else {
      EndWriting(&suppress);
    }
  }
  // Reserves the slot of a reply that arrives later; returns its sequence number.
  [[gnu::always_inline]] uint64_t ReserveSlot(bool suppress) {
    slots_.Push(Slot{0, 0, false, suppress, false});
    return newest_slot();
  }
  // The sequence number of the newest reserved slot.
  uint64_t newest_slot() const { return slot_base_ + (slots_.size() - slots_head_) - 1; }
  bool replies_pending() const { return !no_slots(); }
  // Fills a reserved slot; ready replies at the front move to the output. Returns true
  // when that made the output grow by a block or more (the owner checks its limits).
  // Inline: it runs for every reply that comes from another shard.
  [[gnu::always_inline]] bool FillSlot(uint64_t seq, std::string_view data) {
    size_t at = slots_head_ + (seq - slot_base_);
    Slot& s = slots_[at];
    if (at == slots_head_) {
      // The oldest outstanding reply: straight to the output, no intermediate copy; then
      // the replies ready behind it.
      if (!s.suppress) out_.append(data.data(), data.size());
      slots_head_++;
      slot_base_++;
      DrainReadySlots();
      if (out_.size() < kReplyBlockBytes) return data.size() >= kReplyBlockBytes;
      SealBlock();
      return true;
    }
    if (slots_.back().writing) [[unlikely]] {
      // A reply is being written at the arena's end: this one waits for it (EndWriting).
      ParkFill(seq, data);
      return false;
    }
    // Behind the front slot, which is still due (a ready front is always drained): kept
    // in the arena until the front arrives.
    s.off = pending_.size();
    s.len = data.size();
    s.ready = true;
    pending_.append(data.data(), data.size());
    live_bytes_ += data.size();
    return data.size() >= kReplyBlockBytes;
  }

  // Marks the connection as having output to flush (RequestFlush once per turn).
  void ScheduleFlush() {
    if (flush_scheduled_) return;
    flush_scheduled_ = true;
    RequestFlush();
  }
  // The owner's flush began: clears the scheduled mark.
  void BeginFlush() { flush_scheduled_ = false; }
  size_t buffered_output() const { return blocks_bytes_ + out_.size(); }
  // Hands the gathered output to the loop. Returns the bytes sent at once (0 when the
  // send completes later, with OnSent, or when there was nothing to send).
  size_t FlushNow();
  // Nothing left to write and no reply pending.
  bool output_drained() const {
    return !send_active && out_.empty() && blocks_head_ == blocks_.size() && no_slots();
  }
  bool close_after_reply() const { return close_after_reply_; }
  bool closing() const { return closing_; }
  // Deletes this connection when nothing refers to it any more.
  void MaybeDestroy();

  // ---- memory
  // True (once) when a buffer changed capacity since the last call (the reply slots'
  // arena and list included).
  bool BuffersChanged();
  // Heap bytes of the buffers, the reply slots and the loop's state for this socket
  // (usable sizes); not the object itself.
  size_t BufferBytes() const;
  // For CLIENT LIST: read buffer size and free space, output buffer capacity.
  size_t read_buffer_size() const { return rbuf_size_; }
  size_t read_buffer_capacity() const { return rbuf_size_; }
  size_t output_capacity() const {
    return out_.capacity() + sending_.capacity() + blocks_capacity_;
  }

 private:
  bool no_slots() const { return slots_head_ == slots_.size(); }
  // Ends the write of the reply in the newest slot (the one being written: a push during
  // the write joins it, see AppendPush); *suppress, when given, replaces its suppression.
  void EndWriting(const bool* suppress);
  // After the front slot went out: moves the ready slots behind it to the output;
  // empties or compacts the arena (AfterDrain).
  [[gnu::always_inline]] void DrainReadySlots() {
    size_t i = slots_head_;
    size_t end = slots_.size();
    const char* arena = pending_.data();
    while (i < end) {
      const Slot& f = slots_[i];
      if (!f.ready) break;
      if (!f.suppress) out_.append(arena + f.off, f.len);
      live_bytes_ -= f.len;
      i++;
    }
    slot_base_ += i - slots_head_;
    slots_head_ = i;
    if (i == end || slots_head_ >= 64 || pending_.size() >= 4096) [[unlikely]]
      AfterDrain();
  }
  void ParkFill(uint64_t seq, std::string_view data);
  void AfterDrain();
  void CompactPending();
  void OnRecv(ssize_t n) override;
  void OnSendDone(int err) override;
  void OnClosed() override;
  void ArmRead();
  void SealBlock();

  struct Slot {
    size_t off;  // its bytes in pending_: [off, off + len), once written
    size_t len;
    bool ready;
    bool suppress;
    bool writing;  // a reply being written now (ReplyTarget until CommitReply)
  };

  EventLoop* loop_;
  // The read buffer. Not a std::string: resizing one writes every byte, so an idle
  // connection's 16 KB would all be resident; here only what was received is touched.
  std::unique_ptr<char[]> rbuf_;
  size_t rbuf_size_ = 0;
  // Replaces the read buffer with one of `size` bytes holding the unread bytes at its start.
  void ResizeReadBuffer(size_t size);
  size_t rstart_ = 0;
  size_t consumed_ = 0;  // the last Consume()
  size_t rend_ = 0;
  RespParser parser_;
  std::vector<std::string_view> args_;

  std::string out_;  // the open block
  // A sealed block: its own bytes, or a view into a buffer it shares.
  struct OutBlock {
    std::string own;
    std::shared_ptr<const std::string> shared;
    std::string_view shared_view;
  };
  // Sealed blocks, oldest first from blocks_head_ (a vector, not a deque: nothing is
  // allocated while there are none, which is almost always).
  std::vector<OutBlock> blocks_;
  size_t blocks_head_ = 0;
  size_t blocks_bytes_ = 0;     // their sizes
  size_t blocks_capacity_ = 0;  // their capacities
  size_t blocks_heap_ = 0;      // their heap blocks' usable sizes
  std::string sending_;         // handed to the loop, untouched until the send ends
  // Or a shared block's buffer and bytes, in the loop's hands.
  std::shared_ptr<const std::string> sending_shared_;
  std::string_view sending_shared_view_;
  void ClearSending();
  // The slots, oldest first from slots_head_: an array that grows by doubling, so a slot
  // costs a few stores once it has grown; the dead prefix is dropped when it is half of
  // it, or all of it.
  class SlotList {
   public:
    [[gnu::always_inline]] void Push(const Slot& s) {
      if (size_ == cap_) [[unlikely]]
        Grow();
      data_[size_++] = s;
    }
    Slot& operator[](size_t i) { return data_[i]; }
    const Slot& operator[](size_t i) const { return data_[i]; }
    Slot& back() { return data_[size_ - 1]; }
    const Slot& back() const { return data_[size_ - 1]; }
    size_t size() const { return size_; }
    size_t capacity() const { return cap_; }
    void clear() { size_ = 0; }
    void ErasePrefix(size_t n);
    void Release() {
      data_.reset();
      size_ = cap_ = 0;
    }
    const Slot* data() const { return data_.get(); }

   private:
    void Grow();
    std::unique_ptr<Slot[]> data_;
    size_t size_ = 0;
    size_t cap_ = 0;
  };
  SlotList slots_;
  size_t slots_head_ = 0;
  uint64_t slot_base_ = 0;  // seq of slots_[slots_head_]
  std::string pending_;     // the slots' arena
  size_t live_bytes_ = 0;   // bytes of slots written and not yet drained
  // Fills that arrived while a reply was being written into the arena (not expected:
  // fills come from tasks, never from inside a command), applied when it ends.
  std::vector<std::pair<uint64_t, std::string>> parked_fills_;

  // Capacities when last charged (SIZE_MAX: never charged yet).
  size_t charged_rbuf_ = SIZE_MAX;
  size_t charged_out_ = SIZE_MAX;
  size_t charged_sending_ = SIZE_MAX;
  size_t charged_args_ = SIZE_MAX;
  size_t charged_pending_ = SIZE_MAX;
  size_t charged_slots_ = SIZE_MAX;
  size_t charged_blocks_ = 0;

  bool paused_ = false;
  bool reading_ = false;
  bool flush_scheduled_ = false;
  bool close_after_reply_ = false;
  bool closing_ = false;
  bool io_closed_ = false;
};

}  // namespace strata
