#include "server/net/connection.h"

#include <cstring>

#include "server/base/heap_bytes.h"

namespace strata {

Connection::Connection(EventLoop* loop, int sock)
    : loop_(loop), rbuf_(new char[kReadChunk]), rbuf_size_(kReadChunk) {
  fd = sock;
}

void Connection::ResizeReadBuffer(size_t size) {
  std::unique_ptr<char[]> fresh(new char[size]);  // uninitialized: nothing touched yet
  std::memcpy(fresh.get(), rbuf_.get() + rstart_, rend_ - rstart_);
  rend_ -= rstart_;
  rstart_ = 0;
  rbuf_ = std::move(fresh);
  rbuf_size_ = size;
}

void Connection::StartWithInput(std::string_view bytes) {
  if (bytes.empty()) return Start();
  if (rbuf_size_ - rend_ < bytes.size()) ResizeReadBuffer(rend_ - rstart_ + bytes.size());
  std::memcpy(rbuf_.get() + rend_, bytes.data(), bytes.size());
  rend_ += bytes.size();
  loop_->AddConn(this);
  OnInput(bytes.size());  // ends in FinishInput, which arms the first read
}

void Connection::Start() {
  loop_->AddConn(this);
  ArmRead();
}

void Connection::ArmRead() {
  if (reading_ || closing_ || paused_ || close_after_reply_) return;
  if (rstart_ == rend_) {
    rstart_ = rend_ = 0;
    if (rbuf_size_ > 4 * kReadChunk) ResizeReadBuffer(kReadChunk);
  }
  size_t needed = parser_.needed();
  if (rbuf_size_ - rend_ < kReadChunk / 4 || (needed && rstart_ + needed > rbuf_size_)) {
    if (rstart_ > 0) {
      std::memmove(rbuf_.get(), rbuf_.get() + rstart_, rend_ - rstart_);
      rend_ -= rstart_;
      rstart_ = 0;
    }
    size_t want = rbuf_size_;
    if (want - rend_ < kReadChunk / 4) want *= 2;
    if (needed > want) want = needed;
    if (want != rbuf_size_) ResizeReadBuffer(want);
  }
  reading_ = true;
  loop_->ArmRecv(this, rbuf_.get() + rend_, rbuf_size_ - rend_);
}

void Connection::OnRecv(ssize_t n) {
  reading_ = false;
  if (closing_) return;
  if (n <= 0) {
    Kill();
    return;
  }
  rend_ += static_cast<size_t>(n);
  OnInput(static_cast<size_t>(n));
}

void Connection::FinishInput() {
  if (rstart_ == rend_) rstart_ = rend_ = 0;
  ScheduleFlush();
  if (!paused_) ArmRead();
}

bool Connection::FillSlot(uint64_t seq, std::string_view data) {
  Slot& s = slots_[seq - slot_base_];
  if (seq == slot_base_) {
    // The oldest outstanding reply: straight to the output, no intermediate copy.
    if (!s.suppress) out_.append(data);
    slots_.pop_front();
    slot_base_++;
  } else {
    s.data.assign(data);
    s.ready = true;
  }
  while (!slots_.empty() && slots_.front().ready) {
    if (!slots_.front().suppress) out_.append(slots_.front().data);
    slots_.pop_front();
    slot_base_++;
  }
  if (out_.size() < kReplyBlockBytes) return data.size() >= kReplyBlockBytes;
  SealBlock();
  return true;
}

void Connection::SealBlock() {
  if (out_.empty()) return;
  blocks_bytes_ += out_.size();
  blocks_capacity_ += out_.capacity();
  blocks_heap_ += HeapBytes(out_);
  blocks_.push_back(OutBlock{std::move(out_), nullptr, {}});
  out_ = std::string();
}

void Connection::AppendOwnedBlock(std::string&& bytes) {
  if (bytes.empty()) return;
  if (!slots_.empty()) {
    AppendPush(bytes);
    return;
  }
  SealBlock();  // what is already in the open block goes first
  blocks_bytes_ += bytes.size();
  blocks_capacity_ += bytes.capacity();
  blocks_heap_ += HeapBytes(bytes);
  blocks_.push_back(OutBlock{std::move(bytes), nullptr, {}});
}

void Connection::AppendSharedBlock(std::shared_ptr<const std::string> buffer,
                                   std::string_view bytes) {
  if (bytes.empty()) return;
  if (bytes.size() < kSharedBlockMinBytes || !slots_.empty()) {
    AppendPush(bytes);
    return;
  }
  SealBlock();  // what is already in the open block goes first
  // Charged at its size: the buffer's other holders account for the rest of it.
  blocks_bytes_ += bytes.size();
  blocks_capacity_ += bytes.size();
  blocks_heap_ += bytes.size();
  blocks_.push_back(OutBlock{std::string(), std::move(buffer), bytes});
}

void Connection::ClearSending() {
  sending_.clear();
  if (sending_.capacity() > 1 << 20) sending_ = std::string();
  sending_shared_.reset();
  sending_shared_view_ = {};
}

size_t Connection::pending_reply_bytes() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.data.size();
  return n;
}

size_t Connection::FlushNow() {
  // Oldest first: the sealed blocks, then the open one. Sends that complete at once are
  // followed by the next block; one that completes later ends the round (OnSendDone).
  size_t sent = 0;
  while (!send_active) {
    if (blocks_head_ < blocks_.size()) {
      OutBlock& front = blocks_[blocks_head_++];
      if (front.shared != nullptr) {
        size_t n = front.shared_view.size();
        blocks_bytes_ -= n;
        blocks_capacity_ -= n;
        blocks_heap_ -= n;
        sending_shared_ = std::move(front.shared);
        sending_shared_view_ = front.shared_view;
        front.shared_view = {};
      } else {
        std::string& own = front.own;
        blocks_bytes_ -= own.size();
        blocks_capacity_ -= own.capacity();
        blocks_heap_ -= HeapBytes(own);
        sending_ = std::move(own);  // frees what sending_ held; no copy
        own = std::string();
      }
      if (blocks_head_ == blocks_.size()) {
        blocks_.clear();
        if (blocks_.capacity() > 64) blocks_ = std::vector<OutBlock>();
        blocks_head_ = 0;
      }
    } else if (!out_.empty()) {
      sending_.swap(out_);
      out_.clear();
    } else {
      break;
    }
    std::string_view data = sending_shared_ != nullptr ? sending_shared_view_ : sending_;
    if (!loop_->Send(this, data.data(), data.size())) break;
    sent += data.size();
    ClearSending();
  }
  return sent;
}

void Connection::OnSendDone(int err) {
  if (err != 0) {
    Kill();
    return;
  }
  size_t n = sending_shared_ != nullptr ? sending_shared_view_.size() : sending_.size();
  ClearSending();
  if (!out_.empty() || blocks_head_ < blocks_.size() || close_after_reply_) ScheduleFlush();
  OnSent(n);
}

void Connection::Kill() {
  if (closing_) return;
  closing_ = true;
  OnClosing();
  loop_->Close(this);
}

void Connection::OnClosed() {
  io_closed_ = true;
  MaybeDestroy();
}

void Connection::MaybeDestroy() {
  if (io_closed_ && !flush_scheduled_ && !InUse()) delete this;
}

bool Connection::BuffersChanged() {
  // Buffers only change what they cost when their capacity changes; reply slots (data
  // from other shards) are recounted while any are pending.
  size_t r = rbuf_size_, o = out_.capacity(), s = sending_.capacity(), a = args_.capacity();
  if (r == charged_rbuf_ && o == charged_out_ && s == charged_sending_ && a == charged_args_ &&
      blocks_heap_ + blocks_.capacity() == charged_blocks_ && slots_.empty() && !slots_charged_) {
    return false;
  }
  charged_blocks_ = blocks_heap_ + blocks_.capacity();
  charged_rbuf_ = r;
  charged_out_ = o;
  charged_sending_ = s;
  charged_args_ = a;
  slots_charged_ = !slots_.empty();
  return true;
}

size_t Connection::BufferBytes() const {
  size_t n = HeapBytes(rbuf_.get()) + HeapBytes(out_) + HeapBytes(sending_) + HeapBytes(args_);
  // The sealed blocks and the vector holding them.
  n += blocks_heap_ + HeapBytes(blocks_);
  // std::deque keeps a map and 512-byte nodes even when empty.
  constexpr size_t kPerNode = sizeof(Slot) < 512 ? 512 / sizeof(Slot) : 1;
  n += (slots_.size() / kPerNode + 1) * kPerNode * sizeof(Slot) + 8 * sizeof(void*);
  for (const Slot& s : slots_) n += HeapBytes(s.data);
  n += loop_->ConnBufferBytes(this);
  return n;
}

}  // namespace strata
