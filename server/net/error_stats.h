// ErrorStats: the error replies one worker's commands wrote (INFO's total_error_replies
// and its errorstats section), counted by their code, as Redis counts them.
//
// ReplyBuilder::Error counts every error it writes into the calling thread's ErrorStats
// (ErrorStats::SetForThisThread; a worker sets its own at start), so each command path,
// local, remote or in a script, counts where its reply is built, with no lock. A thread
// without one (start-up, tools) counts nothing. INFO adds the workers' tables up.
//
// The code is the error's first word when a space ends it within the reply's first 32
// bytes ('-' included), else "ERR" (Redis's rule). At most kMaxCodes different codes are kept: once
// a new one would go past that, the table is emptied and every later error is counted as
// "ERRORSTATS_DISABLED" until CONFIG RESETSTAT, so a client inventing codes (a script's
// redis.error_reply) cannot grow it without bound (as Redis 7.2 does; 7.0 keeps every
// code).
// Thread-safety: one worker's thread writes it; INFO reads a copy taken on that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace strata {

struct ErrorStats {
  static constexpr size_t kMaxCodes = 128;
  static constexpr size_t kCodeSearchBytes = 32;  // of the reply, its '-' included
  static constexpr std::string_view kDisabledCode = "ERRORSTATS_DISABLED";

  uint64_t total = 0;  // error replies, counted or not by code
  bool codes_disabled = false;
  std::map<std::string, uint64_t, std::less<>> by_code;

  // msg: the error as given to ReplyBuilder::Error (no leading '-').
  void Count(std::string_view msg);
  static std::string_view CodeOf(std::string_view msg);
  // Adds another worker's counts (INFO's totals). Codes past kMaxCodes in the sum are
  // reported as they are: each worker bounds its own table.
  void Add(const ErrorStats& other);

  static void SetForThisThread(ErrorStats* stats);
  static ErrorStats* ForThisThread();
  // Called (on the worker's thread) when a table stops counting by code; the server
  // logs it. Set once at start.
  static void SetCodesDisabledHook(void (*hook)());
};

}  // namespace strata
