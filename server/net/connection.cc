#include "server/net/connection.h"

#include <algorithm>
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

void Connection::ParkFill(uint64_t seq, std::string_view data) {
  parked_fills_.emplace_back(seq, std::string(data));
}

void Connection::EndWriting(const bool* suppress) {
  Slot& s = slots_.back();
  s.len = pending_.size() - s.off;
  s.ready = true;
  s.writing = false;
  if (suppress != nullptr) s.suppress = *suppress;
  live_bytes_ += s.len;
  // The slots before it may have drained while it was written (a fill for the front
  // slot does not wait): then it is the front, and goes out now.
  if (slots_head_ + 1 == slots_.size()) [[unlikely]]
    DrainReadySlots();
  if (!parked_fills_.empty()) [[unlikely]] {
    std::vector<std::pair<uint64_t, std::string>> fills;
    fills.swap(parked_fills_);
    for (auto& [seq, data] : fills) {
      if (FillSlot(seq, data)) SealIfLarge();
    }
  }
}

void Connection::AfterDrain() {
  if (no_slots()) {
    slots_.clear();
    slots_head_ = 0;
    pending_.clear();
    // Keep the arena and the list for the next pipelined run, unless one run made them
    // bigger than a few kilobytes: an idle client keeps at most that.
    if (pending_.capacity() > kKeptArenaBytes) [[unlikely]]
      std::string().swap(pending_);
    if (slots_.capacity() > kKeptSlots) [[unlikely]]
      slots_.Release();
    return;
  }
  if (slots_.back().writing) return;  // offsets into the arena are in use
  if (slots_head_ >= 64 && slots_head_ * 2 >= slots_.size()) {
    slots_.ErasePrefix(slots_head_);
    slots_head_ = 0;
  }
  if (pending_.size() >= 4096 && live_bytes_ * 2 < pending_.size()) CompactPending();
}

void Connection::SlotList::Grow() {
  size_t cap = cap_ == 0 ? 16 : cap_ * 2;
  auto fresh = std::make_unique_for_overwrite<Slot[]>(cap);
  std::copy(data_.get(), data_.get() + size_, fresh.get());
  data_ = std::move(fresh);
  cap_ = cap;
}

void Connection::SlotList::ErasePrefix(size_t n) {
  std::copy(data_.get() + n, data_.get() + size_, data_.get());
  size_ -= n;
}

void Connection::CompactPending() {
  // Only the live slots' bytes, in slot order: at most half the arena, so the copying is
  // paid for by the dead bytes that made the arena grow.
  std::string fresh;
  fresh.reserve(live_bytes_ * 2);
  for (size_t i = slots_head_; i < slots_.size(); i++) {
    Slot& s = slots_[i];
    if (!s.ready) continue;  // not written yet: no bytes
    size_t off = fresh.size();
    fresh.append(pending_, s.off, s.len);
    s.off = off;
  }
  pending_.swap(fresh);
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
  if (!no_slots()) {
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
  if (bytes.size() < kSharedBlockMinBytes || !no_slots()) {
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

size_t Connection::pending_reply_bytes() const { return live_bytes_; }

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
  // Buffers only change what they cost when their capacity changes: the reply slots'
  // arena and list too (charged by capacity, whatever they hold); fills waiting for a
  // write (parked_fills_, not expected) are recounted while any wait.
  size_t r = rbuf_size_, o = out_.capacity(), s = sending_.capacity(), a = args_.capacity();
  size_t p = pending_.capacity(), sl = slots_.capacity();
  if (r == charged_rbuf_ && o == charged_out_ && s == charged_sending_ && a == charged_args_ &&
      blocks_heap_ + blocks_.capacity() == charged_blocks_ && p == charged_pending_ &&
      sl == charged_slots_ && parked_fills_.empty()) {
    return false;
  }
  charged_pending_ = p;
  charged_slots_ = sl;
  charged_blocks_ = blocks_heap_ + blocks_.capacity();
  charged_rbuf_ = r;
  charged_out_ = o;
  charged_sending_ = s;
  charged_args_ = a;
  return true;
}

size_t Connection::BufferBytes() const {
  size_t n = HeapBytes(rbuf_.get()) + HeapBytes(out_) + HeapBytes(sending_) + HeapBytes(args_);
  // The sealed blocks and the vector holding them.
  n += blocks_heap_ + HeapBytes(blocks_);
  // The reply slots and their arena.
  n += HeapBytes(static_cast<const void*>(slots_.data())) + HeapBytes(pending_);
  for (const auto& [seq, data] : parked_fills_) n += HeapBytes(data);
  n += HeapBytes(parked_fills_);
  n += loop_->ConnBufferBytes(this);
  return n;
}

}  // namespace strata
