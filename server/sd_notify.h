// SdNotify: tells systemd about the service's state (the sd_notify protocol), so the unit
// can be Type=notify. Implemented on a plain datagram socket; no libsystemd dependency.
//
// When $NOTIFY_SOCKET is set (systemd sets it for Type=notify services) each call sends
// one datagram with the given state lines ("READY=1", "STOPPING=1", "STATUS=..."), to a
// filesystem path or, for a name starting with '@', an abstract socket. Without the
// variable a call does nothing and returns true; a failed send returns false and the
// caller logs it (the service still runs; systemd then times out waiting for READY=1).
// Thread-safety: any thread; each call opens and closes its own socket.
#pragma once

#include <string>
#include <string_view>

namespace strata {

bool SdNotify(std::string_view state, std::string* error);

}  // namespace strata
