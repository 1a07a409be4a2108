#include "server/net/event_loop.h"
