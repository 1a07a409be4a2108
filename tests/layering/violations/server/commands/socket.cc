#include "core/hash.h"
#include "server/net/connection.h"
#include "server/net/reply_builder.h"
