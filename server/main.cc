// strata-server: parses the config, starts the workers and waits for a signal.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "server/base/allocator_options.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/log.h"
#include "server/commands/families.h"
#include "server/persistence/snapshot.h"
#include "server/server.h"

int main(int argc, char** argv) {
  using namespace strata;
  ConfigureAllocator();
  // SIGTERM/SIGINT are taken synchronously by the main thread (sigwait); every thread
  // started from here inherits the blocked mask. SIGPIPE is ignored: a client that goes
  // away is seen as a send error.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  RegisterAllCommands();
  CycleClock::Calibrate();
  Config config;
  std::string error;
  bool exit_now = false;
  if (!config.LoadFromArgs(argc, argv, &error, &exit_now)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  if (exit_now) return 0;
  if (!SetLogFile(config.String("logfile"), &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::string level = config.String("loglevel");
  SetLogLevel(level == "debug"     ? LogLevel::kDebug
              : level == "verbose" ? LogLevel::kVerbose
              : level == "warning" ? LogLevel::kWarning
                                   : LogLevel::kNotice);
  std::string dir = config.String("dir");
  if (chdir(dir.c_str()) != 0) {
    std::fprintf(stderr, "Can't chdir to '%s': %s\n", dir.c_str(), std::strerror(errno));
    return 1;
  }
  // As in Redis, CONFIG GET dir reports the absolute working directory.
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) {
    std::string ignored = config.Set("dir", cwd, false);
    (void)ignored;  // a string setting accepts any path
  }
  // As in Redis, a PID file that cannot be written is a warning, not a reason to stay
  // down; it is then not removed at exit either.
  std::string pidfile = config.String("pidfile");
  if (!pidfile.empty()) {
    std::ofstream out(pidfile);
    out << getpid() << "\n";
    out.close();
    if (!out) {
      LogWarning("Failed to write PID file %s: %s", pidfile.c_str(), std::strerror(errno));
      pidfile.clear();
    }
  }
  Server server(&config);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) server.set_executable(std::string(exe, static_cast<size_t>(n)));
  if (!server.Start(&error)) {
    LogWarning("%s", error.c_str());
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  server.RunUntilSignal();
  if (!pidfile.empty()) unlink(pidfile.c_str());
  if (server.exit_code() != 0) {
    std::string fatal = server.snapshots().fatal_error();
    if (!fatal.empty()) std::fprintf(stderr, "Can't load the snapshot: %s\n", fatal.c_str());
  }
  return server.exit_code();
}
