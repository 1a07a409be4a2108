#include "server/commands/client_tracking.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/engine/client.h"
#include "server/engine/engine.h"
#include "server/engine/tracking.h"
#include "server/engine/worker.h"

namespace strata {

namespace {

// One prefix begins the other.
bool Overlap(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

std::string OverlapError(std::string_view a, std::string_view b, bool existing) {
  return "ERR Prefix '" + std::string(a) + "' overlaps with " +
         (existing ? "an existing" : "another provided") + " prefix '" + std::string(b) +
         "'. Prefixes for a single client must not overlap.";
}

}  // namespace

uint64_t TrackingRedirectOf(CmdArgs args) {
  for (size_t i = 3; i + 1 < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "redirect")) {
      int64_t id = 0;
      return ParseInt64(args[i + 1], &id) && id > 0 ? static_cast<uint64_t>(id) : 0;
    }
  }
  return 0;
}

void ClientTrackingCommand(Client& c, CmdArgs args, ReplyBuilder& rb, int64_t redirect_worker) {
  bool bcast = false, optin = false, optout = false, noloop = false;
  int64_t redirect = 0;
  std::vector<std::string_view> prefixes;
  for (size_t j = 3; j < args.size(); j++) {
    bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "redirect") && more) {
      j++;
      if (redirect != 0) {
        rb.Error("ERR A client can only redirect to a single other client");
        return;
      }
      if (!ParseInt64(args[j], &redirect)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (redirect <= 0 || redirect_worker < 0) {
        rb.Error("ERR The client ID you want redirect to does not exist");
        return;
      }
    } else if (EqualsIgnoreCase(args[j], "bcast")) {
      bcast = true;
    } else if (EqualsIgnoreCase(args[j], "optin")) {
      optin = true;
    } else if (EqualsIgnoreCase(args[j], "optout")) {
      optout = true;
    } else if (EqualsIgnoreCase(args[j], "noloop")) {
      noloop = true;
    } else if (EqualsIgnoreCase(args[j], "prefix") && more) {
      j++;
      prefixes.push_back(args[j]);
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  ClientTracking& t = c.tracking;
  if (EqualsIgnoreCase(args[2], "off")) {
    TrackingOff(c);
    rb.Ok();
    return;
  }
  if (!EqualsIgnoreCase(args[2], "on")) {
    rb.Error(errors::kSyntax);
    return;
  }
  if (!bcast && !prefixes.empty()) {
    rb.Error("ERR PREFIX option requires BCAST mode to be enabled");
    return;
  }
  if (t.on && t.bcast != bcast) {
    rb.Error(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
        "and then re-enabling it with a different mode.");
    return;
  }
  if (bcast && (optin || optout)) {
    rb.Error("ERR OPTIN and OPTOUT are not compatible with BCAST");
    return;
  }
  if (optin && optout) {
    rb.Error("ERR You can't specify both OPTIN mode and OPTOUT mode");
    return;
  }
  if ((optin && t.optout) || (optout && t.optin)) {
    rb.Error(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
        "and then re-enabling it with a different mode.");
    return;
  }
  if (bcast) {
    for (size_t i = 0; i < prefixes.size(); i++) {
      for (const std::string& old : t.prefixes) {
        if (Overlap(old, prefixes[i])) {
          rb.Error(OverlapError(prefixes[i], old, true));
          return;
        }
      }
      for (size_t k = i + 1; k < prefixes.size(); k++) {
        if (Overlap(prefixes[i], prefixes[k])) {
          rb.Error(OverlapError(prefixes[i], prefixes[k], false));
          return;
        }
      }
    }
  }
  // ON (again) replaces the options; BCAST prefixes accumulate until OFF.
  TrackingOn(c);
  t.bcast = bcast;
  t.optin = optin;
  t.optout = optout;
  t.noloop = noloop;
  t.broken_redirect = false;
  t.redirect = static_cast<uint64_t>(redirect);
  t.redirect_worker = redirect != 0 ? static_cast<uint32_t>(redirect_worker) : 0;
  if (bcast) {
    if (prefixes.empty()) prefixes.push_back("");
    BcastRegistry& reg = c.worker().engine().bcast();
    for (std::string_view p : prefixes) {
      if (std::find(t.prefixes.begin(), t.prefixes.end(), p) != t.prefixes.end()) continue;
      t.prefixes.emplace_back(p);
      reg.Add(p, c.id(), c.worker().index());
    }
  }
  rb.Ok();
}

void ClientCachingCommand(Client& c, CmdArgs args, ReplyBuilder& rb) {
  ClientTracking& t = c.tracking;
  if (!t.on) {
    rb.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
        "or OPTOUT mode enabled");
    return;
  }
  if (EqualsIgnoreCase(args[2], "yes")) {
    if (!t.optin) {
      rb.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      return;
    }
    t.caching_yes = true;
  } else if (EqualsIgnoreCase(args[2], "no")) {
    if (!t.optout) {
      rb.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      return;
    }
    t.caching_no = true;
  } else {
    rb.Error(errors::kSyntax);
    return;
  }
  rb.Ok();
}

void ClientGetRedirCommand(Client& c, ReplyBuilder& rb) {
  rb.Integer(c.tracking.on ? static_cast<int64_t>(c.tracking.redirect) : -1);
}

void ClientTrackingInfoCommand(Client& c, ReplyBuilder& rb) {
  const ClientTracking& t = c.tracking;
  std::vector<const char*> flags;
  flags.push_back(t.on ? "on" : "off");
  if (t.bcast) flags.push_back("bcast");
  if (t.optin) {
    flags.push_back("optin");
    if (t.caching_yes) flags.push_back("caching-yes");
  }
  if (t.optout) {
    flags.push_back("optout");
    if (t.caching_no) flags.push_back("caching-no");
  }
  if (t.noloop) flags.push_back("noloop");
  if (t.broken_redirect) flags.push_back("broken_redirect");
  rb.Map(3);
  rb.Bulk("flags");
  rb.Set(flags.size());
  for (const char* f : flags) rb.Bulk(f);
  rb.Bulk("redirect");
  rb.Integer(t.on ? static_cast<int64_t>(t.redirect) : -1);
  rb.Bulk("prefixes");
  std::vector<std::string> sorted = t.prefixes;
  std::sort(sorted.begin(), sorted.end());
  rb.Array(sorted.size());
  for (const std::string& p : sorted) rb.Bulk(p);
}

}  // namespace strata
