// The syntax parser and reply writer of command_docs.h; the entries are in
// command_docs_table.cc.
#include "server/commands/command_docs.h"

#include <string_view>
#include <unordered_map>

#include "server/net/reply_builder.h"

namespace strata {

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == ':' ||
         c == '/';
}

bool IsWordChar(char c) { return IsNameChar(c) || (c >= 'A' && c <= 'Z'); }

class SyntaxParser {
 public:
  explicit SyntaxParser(std::string_view s) : s_(s) {}

  bool ParseList(char end, char sep, std::vector<DocArg>* out) {
    while (true) {
      DocArg a;
      if (!ParseItem(&a)) return false;
      out->push_back(std::move(a));
      if (pos_ == s_.size()) {
        if (end == '\0') return true;
        return Fail(std::string("'") + end + "' expected");
      }
      char c = s_[pos_];
      if (c == end) {
        pos_++;
        return true;
      }
      if (c != sep)
        return Fail(std::string("'") + sep + "' or '" + (end ? end : ' ') + "' expected");
      pos_++;
    }
  }

  bool Done() const { return pos_ == s_.size(); }
  std::string error() const { return error_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int next_key_ = 0;
  std::string error_;

  bool Fail(const std::string& what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }

  bool Word(std::string* out) {
    size_t start = pos_;
    while (pos_ < s_.size() && IsWordChar(s_[pos_])) pos_++;
    *out = std::string(s_.substr(start, pos_ - start));
    return pos_ > start;
  }

  bool Token(std::string* out) {
    if (pos_ < s_.size() && s_[pos_] == '\'') {
      size_t close = s_.find('\'', pos_ + 1);
      if (close == std::string_view::npos) return Fail("unterminated quoted token");
      *out = std::string(s_.substr(pos_ + 1, close - pos_ - 1));
      pos_ = close + 1;
      return true;
    }
    if (!Word(out)) return Fail("token expected");
    return true;
  }

  static bool ValidName(const std::string& n) {
    if (n.empty()) return false;
    for (char c : n) {
      if (!IsNameChar(c)) return false;
    }
    return true;
  }

  // A name, and the type after its last ':' when that is a type's name.
  static void SplitType(std::string* name, std::string* type) {
    static const char* kTypes[] = {"string", "integer", "double", "key", "pattern", "unix-time"};
    size_t colon = name->rfind(':');
    if (colon != std::string::npos) {
      std::string t = name->substr(colon + 1);
      for (const char* k : kTypes) {
        if (t == k) {
          *type = t;
          name->resize(colon);
          return;
        }
      }
    }
    *type = *name == "key" ? "key" : "string";
  }

  bool ParseItem(DocArg* a) {
    std::string first;
    if (pos_ < s_.size() && s_[pos_] == '!') {
      pos_++;
      if (!Token(&a->token)) return false;
      a->has_token = true;
      a->type = "pure-token";
      for (char c : a->token)
        a->name += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (!ValidName(a->name)) return Fail("a pure token without a name needs a plain word");
      return Suffixes(a);
    }
    if (pos_ < s_.size() && s_[pos_] == '\'') {  // a quoted token, then '='
      if (!Token(&a->token)) return false;
      a->has_token = true;
      if (pos_ >= s_.size() || s_[pos_] != '=') return Fail("'=' expected after a quoted token");
      pos_++;
      if (!Word(&first)) return Fail("argument name expected");
    } else {
      if (!Word(&first)) return Fail("argument expected");
      if (pos_ < s_.size() && s_[pos_] == '!') {  // name!TOKEN
        pos_++;
        a->name = first;
        if (!ValidName(a->name)) return Fail("bad argument name '" + first + "'");
        if (!Token(&a->token)) return false;
        a->has_token = true;
        a->type = "pure-token";
        return Suffixes(a);
      }
      if (pos_ < s_.size() && s_[pos_] == '=') {  // TOKEN=name
        pos_++;
        a->token = first;
        a->has_token = true;
        if (!Word(&first)) return Fail("argument name expected after '='");
      }
    }
    a->name = first;
    if (pos_ < s_.size() && s_[pos_] == '(') {
      pos_++;
      a->type = "oneof";
      if (!ValidName(a->name)) return Fail("bad argument name '" + a->name + "'");
      if (!ParseList(')', '|', &a->args)) return false;
    } else if (pos_ < s_.size() && s_[pos_] == '{') {
      pos_++;
      a->type = "block";
      if (!ValidName(a->name)) return Fail("bad argument name '" + a->name + "'");
      if (!ParseList('}', ' ', &a->args)) return false;
    } else {
      SplitType(&a->name, &a->type);
      if (!ValidName(a->name)) return Fail("bad argument name '" + a->name + "'");
      if (a->type == "key") a->key_spec_index = next_key_++;
    }
    return Suffixes(a);
  }

  bool Suffixes(DocArg* a) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '?') {
        a->optional = true;
        pos_++;
      } else if (s_.substr(pos_, 3) == "...") {
        a->multiple = true;
        pos_ += 3;
      } else if (c == '+') {
        a->multiple_token = true;
        pos_++;
      } else if (c == '@' || c == '#') {
        size_t start = ++pos_;
        while (pos_ < s_.size() && ((s_[pos_] >= '0' && s_[pos_] <= '9') || s_[pos_] == '.'))
          pos_++;
        if (pos_ == start) return Fail(c == '@' ? "version expected" : "index expected");
        std::string v(s_.substr(start, pos_ - start));
        if (c == '@') {
          a->since = v;
        } else {
          if (v.find('.') != std::string::npos) return Fail("bad key spec index");
          a->key_spec_index = std::stoi(v);
        }
      } else {
        break;
      }
    }
    return true;
  }
};

struct ParsedDocs {
  std::unordered_map<std::string_view, const CommandDoc*> by_name;
  std::unordered_map<const CommandDoc*, std::vector<DocArg>> args;
};

const ParsedDocs& Parsed() {
  static const ParsedDocs parsed = [] {
    ParsedDocs p;
    for (const CommandDoc& d : AllCommandDocs()) {
      p.by_name[d.name] = &d;
      std::vector<DocArg> args;
      std::string error;
      // A malformed line leaves that command without arguments; the unit test parses
      // every line, so none ships.
      if (d.syntax != nullptr && ParseDocSyntax(d.syntax, &args, &error)) {
        p.args[&d] = std::move(args);
      }
    }
    return p;
  }();
  return parsed;
}

void ReplyArg(const DocArg& a, ReplyBuilder& rb) {
  size_t n = 2 + (a.key_spec_index >= 0) + a.has_token + !a.since.empty() +
             (a.optional || a.multiple || a.multiple_token) + !a.args.empty();
  rb.Map(n);
  rb.Bulk("name");
  rb.Bulk(a.name);
  rb.Bulk("type");
  rb.Bulk(a.type);
  if (a.key_spec_index >= 0) {
    rb.Bulk("key_spec_index");
    rb.Integer(a.key_spec_index);
  }
  if (a.has_token) {
    rb.Bulk("token");
    rb.Bulk(a.token);
  }
  if (!a.since.empty()) {
    rb.Bulk("since");
    rb.Bulk(a.since);
  }
  if (a.optional || a.multiple || a.multiple_token) {
    rb.Bulk("flags");
    rb.Set(static_cast<size_t>(a.optional) + a.multiple + a.multiple_token);
    if (a.optional) rb.Simple("optional");
    if (a.multiple) rb.Simple("multiple");
    if (a.multiple_token) rb.Simple("multiple_token");
  }
  if (!a.args.empty()) {
    rb.Bulk("arguments");
    ReplyDocArgs(a.args, rb);
  }
}

}  // namespace

bool ParseDocSyntax(std::string_view syntax, std::vector<DocArg>* out, std::string* error) {
  out->clear();
  if (syntax.empty()) return true;
  SyntaxParser p(syntax);
  if (!p.ParseList('\0', ' ', out)) {
    *error = p.error();
    out->clear();
    return false;
  }
  return true;
}

const CommandDoc* FindCommandDoc(std::string_view name) {
  const ParsedDocs& p = Parsed();
  auto it = p.by_name.find(name);
  return it == p.by_name.end() ? nullptr : it->second;
}

const std::vector<DocArg>& DocArgs(const CommandDoc& doc) {
  static const std::vector<DocArg> kNone;
  const ParsedDocs& p = Parsed();
  auto it = p.args.find(&doc);
  return it == p.args.end() ? kNone : it->second;
}

std::vector<std::string_view> DocWords(std::string_view text) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    size_t sp = text.find(' ');
    if (sp != 0) words.push_back(text.substr(0, sp));
    if (sp == std::string_view::npos) break;
    text.remove_prefix(sp + 1);
  }
  return words;
}

std::vector<std::vector<std::string_view>> DocKeySpecs(const CommandDoc& doc) {
  std::vector<std::vector<std::string_view>> specs;
  if (doc.keys == nullptr) return specs;
  std::string_view rest = doc.keys;
  while (true) {
    size_t semi = rest.find(';');
    specs.push_back(DocWords(rest.substr(0, semi)));
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  return specs;
}

void ReplyDocArgs(const std::vector<DocArg>& args, ReplyBuilder& rb) {
  rb.Array(args.size());
  for (const DocArg& a : args) ReplyArg(a, rb);
}

}  // namespace strata
