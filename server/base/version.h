// The version every binary reports; set from CMake's project version.
#pragma once

#ifndef STRATA_VERSION
#define STRATA_VERSION "0.1.0"
#endif

// The Redis version strata is compatible with, reported as redis_version in INFO and
// HELLO so that clients enable the features they know Redis 7 has.
#define STRATA_REDIS_COMPAT_VERSION "7.0.15"
