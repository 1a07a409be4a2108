#include "core/hash.h"
