#include "storage/status.h"
