#include "server/engine/function_store.h"

namespace strata {

FunctionStore& FunctionStore::Get() {
  static FunctionStore store;
  return store;
}

bool FunctionStore::Inspect(std::string_view code, FunctionLibrary* out, std::string* error) const {
  if (inspector_ == nullptr) {
    *error = "ERR function libraries are not available";
    return false;
  }
  return inspector_(code, out, error);
}

FunctionStore::Libraries FunctionStore::All() const {
  std::lock_guard<std::mutex> l(mu_);
  return libs_;
}

std::string FunctionStore::Update(const std::function<std::string(Libraries&)>& fn) {
  std::lock_guard<std::mutex> l(mu_);
  Libraries next = libs_;
  std::string error = fn(next);
  if (!error.empty()) return error;
  libs_ = std::move(next);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return "";
}

bool FunctionStore::FindFunction(std::string_view name, FunctionInfo* info,
                                 std::string* library) const {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [lib_name, lib] : libs_) {
    for (const FunctionInfo& f : lib.functions) {
      if (f.name == name) {
        if (info != nullptr) *info = f;
        if (library != nullptr) *library = lib_name;
        return true;
      }
    }
  }
  return false;
}

std::string FunctionStore::Clash(const Libraries& libs, const FunctionLibrary& lib) {
  for (const auto& [name, other] : libs) {
    if (name == lib.name) continue;
    for (const FunctionInfo& f : other.functions) {
      for (const FunctionInfo& g : lib.functions) {
        if (f.name == g.name) return f.name;
      }
    }
  }
  return "";
}

bool FunctionStore::RestoreCodes(const std::vector<std::string>& codes, bool replace_all,
                                 std::string* error) {
  std::vector<FunctionLibrary> libs;
  for (const std::string& code : codes) {
    FunctionLibrary lib;
    if (!Inspect(code, &lib, error)) return false;
    libs.push_back(std::move(lib));
  }
  *error = Update([&](Libraries& all) -> std::string {
    if (replace_all) all.clear();
    for (FunctionLibrary& lib : libs) {
      if (all.count(lib.name) != 0) return "ERR Library '" + lib.name + "' already exists";
      std::string clash = Clash(all, lib);
      if (!clash.empty()) return "ERR Function " + clash + " already exists";
      all[lib.name] = std::move(lib);
    }
    return "";
  });
  return error->empty();
}

std::vector<std::string> FunctionStore::Codes() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& [name, lib] : libs_) out.push_back(lib.code);
  return out;
}

size_t FunctionStore::library_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return libs_.size();
}

size_t FunctionStore::function_count() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libs_) n += lib.functions.size();
  return n;
}

size_t FunctionStore::code_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libs_) n += lib.code.size();
  return n;
}

}  // namespace strata
