#include "programs/datasets/benchmark_uri.h"

namespace kiln::datasets {
namespace {

bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlnum(char c) { return isLower(c) || isDigit(c) || (c >= 'A' && c <= 'Z'); }

// Messages quote the input; cap it so a hostile URI cannot make a huge message.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 80)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  if (text.size() > 80) out += "...";
  return out + "'";
}

Status bad(std::string_view text, const std::string& why) {
  return invalidArgument("benchmark URI " + quoted(text) + " " + why);
}

// Characters that are never allowed anywhere in a URI.
Status checkCharacters(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    std::string where = " at offset " + std::to_string(i);
    if (byte < 0x20 || byte == 0x7f) return bad(text, "contains a control character" + where);
    if (byte == ' ') return bad(text, "contains a space" + where);
    if (byte >= 0x80) return bad(text, "contains a non-ASCII byte" + where);
    // Percent-escapes are not decoded, so they would silently mean something else.
    if (byte == '%') return bad(text, "contains '%': percent-escapes are not supported");
    if (byte == '?' || byte == '#') return bad(text, "has a query or fragment, not supported");
    if (byte == '\\') return bad(text, "contains a backslash" + where);
  }
  return okStatus();
}

// `path` is a '/'-separated relative path: non-empty segments, none "." or "..".
Status checkSegments(std::string_view text, std::string_view path, const char* what) {
  if (path.empty()) return bad(text, std::string("has an empty ") + what);
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view segment = path.substr(start, slash - start);
    if (segment.empty()) return bad(text, std::string("has an empty segment in its ") + what);
    if (segment == "." || segment == "..") {
      return bad(text, std::string("has a '") + std::string(segment) + "' segment in its " + what +
                           " (path traversal is not allowed)");
    }
    start = slash + 1;
  }
  return okStatus();
}

}  // namespace

bool isValidDatasetName(std::string_view name) {
  if (name.empty() || name.size() > 128 || !isAlnum(name[0])) return false;
  for (char c : name) {
    if (!isAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string BenchmarkUri::datasetUri() const { return scheme + "://" + dataset; }

std::string BenchmarkUri::toString() const {
  if (scheme == "file") return "file://" + name;
  return scheme + "://" + dataset + "/" + name;
}

Result<BenchmarkUri> parseBenchmarkUri(std::string_view text) {
  if (text.empty()) return invalidArgument("benchmark URI is empty");
  if (text.size() > kMaxUriLength) {
    return bad(text, "is " + std::to_string(text.size()) + " bytes long, over the limit of " +
                         std::to_string(kMaxUriLength));
  }
  KILN_RETURN_IF_ERROR(checkCharacters(text));

  std::size_t sep = text.find("://");
  if (sep == std::string_view::npos) {
    return bad(text, "has no scheme; write e.g. benchmark://<dataset>/<name>");
  }
  BenchmarkUri uri;
  std::string_view scheme = text.substr(0, sep);
  if (scheme.empty()) return bad(text, "has an empty scheme");
  if (!isLower(scheme[0])) return bad(text, "has a scheme that does not start with [a-z]");
  for (char c : scheme) {
    if (!isLower(c) && !isDigit(c) && c != '+' && c != '-' && c != '.') {
      return bad(text, "has a scheme with characters outside [a-z0-9+.-]");
    }
  }
  uri.scheme = std::string(scheme);
  std::string_view rest = text.substr(sep + 3);

  if (uri.scheme == "file") {
    // file:///abs/path: empty authority, then an absolute path.
    if (rest.empty() || rest[0] != '/') {
      return bad(text, "must be file:///absolute/path (no host, absolute path)");
    }
    KILN_RETURN_IF_ERROR(checkSegments(text, rest.substr(1), "path"));
    uri.name = std::string(rest);
    return uri;
  }

  std::size_t slash = rest.find('/');
  std::string_view dataset = rest.substr(0, slash);
  if (dataset.empty()) return bad(text, "has an empty dataset");
  if (!isValidDatasetName(dataset)) {
    return bad(text, "has an invalid dataset name (want [A-Za-z0-9][A-Za-z0-9._-]*, <= 128 bytes)");
  }
  if (slash == std::string_view::npos) {
    return bad(text, "names no benchmark; write " + std::string(scheme) + "://" +
                         std::string(dataset) + "/<name>");
  }
  std::string_view name = rest.substr(slash + 1);
  KILN_RETURN_IF_ERROR(checkSegments(text, name, "benchmark name"));
  uri.dataset = std::string(dataset);
  uri.name = std::string(name);
  return uri;
}

}  // namespace kiln::datasets
