// ByteBuffer: a contiguous byte queue for one connection's outgoing requests or incoming
// replies. Bytes are appended at the write end and consumed from the read end; when it
// empties both ends go back to the start, and Ensure() first compacts, then grows
// (doubling), so a steady workload stops allocating after its first batches.
// Thread-safety: none; owned by one connection.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

namespace strata::bench {

class ByteBuffer {
 public:
  explicit ByteBuffer(size_t capacity)
      : buf_(std::make_unique<char[]>(capacity)), capacity_(capacity) {}

  const char* read_ptr() const { return buf_.get() + begin_; }
  size_t readable() const { return end_ - begin_; }
  void Consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }

  char* write_ptr() { return buf_.get() + end_; }
  size_t writable() const { return capacity_ - end_; }
  void Commit(size_t n) { end_ += n; }

  size_t capacity() const { return capacity_; }

  // Makes writable() >= n: moves the unread bytes to the front, and reallocates only when
  // the total still does not fit.
  void Ensure(size_t n) {
    if (writable() >= n) return;
    const size_t unread = readable();
    if (capacity_ - unread >= n && begin_ > 0) {
      std::memmove(buf_.get(), buf_.get() + begin_, unread);
    } else {
      size_t cap = capacity_ * 2;
      while (cap - unread < n) cap *= 2;
      auto bigger = std::make_unique<char[]>(cap);
      std::memcpy(bigger.get(), buf_.get() + begin_, unread);
      buf_ = std::move(bigger);
      capacity_ = cap;
    }
    begin_ = 0;
    end_ = unread;
  }

 private:
  std::unique_ptr<char[]> buf_;
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace strata::bench
