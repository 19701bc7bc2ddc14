#include "compilers/llvm_engine/campaign_docs.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "compilers/llvm_engine/campaign_data.h"
#include "llvm/Support/JSON.h"

namespace kiln::llvm_engine {
namespace {

using Object = llvm::json::Object;

std::string textOf(const Object& row, llvm::StringRef key) {
  const std::optional<llvm::StringRef> value = row.getString(key);
  return value ? value->str() : std::string();
}

long long countOf(const Object& row, llvm::StringRef key) {
  const std::optional<double> value = row.getNumber(key);
  return value ? std::llround(*value) : 0;
}

// A table cell: one line, no column breaks.
std::string cell(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::vector<const Object*> rowsOf(const llvm::json::Value& report, std::string_view figure) {
  std::vector<const Object*> rows;
  const Object* top = report.getAsObject();
  const llvm::json::Array* all = top ? top->getArray("rows") : nullptr;
  if (all == nullptr) return rows;
  for (const llvm::json::Value& value : *all) {
    const Object* row = value.getAsObject();
    if (row != nullptr && textOf(*row, "figure") == figure) rows.push_back(row);
  }
  return rows;
}

std::string summary(const Object& run, const Object& campaign, const Object* programs) {
  return fmt::format(
      "Written by `{}` on {} ({}).\n\n"
      "{} programs validated ({}). {} sequences ran to their end and were checked ({} of them "
      "left the program as it came), {} distinct states were built and run on every input{}: "
      "**{} miscompiles**; {} sequences where LLVM crashed or broke the module, {} that could "
      "not be checked; {} s.\n\n",
      textOf(run, "command"), textOf(run, "date"), textOf(run, "machine"),
      countOf(campaign, "programs"), programs ? textOf(*programs, "names") : "",
      countOf(campaign, "sequences"), countOf(campaign, "unchanged"), countOf(campaign, "checks"),
      textOf(campaign, "asan") == "yes" ? " (the optimized program and its ASan build)" : "",
      countOf(campaign, "miscompiles"), countOf(campaign, "broken"),
      countOf(campaign, "check_errors"), countOf(campaign, "seconds"));
}

}  // namespace

std::string campaignRunMarkdown(std::string_view json, std::string_view dataFile) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed) {
    return fmt::format("(docs/data/{} is not a campaign report: {})\n\n", dataFile,
                       llvm::toString(parsed.takeError()));
  }
  const std::vector<const Object*> run = rowsOf(*parsed, "run");
  const std::vector<const Object*> campaign = rowsOf(*parsed, "campaign");
  if (run.empty() || campaign.empty()) {
    return fmt::format("(docs/data/{} has no run or campaign row)\n\n", dataFile);
  }
  const std::vector<const Object*> programs = rowsOf(*parsed, "programs");
  std::string out = summary(*run[0], *campaign[0], programs.empty() ? nullptr : programs[0]);

  out += "| family | sequences | miscompiles |\n|---|---|---|\n";
  for (const Object* row : rowsOf(*parsed, "family")) {
    out += fmt::format("| {} | {} | {} |\n", textOf(*row, "family"), countOf(*row, "sequences"),
                       countOf(*row, "miscompiles"));
  }

  // With passes put back, the rows that matter are theirs and the culprits'.
  const std::vector<const Object*> passes = rowsOf(*parsed, "pass");
  bool putBack = false;
  for (const Object* row : passes) putBack |= textOf(*row, "space") == "put back";
  out +=
      "\n| action | space | sequences tried | changed the module | miscompiles | LLVM broke it "
      "|\n|---|---|---|---|---|---|\n";
  for (const Object* row : passes) {
    const bool own = textOf(*row, "space") == "put back";
    if (putBack && !own && countOf(*row, "miscompiles") == 0) continue;
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", textOf(*row, "pass"),
                       textOf(*row, "space"), countOf(*row, "tried"), countOf(*row, "changed"),
                       countOf(*row, "miscompiles"), countOf(*row, "broke"));
  }

  const std::vector<const Object*> miscompiles = rowsOf(*parsed, "miscompile");
  if (!miscompiles.empty()) {
    out +=
        "\nEach miscompile with the shortest prefix of its sequence that shows it (the culprit "
        "last):\n\n| program | sequence | what went wrong |\n|---|---|---|\n";
    for (const Object* row : miscompiles) {
      out +=
          fmt::format("| {} | `{}` | {}: {} |\n", textOf(*row, "program"), textOf(*row, "sequence"),
                      textOf(*row, "kind"), cell(textOf(*row, "message")));
    }
  }
  const std::vector<const Object*> excluded = rowsOf(*parsed, "excluded");
  if (!excluded.empty()) {
    out += "\nPrograms that could not be validated:\n\n| program | why |\n|---|---|\n";
    for (const Object* row : excluded) {
      out += fmt::format("| {} | {} |\n", textOf(*row, "program"), cell(textOf(*row, "reason")));
    }
  }
  return out + "\n";
}

std::string validationCampaignMarkdown() {
  return "\n## Validation campaign: every action keeps the program's behaviour\n\n"
         "`kiln bench actions --validate` runs sequences of actions on every runnable program\n"
         "(kiln-bench-v0 with its four inputs, csmith programs): each action alone, after\n"
         "mem2reg, after sroa, last of a sampled triple and inside a random episode. Each\n"
         "final state's program is built, run on every input in the sandbox, and compared\n"
         "with the program as it came (-O0), its ASan build too (the machinery of `kiln\n"
         "validate`). When a program behaves differently, the campaign checks prefixes of its\n"
         "sequence to find the first action after which it does: that action miscompiled,\n"
         "after the actions before it. A pass that miscompiles leaves the default space (its\n"
         "reason is in the table of registry passes left out, above). The tables come from the\n"
         "committed JSON of the runs.\n\n"
         "### The default action space\n\n" +
         campaignRunMarkdown(validationCampaignJson(), "action_validation.json") +
         "### The passes denied for miscompiling, put back\n\n"
         "The same campaign with the denied passes put back as actions, to show what it finds\n"
         "when one is an action again.\n\n" +
         campaignRunMarkdown(validationPutBackJson(), "action_validation_put_back.json");
}

}  // namespace kiln::llvm_engine
