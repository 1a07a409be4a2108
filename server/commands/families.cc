#include "server/commands/families.h"

#include "server/engine/command.h"

namespace strata {

void RegisterAllCommands() {
  CommandRegistry& r = CommandRegistry::Get();
  if (r.size() > 0) return;
  RegisterConnectionFamily(r);
  RegisterStringFamily(r);
  RegisterKeysFamily(r);
  RegisterExpireFamily(r);
  RegisterServerFamily(r);
  RegisterMemoryFamily(r);
  RegisterHashFamily(r);
  RegisterSetFamily(r);
  RegisterListFamily(r);
  RegisterBlockingFamily(r);
  RegisterSortFamily(r);
  RegisterZSetFamily(r);
  RegisterPersistenceFamily(r);
}

}  // namespace strata
