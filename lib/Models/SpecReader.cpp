//===- SpecReader.cpp - checked access to a JSON model description --------===//

#include "lib/Models/SpecReader.h"
#include "lib/Runtime/Budget.h"
#include "lib/Runtime/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>

using namespace mlir::attn;
using llvm::StringRef;

namespace {

/// Records the line of every object key and array element of a JSON text
/// (already known to parse) under its path.
void indexLines(StringRef text, llvm::StringMap<unsigned> &lines) {
  struct Frame {
    bool isArray = false;
    std::string path; // of the container
    int64_t index = 0;
    std::string key;
    bool expectKey = true;
  };
  std::vector<Frame> stack;
  unsigned line = 1;
  auto childPath = [&](const Frame &f) {
    if (f.isArray)
      return f.path + "[" + std::to_string(f.index) + "]";
    return f.path.empty() ? f.key : f.path + "." + f.key;
  };
  // Called at the start of every value: array elements get their line here.
  auto startValue = [&]() {
    if (!stack.empty() && stack.back().isArray)
      lines.try_emplace(childPath(stack.back()), line);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == ':')
      continue;
    if (c == ',') {
      if (!stack.empty()) {
        if (stack.back().isArray)
          ++stack.back().index;
        else
          stack.back().expectKey = true;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      startValue();
      std::string path = stack.empty() ? "" : childPath(stack.back());
      Frame frame;
      frame.isArray = c == '[';
      frame.path = path;
      stack.push_back(std::move(frame));
      continue;
    }
    if (c == '}' || c == ']') {
      if (!stack.empty())
        stack.pop_back();
      continue;
    }
    if (c == '"') {
      size_t j = i + 1;
      std::string s;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size())
          ++j;
        s.push_back(text[j]);
      }
      if (!stack.empty() && !stack.back().isArray && stack.back().expectKey) {
        stack.back().key = s;
        stack.back().expectKey = false;
        lines.try_emplace(childPath(stack.back()), line);
      } else {
        startValue();
      }
      i = j;
      continue;
    }
    // A number or literal: skip to its end.
    startValue();
    while (i + 1 < text.size() &&
           !llvm::is_contained(",]}\n \t\r", text[i + 1]))
      ++i;
  }
}

} // namespace

llvm::Expected<std::unique_ptr<SpecSource>> SpecSource::load(StringRef path) {
  // The size first (from the file system), then the bytes.
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > kMaxBytes)
    return llvm::createStringError(
        std::errc::file_too_large,
        "%s: %llu bytes, more than the %llu a model description may have "
        "(it names its weights and graph files; it does not hold them)",
        path.str().c_str(), static_cast<unsigned long long>(size),
        static_cast<unsigned long long>(kMaxBytes));
  auto bufOr = readInputFile(path, /*isText=*/true);
  if (!bufOr)
    return bufOr.takeError();
  auto source = std::make_unique<SpecSource>();
  source->path = path.str();
  source->text = (*bufOr)->getBuffer().str();
  llvm::Expected<llvm::json::Value> root = parseJson(source->text);
  if (!root) {
    // llvm::json reports "[line:col, byte=N]: message".
    std::string message = llvm::toString(root.takeError());
    StringRef m = message;
    if (m.consume_front("[")) {
      auto [where, rest] = m.split("]: ");
      auto [lineCol, byte] = where.split(", ");
      return llvm::createStringError("%s:%s: invalid JSON: %s",
                                     path.str().c_str(), lineCol.str().c_str(),
                                     rest.str().c_str());
    }
    return llvm::createStringError("%s: invalid JSON: %s", path.str().c_str(),
                                   message.c_str());
  }
  source->root = std::move(*root);
  indexLines(source->text, source->lines);
  return source;
}

SpecReader::SpecReader(SpecSource &source, const llvm::json::Object &object,
                       std::string prefix)
    : source(source), fields(object), prefix(std::move(prefix)) {}

std::string SpecReader::path(StringRef key) const {
  return prefix.empty() ? key.str() : prefix + "." + key.str();
}

void SpecReader::fail(StringRef key, const llvm::Twine &message) {
  if (failed())
    return;
  std::string p = path(key);
  auto it = source.lines.find(p);
  if (it == source.lines.end()) // a missing key: the object's own line
    it = source.lines.find(prefix);
  unsigned line = it == source.lines.end() ? 1 : it->second;
  source.error = source.path + ":" + std::to_string(line) + ": key '" + p +
                 "': " + message.str();
}

void SpecReader::failOption(StringRef option, StringRef key,
                            const llvm::Twine &message) {
  if (failed())
    return;
  std::string p = path(key);
  auto it = source.lines.find(p);
  bool present = it != source.lines.end();
  std::string where = source.path;
  if (present)
    where += ":" + std::to_string(it->second) + ", key '" + p + "'";
  else
    where += ", key '" + p + "' (its default)";
  source.error = "--" + option.str() + ": " + message.str() + " (" + where + ")";
}

void SpecReader::check(bool ok, StringRef key, const llvm::Twine &message) {
  if (!ok)
    fail(key, message);
}

const llvm::json::Value *SpecReader::get(StringRef key, bool required) {
  used.insert(key);
  const llvm::json::Value *v = fields.get(key);
  if (!v && required) {
    // A key of the object that is no key of the reader's and nearly this
    // one's name is named with it (a misspelt required key otherwise hides
    // behind "missing", and unknown keys are reported only at the end).
    std::string nearest;
    unsigned best = 3;
    for (const auto &kv : fields) {
      StringRef other = kv.first;
      unsigned d = other.edit_distance(key, /*AllowReplacements=*/true, best);
      if (d < best && d <= (key.size() >= 6 ? 2u : 1u)) {
        best = d;
        nearest = other.str();
      }
    }
    if (!nearest.empty())
      fail(key, "missing (required); the object has '" + nearest +
                    "' instead (misspelt?)");
    else
      fail(key, "missing (required)");
  }
  return v;
}

int64_t SpecReader::integer(StringRef key, std::optional<int64_t> def,
                            int64_t min, int64_t max) {
  const llvm::json::Value *v = get(key, !def);
  if (!v)
    return def.value_or(min);
  std::optional<int64_t> i = v->getAsInteger();
  if (!i) {
    fail(key, "expected an integer");
    return def.value_or(min);
  }
  if (*i < min) {
    fail(key, "expected an integer >= " + llvm::Twine(min) + ", got " +
                  llvm::Twine(*i));
    return def.value_or(min);
  }
  if (*i > max) {
    fail(key, "expected an integer <= " + llvm::Twine(max) + ", got " +
                  llvm::Twine(*i));
    return def.value_or(min);
  }
  return *i;
}

double SpecReader::number(StringRef key, std::optional<double> def) {
  const llvm::json::Value *v = get(key, !def);
  if (!v)
    return def.value_or(0);
  std::optional<double> d = v->getAsNumber();
  if (!d || !std::isfinite(*d)) {
    fail(key,
         d ? "expected a finite number, got " + llvm::Twine(std::to_string(*d))
           : llvm::Twine("expected a number"));
    return def.value_or(0);
  }
  return *d;
}

bool SpecReader::inF32Range(double d) {
  double a = std::abs(d);
  return a == 0 || (a >= std::numeric_limits<float>::min() &&
                    a <= std::numeric_limits<float>::max());
}

double SpecReader::positiveNumber(StringRef key, std::optional<double> def) {
  double d = number(key, def);
  check(d > 0 && inF32Range(d), key,
        "expected a number > 0 in f32's normal range (1.2e-38 to 3.4e38), "
        "got " +
            llvm::Twine(llvm::formatv("{0:e}", d).str()));
  return d;
}

bool SpecReader::boolean(StringRef key, std::optional<bool> def) {
  const llvm::json::Value *v = get(key, !def);
  if (!v)
    return def.value_or(false);
  std::optional<bool> b = v->getAsBoolean();
  if (!b) {
    fail(key, "expected true or false");
    return def.value_or(false);
  }
  return *b;
}

std::string SpecReader::string(StringRef key, std::optional<std::string> def) {
  const llvm::json::Value *v = get(key, !def);
  if (!v)
    return def.value_or("");
  std::optional<StringRef> s = v->getAsString();
  if (!s) {
    fail(key, "expected a string");
    return def.value_or("");
  }
  return s->str();
}

std::string SpecReader::choice(StringRef key, llvm::ArrayRef<StringRef> allowed,
                               std::optional<StringRef> def) {
  std::optional<std::string> d;
  if (def)
    d = def->str();
  std::string s = string(key, d);
  if (!failed() && !llvm::is_contained(allowed, s))
    fail(key,
         "expected one of " + llvm::join(allowed, ", ") + ", got '" + s + "'");
  return s;
}

std::vector<double> SpecReader::numbers(StringRef key) {
  std::vector<double> out;
  const llvm::json::Array *a = array(key, /*required=*/true);
  if (!a)
    return out;
  for (const llvm::json::Value &v : *a) {
    std::optional<double> d = v.getAsNumber();
    if (!d) {
      fail(key, "expected an array of numbers");
      return {};
    }
    out.push_back(*d);
  }
  check(!out.empty(), key, "expected a non-empty array of numbers");
  return out;
}

const llvm::json::Object *SpecReader::object(StringRef key, bool required) {
  const llvm::json::Value *v = get(key, required);
  if (!v)
    return nullptr;
  const llvm::json::Object *o = v->getAsObject();
  if (!o)
    fail(key, "expected an object");
  return o;
}

const llvm::json::Array *SpecReader::array(StringRef key, bool required) {
  const llvm::json::Value *v = get(key, required);
  if (!v)
    return nullptr;
  const llvm::json::Array *a = v->getAsArray();
  if (!a)
    fail(key, "expected an array");
  return a;
}

llvm::Error SpecReader::finish() {
  if (!failed()) {
    // Report unknown keys in file order.
    std::string first;
    unsigned firstLine = ~0u;
    for (const auto &kv : fields) {
      if (used.contains(kv.first))
        continue;
      auto it = source.lines.find(path(kv.first));
      unsigned line = it == source.lines.end() ? 0 : it->second;
      if (line < firstLine) {
        firstLine = line;
        first = kv.first.str();
      }
    }
    if (!first.empty()) {
      std::vector<std::string> known;
      for (const auto &k : used)
        known.push_back(k.getKey().str());
      llvm::sort(known);
      fail(first,
           "unknown key (expected one of: " + llvm::join(known, ", ") + ")");
    }
  }
  if (failed())
    return llvm::createStringError(source.error);
  return llvm::Error::success();
}
