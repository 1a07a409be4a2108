// TokenBucket: limits how many keys per second `strata-mem report` inspects.
//
// The bucket starts empty and refills at `rate` tokens per second, holding at most
// `burst`. Take(n, now) removes n tokens, going into debt if there are fewer, and returns
// how long the caller must sleep so the debt is repaid before it goes on; so a batch
// larger than the burst still passes, just later. Counted from the start the average
// never exceeds `rate`; over any shorter interval the keys taken stay within
// burst + rate * seconds (a burst saved up while the caller was slow). A rate of 0 means
// unlimited. Time is passed in, in seconds, so the logic is tested without sleeping.
// Thread-safety: a value type.
#pragma once

namespace strata::mem {

class TokenBucket {
 public:
  // burst <= 0 picks rate / 10 (a tenth of a second's worth), at least 1.
  TokenBucket(double rate, double burst, double now_s);

  // Seconds to sleep before proceeding (0 when within the budget).
  double Take(double n, double now_s);
  bool unlimited() const { return rate_ <= 0; }

 private:
  double rate_;
  double burst_;
  double tokens_;
  double last_s_;
};

}  // namespace strata::mem
