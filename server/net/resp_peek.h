// PeekSecondArgs: a look at the requests waiting in a read buffer, ahead of parsing them,
// for a worker that prefetches the keys they will look up (the first key of most
// commands is their second argument: GET k, SET k v, HGET k f...).
//
// It reads only what a canonical multibulk request is made of: '*', the argument count,
// then for each argument '$', its length, CRLF, the bytes and two more bytes. Length
// lines must be plain digits (at most 9, no leading zero); the two bytes after a bulk are
// skipped, not checked, as RespParser does. It stops at the first request that is
// incomplete, inline, not canonical, or has more than kPeekArgsMax arguments, and at
// `max` requests, so its cost is bounded by `max` times that many argument headers.
// What it finds is a hint: the parser still decides what each request is.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <cstddef>
#include <string_view>

namespace strata {

// Requests with more arguments than this end the look (the parser takes them as usual).
inline constexpr size_t kPeekArgsMax = 64;

// Looks at up to `max` complete requests at the start of [data, data + len). For each,
// out[i] is its second argument, or empty when it has fewer than two. Returns how many
// requests it looked at.
size_t PeekSecondArgs(const char* data, size_t len, size_t max, std::string_view* out);

}  // namespace strata
