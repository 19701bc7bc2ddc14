#include "common/transport/frame_prefix.h"

#include <capnp/serialize.h>

#include <algorithm>
#include <cstring>

#include "schema/kiln.capnp.h"

namespace kiln {

std::uint64_t requestIdFromPrefix(std::string_view prefix) {
  // A flat message: the segment table (count - 1, then each size in words,
  // padded to a word), then the segments. Rewritten as one segment of the
  // words at hand: the root pointer and the envelope, which a builder puts
  // first, are read; anything past the prefix fails the bounds check.
  constexpr std::size_t kWord = sizeof(capnp::word);
  if (prefix.size() < kWord) return 0;
  std::uint32_t segments = 0;
  std::memcpy(&segments, prefix.data(), sizeof(segments));
  if (segments >= 512) return 0;
  const std::size_t table = ((segments + 2) * sizeof(std::uint32_t) + kWord - 1) / kWord * kWord;
  if (prefix.size() < table + kWord) return 0;
  std::uint32_t firstWords = 0;
  std::memcpy(&firstWords, prefix.data() + sizeof(std::uint32_t), sizeof(firstWords));
  const std::size_t words = std::min<std::size_t>(firstWords, (prefix.size() - table) / kWord);
  kj::Array<capnp::word> flat = kj::heapArray<capnp::word>(words + 1);
  const std::uint32_t header[2] = {0, static_cast<std::uint32_t>(words)};
  std::memcpy(flat.begin(), header, sizeof(header));
  std::memcpy(flat.begin() + 1, prefix.data() + table, words * kWord);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = words + 16;
  try {
    capnp::FlatArrayMessageReader reader(flat, options);
    return reader.getRoot<wire::Envelope>().getRequestId();
  } catch (const kj::Exception&) {
    return 0;
  }
}

}  // namespace kiln
