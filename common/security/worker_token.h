// The operator's registration token: what a worker or a nesting host shows
// the coordinator to be registered (RegisterWorker.token), also on clusters
// without a key, where anyone who reaches the coordinator could otherwise
// register and be placed other clients' sessions (docs/security.md).
//
// A token file is one line of 32 hexadecimal digits (16 random bytes), mode
// 0600. The coordinator writes one where none exists; workers read it.
// Without --worker-token-file both use the operator's own default file, so a
// cluster of one user on one host (or on a shared home) needs no flag, and
// other users, who cannot read the file, cannot register.
#pragma once

#include <filesystem>

#include <kiln/secret.h>
#include <kiln/status.h>

namespace kiln {

// $XDG_CONFIG_HOME/kiln/worker-token, else $HOME/.config/kiln/worker-token;
// empty when neither variable is set.
std::filesystem::path defaultWorkerTokenFile();

// Reads a token file; refuses one that is malformed or that other users may read.
Result<Secret> loadWorkerToken(const std::filesystem::path& path);

// The coordinator's side: the file's token, or a new one written there (and
// its directory made, 0700) when the file does not exist yet.
Result<Secret> loadOrCreateWorkerToken(const std::filesystem::path& path);

// A token and the file it came from (for the log); an empty token: none.
struct WorkerToken {
  Secret token;
  std::filesystem::path file;
};

// What a coordinator (or `kiln local`) asks of workers, from its
// --worker-token-file (`flag`; empty = not given): that file's token, made
// if missing; without the flag, on a cluster without a key, the default
// file's (made if missing); with a key and no flag, none (the cluster key is
// the credential).
Result<WorkerToken> coordinatorWorkerToken(const std::string& flag, bool keyed);

// What a worker or nesting host presents: the flag's file (which must
// exist), else the default file if it exists, else none.
Result<WorkerToken> presentedWorkerToken(const std::string& flag);

}  // namespace kiln
