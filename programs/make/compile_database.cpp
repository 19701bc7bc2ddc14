#include "programs/make/compile_database.h"

#include "programs/make/json_tree.h"
#include "programs/make/shell_words.h"

namespace kiln::programs {
namespace {

constexpr std::string_view kWhat = "compile_commands.json";

// Fills `entry` from one object of the database, or says why it cannot.
std::string readEntry(const JsonValue& object, DatabaseEntry& entry) {
  const JsonValue* directory = object.member("directory");
  const JsonValue* file = object.member("file");
  const JsonValue* arguments = object.member("arguments");
  const JsonValue* command = object.member("command");
  if (file == nullptr || file->kind != JsonValue::Kind::kString || file->string.empty()) {
    return "the entry has no \"file\"";
  }
  if (directory == nullptr || directory->kind != JsonValue::Kind::kString ||
      !std::filesystem::path(directory->string).is_absolute()) {
    entry.command.file = file->string;
    return "the entry has no absolute \"directory\"";
  }
  entry.command.directory = std::filesystem::path(directory->string).lexically_normal();
  entry.command.file = file->string;
  if (entry.command.file.is_relative()) {
    entry.command.file = (entry.command.directory / entry.command.file).lexically_normal();
  }
  if (arguments != nullptr) {
    if (arguments->kind != JsonValue::Kind::kArray) return "its \"arguments\" is not an array";
    std::vector<std::string> argv;
    for (const JsonValue& word : arguments->array) {
      if (word.kind != JsonValue::Kind::kString) return "its \"arguments\" holds a non-string";
      argv.push_back(word.string);
    }
    entry.command.arguments = std::move(argv);
    return {};
  }
  if (command != nullptr && command->kind == JsonValue::Kind::kString) {
    auto words = splitShellWords(command->string);
    if (!words.ok()) return "its \"command\": " + words.status().message();
    entry.command.arguments = std::move(*words);
    return {};
  }
  return "the entry has neither \"arguments\" nor \"command\"";
}

}  // namespace

Result<std::vector<DatabaseEntry>> parseCompileDatabase(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(JsonValue document, parseJson(text, kWhat));
  if (document.kind != JsonValue::Kind::kArray) {
    return invalidArgument("compile_commands.json is not a JSON array of compile commands");
  }
  std::vector<DatabaseEntry> entries;
  entries.reserve(document.array.size());
  for (std::size_t i = 0; i < document.array.size(); ++i) {
    const JsonValue& object = document.array[i];
    if (object.kind != JsonValue::Kind::kObject) {
      return invalidArgument("compile_commands.json: entry " + std::to_string(i) +
                             " is not an object");
    }
    DatabaseEntry entry;
    entry.problem = readEntry(object, entry);
    if (!entry.problem.empty()) entry.command.arguments.clear();
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace kiln::programs
