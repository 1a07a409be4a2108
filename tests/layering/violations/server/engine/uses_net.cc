#include "server/net/event_loop.h"
#include "server/commands/families.h"
