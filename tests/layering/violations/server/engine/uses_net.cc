#include "server/commands/families.h"
#include "server/net/event_loop.h"
