// "Did you mean ...?" for names a user typed: the known names closest to an
// unknown one, so that an error can suggest what was probably meant (a pass
// name with a typo, a CompilerGym flag without its dash). Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// Edit distance (insertions, deletions, substitutions), case-insensitive.
std::size_t editDistance(std::string_view a, std::string_view b);

// Up to `limit` of `known`, nearest first: names within an edit distance of
// a third of `wanted`'s length (at least 2), and names that contain `wanted`
// or are contained in it (ignoring case and a leading '-'). Ties keep the
// order of `known`.
std::vector<std::string> nearNames(std::string_view wanted, const std::vector<std::string>& known,
                                   std::size_t limit = 3);

// " (did you mean 'a', 'b'?)", or "" when nothing is near.
std::string didYouMean(std::string_view wanted, const std::vector<std::string>& known);

}  // namespace kiln
