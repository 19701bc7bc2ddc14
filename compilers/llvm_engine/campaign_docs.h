// The validation campaign's section of docs/actions.md, rendered from the
// JSON that `kiln bench actions --validate --json` wrote and that is
// committed under docs/data/ (embedded in the build by compilers/llvm_engine/CMakeLists.txt),
// so that every figure in the docs is one that run measured.
#pragma once

#include <string>
#include <string_view>

namespace kiln::llvm_engine {

// The section for both committed runs: the default action space, and the
// same campaign with the passes denied for miscompiling put back.
std::string validationCampaignMarkdown();

// One run's tables from its JSON (a bench report: rows tagged "figure").
// A JSON that does not parse renders as a line that says so.
std::string campaignRunMarkdown(std::string_view json, std::string_view dataFile);

}  // namespace kiln::llvm_engine
