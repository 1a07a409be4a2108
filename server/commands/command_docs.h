// What COMMAND DOCS returns for each command and subcommand (summary, complexity, the
// argument tree, deprecation), and the key-spec flags that COMMAND INFO and COMMAND
// GETKEYSANDFLAGS report.
//
// The table (command_docs_table.cc) writes each command's arguments as one line of a
// small syntax, parsed once on first use into the tree Redis 7's COMMAND DOCS shows:
//
//   item     := [TOKEN '='] name [':' type | '(' item ('|' item)* ')' | '{' item (' ' item)* '}']
//               suffix*
//             | [name] '!' TOKEN suffix*            a pure token; its name defaults to the
//                                                   token in lowercase
//   TOKEN    := word | "'" chars "'"                quoted when not a plain word ('*', '~', '')
//   name     := [a-z0-9_:/-]+
//   type     := string | integer | double | key | pattern | unix-time   (default: key for an
//               argument named "key", else string); '(' makes a oneof and '{' a block
//   suffix   := '?' optional | '...' multiple | '+' multiple_token | '@' since-version
//             | '#' N key_spec_index (key arguments are numbered in order otherwise)
//
// e.g. "key value condition(!NX|!XX)? !GET?@6.2.0 EX=seconds:integer?".
//
// Key specs are written as each spec's flags, specs separated by ';' ("RW access delete;RW
// insert" for SMOVE). Thread-safety: the table is constant; the parsed trees are built
// once (a function-local static) and only read after.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata {

class ReplyBuilder;

struct CommandDoc {
  const char* name = nullptr;    // lowercase; "container|sub" for a subcommand
  const char* syntax = nullptr;  // the arguments, in the syntax above; null: none
  const char* keys = nullptr;    // key-spec flags, ';' between specs; null: no keys
  // What COMMAND INFO reports as Redis 7.0 does: "first last step flag... | @category..."
  // (the legacy key range - 0 0 0 for keys found by a count or keyword, `movablekeys`
  // among the flags - the command flags and the ACL categories). Routing keeps the
  // registration's own range and flags. null: reported from the registration.
  const char* info = nullptr;
  int arity = 0;                     // a subcommand's (a command's is its registration's)
  const char* complexity = nullptr;  // null: not stated
  const char* summary = nullptr;     // null: the registration's summary
  const char* since = nullptr;       // null: the registration's (subcommands need one)
  const char* doc_flags = nullptr;   // "deprecated", "syscmd"
  const char* deprecated_since = nullptr;
  const char* replaced_by = nullptr;
};

struct DocArg {
  std::string name;
  std::string type;  // string integer double key pattern unix-time pure-token oneof block
  std::string token;
  bool has_token = false;  // '' is a token (MIGRATE's empty key)
  std::string since;
  int key_spec_index = -1;
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;
  std::vector<DocArg> args;  // a oneof's choices or a block's parts
};

// Parses one syntax line; false with *error naming the offset on a malformed line.
bool ParseDocSyntax(std::string_view syntax, std::vector<DocArg>* out, std::string* error);

// The table's entry for a command ("get") or subcommand ("config|get"); nullptr if none.
const CommandDoc* FindCommandDoc(std::string_view name);
// Every entry, for tests.
const std::vector<CommandDoc>& AllCommandDocs();

// The parsed arguments of an entry (empty for none).
const std::vector<DocArg>& DocArgs(const CommandDoc& doc);

// The words of a space-separated list (the table's flags, categories and doc flags).
std::vector<std::string_view> DocWords(std::string_view text);

// The key-spec flags of an entry, one list per spec.
std::vector<std::vector<std::string_view>> DocKeySpecs(const CommandDoc& doc);

// Writes an argument list as COMMAND DOCS does (an array of maps).
void ReplyDocArgs(const std::vector<DocArg>& args, ReplyBuilder& rb);

}  // namespace strata
