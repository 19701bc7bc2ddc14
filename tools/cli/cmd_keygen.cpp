// `kiln keygen`: makes the cluster key file that --key-file reads, and
// prints its public key (for an --authorized-keys file elsewhere).
#include <fmt/format.h>

#include <kiln/curve_keys.h>
#include "tools/cli/commands.h"

namespace kiln::cli {

std::optional<ClusterKeys> loadKeyFileOrExit(const std::string& path, const std::string& command) {
  if (path.empty()) return std::nullopt;
  auto keys = loadKeyFile(path);
  if (!keys.ok()) {
    fmt::print(stderr, "kiln {}: {}\n", command, keys.status().toString());
    throw CLI::RuntimeError(1);
  }
  return std::move(keys).value();
}

void addKeygenCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "keygen",
      "make a cluster key file (CURVE key pair, mode 0600) for --key-file on every kiln "
      "process of a cluster");
  auto out = std::make_shared<std::string>();
  auto replace = std::make_shared<bool>(false);
  command->add_option("--out", *out, "where to write the key file")->required();
  command->add_flag("--force", *replace, "replace an existing file");
  command->callback([out, replace] {
    auto keys = generateClusterKeys();
    Status written = keys.ok() ? writeKeyFile(*out, *keys, *replace) : keys.status();
    if (!written.ok()) {
      fmt::print(stderr, "kiln keygen: {}\n", written.toString());
      throw CLI::RuntimeError(1);
    }
    fmt::print("wrote {} (mode 0600); public key {}\n", *out, keys->publicKey);
  });
}

}  // namespace kiln::cli
