// The committed JSON of the validation campaign's runs (docs/data/), as the
// build embedded it (compilers/llvm_engine/embed_text.cmake): what docs/actions.md's
// campaign section is rendered from. Empty when the file is missing.
#pragma once

#include <string_view>

namespace kiln::llvm_engine {

std::string_view validationCampaignJson();  // docs/data/action_validation.json
std::string_view validationPutBackJson();   // docs/data/action_validation_put_back.json

}  // namespace kiln::llvm_engine
