#include "server/engine/worker.h"
