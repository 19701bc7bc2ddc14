// The deployment files checked as far as this machine allows: every
// Kubernetes manifest parses (python3-yaml) and each container command and
// exec probe is a kiln invocation the built binary accepts; the systemd units
// pass `systemd-analyze verify` and their ExecStart lines, expanded from the
// shipped environment file, are accepted too; the CURVE secret command makes
// a key pair that libzmq agrees with; the Dockerfile builds with scripts/setup.
#include <gtest/gtest.h>
#include <zmq.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include <kiln/curve_keys.h>
#include "common/process/working_directory.h"
#include "tests/deploy/deploy_support.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using deploytest::readFile;
using deploytest::run;

const fs::path kSource = KILN_SOURCE_DIR;
const std::string kKiln = KILN_BINARY;

// Runs a manifest's argv against the built binary with --help appended.
// `kiln nest` is replaced by `kiln worker` (same flags) until nest exists.
ProcessOutput runWithHelp(std::vector<std::string> argv, const std::string& hostCommand) {
  argv[0] = kKiln;
  if (argv.size() > 1 && argv[1] == "nest") argv[1] = hostCommand;
  argv.push_back("--help");
  return run(argv, 20s);
}

// A coordinator on loopback that deployment commands are pointed at; with a
// key file (`kiln keygen`), the cluster key that their --key-file gets.
struct LoopbackCoordinator {
  explicit LoopbackCoordinator(std::string key = {})
      : endpoint(fmt::format("tcp://127.0.0.1:{}", deploytest::freeTcpPort())),
        keyFile(std::move(key)) {
    std::vector<std::string> argv{
        kKiln,  "coordinator",         "--listen", endpoint, "--log-level",
        "warn", "--heartbeat-seconds", "0.2"};
    if (!keyFile.empty()) argv.insert(argv.end(), {"--key-file", keyFile});
    auto spawned = Subprocess::spawn(argv);
    if (spawned.ok()) process.emplace(std::move(spawned).value());
  }
  ~LoopbackCoordinator() {
    if (process) deploytest::stopProcess(*process, 5s);
  }
  int workers() const {
    std::vector<std::string> argv{kKiln, "status", "--coordinator", endpoint, "--json"};
    if (!keyFile.empty()) argv.insert(argv.end(), {"--key-file", keyFile});
    auto json = run(argv, 10s).stdoutText;
    int count = 0;
    for (auto at = json.find("\"endpoint\""); at != std::string::npos;
         at = json.find("\"endpoint\"", at + 1)) {
      ++count;
    }
    return count;
  }
  std::string endpoint;
  std::string keyFile;
  std::optional<Subprocess> process;
};

// Runs a kiln invocation from a deployment file for real, on loopback: its
// --coordinator is pointed at `coordinator`, its --listen at a free local
// port. Servers must still run after a second (flags accepted, port bound)
// and hosts must register; other commands must exit 0. Empty when it passed.
std::string runForReal(std::vector<std::string> argv, const std::string& hostCommand,
                       LoopbackCoordinator& coordinator) {
  argv[0] = kKiln;
  if (argv.size() > 1 && argv[1] == "nest") argv[1] = hostCommand;
  const std::string sub = argv.size() > 1 ? argv[1] : "";
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--coordinator") argv[i + 1] = coordinator.endpoint;
    if (argv[i] == "--key-file") argv[i + 1] = coordinator.keyFile;
    if (argv[i] == "--listen") {
      argv[i + 1] = sub == "coordinator"
                        ? fmt::format("tcp://127.0.0.1:{}", deploytest::freeTcpPort())
                        : "tcp://127.0.0.1:0";
    }
  }
  std::string shown = fmt::format("{}", fmt::join(argv, " "));
  if (sub != "coordinator" && sub != hostCommand) {
    auto result = run(argv, 20s);
    return result.status.success()
               ? ""
               : shown + ": " + result.status.describe() + " " + result.stderrText;
  }
  int before = coordinator.workers();
  auto process = Subprocess::spawn(argv);
  if (!process.ok()) return shown + ": " + process.status().toString();
  std::this_thread::sleep_for(1s);
  std::string error;
  if (auto ended = process->poll()) {
    error = shown + ": " + ended->describe() + " within a second";
  } else if (sub == hostCommand &&
             !deploytest::waitUntil([&] { return coordinator.workers() > before; }, 10s)) {
    error = shown + ": did not register within 10 s";
  }
  deploytest::stopProcess(*process, 5s);
  return error;
}

std::vector<std::vector<std::string>> parseArgvLines(const std::string& text) {
  // Each line is a JSON array of strings without escapes (checked below).
  std::vector<std::vector<std::string>> commands;
  std::istringstream lines(text);
  std::string line;
  std::regex item("\"([^\"\\\\]*)\"");
  while (std::getline(lines, line)) {
    std::vector<std::string> argv;
    for (std::sregex_iterator it(line.begin(), line.end(), item), end; it != end; ++it) {
      argv.push_back((*it)[1].str());
    }
    commands.push_back(std::move(argv));
  }
  return commands;
}

bool haveYaml() { return run({"python3", "-c", "import yaml"}, 20s).status.success(); }

TEST(ManifestTest, KubernetesContainerCommandsAreValidKilnInvocations) {
  if (!haveYaml()) GTEST_SKIP() << "python3-yaml is not installed (apt-get install python3-yaml)";
  std::vector<std::string> argv = {"python3",
                                   (kSource / "tests/deploy/manifest_commands.py").string()};
  for (const auto& entry : fs::directory_iterator(kSource / "deploy/kubernetes")) {
    if (entry.path().extension() == ".yaml") argv.push_back(entry.path().string());
  }
  ASSERT_GE(argv.size(), 4u) << "expected coordinator and host manifests";
  auto parsed = run(argv, 30s);
  ASSERT_TRUE(parsed.status.success()) << parsed.stderrText;
  auto commands = parseArgvLines(parsed.stdoutText);
  ASSERT_GE(commands.size(), 4u) << parsed.stdoutText;
  std::string host = deploytest::hostCommand(kKiln);
  // The manifests pass the mounted Secret's key file; here, one made for the test.
  fs::path key = fs::temp_directory_path() / fmt::format("kiln-manifest-{}.key", ::getpid());
  ASSERT_TRUE(run({kKiln, "keygen", "--out", key.string(), "--force"}, 20s).status.success());
  struct RemoveKey {
    fs::path path;
    ~RemoveKey() { fs::remove(path); }
  } removeKey{key};
  LoopbackCoordinator coordinator(key.string());
  ASSERT_TRUE(deploytest::waitUntil(
      [&] {
        return run({kKiln, "status", "--coordinator", coordinator.endpoint, "--key-file",
                    key.string()},
                   10s)
            .status.success();
      },
      10s));
  std::set<std::string> subcommands;
  for (const auto& command : commands) {
    ASSERT_GE(command.size(), 2u);
    ASSERT_EQ(command[0], "kiln") << "containers run kiln from PATH";
    subcommands.insert(command[1]);
    auto help = runWithHelp(command, host);
    EXPECT_TRUE(help.status.success())
        << fmt::format("{}", fmt::join(command, " ")) << ": " << help.stderrText;
    EXPECT_EQ(runForReal(command, host, coordinator), "");
  }
  EXPECT_TRUE(subcommands.count("coordinator"));
  EXPECT_TRUE(subcommands.count("nest"));
  EXPECT_TRUE(subcommands.count("status"));
}

TEST(ManifestTest, RealRunCheckRejectsInvalidInvocations) {
  // The checks mean something only if a wrong command fails them (`--help`
  // alone would accept unknown flags: CLI11 lets help win).
  std::string host = deploytest::hostCommand(kKiln);
  LoopbackCoordinator coordinator;
  EXPECT_NE(runForReal({"kiln", "coordinator", "--no-such-flag", "x"}, host, coordinator), "");
  EXPECT_NE(runForReal({"kiln", host, "--slots", "0"}, host, coordinator), "");
  EXPECT_NE(runForReal({"kiln", "status", "--jsn"}, host, coordinator), "");
  EXPECT_NE(runForReal({"kiln", "no-such-command"}, host, coordinator), "");
}

TEST(ManifestTest, MalformedManifestsAreReportedByName) {
  if (!haveYaml()) GTEST_SKIP() << "python3-yaml is not installed (apt-get install python3-yaml)";
  auto dir = WorkingDirectory::create({}, "kiln-manifest-test");
  ASSERT_TRUE(dir.ok());
  std::string script = (kSource / "tests/deploy/manifest_commands.py").string();
  std::vector<std::pair<std::string, std::string>> cases = {
      {"broken.yaml", "kind: [unclosed\n"},
      {"binary.yaml", std::string("\x00\xff\xfe garbage", 12)},
      {"empty.yaml", ""},
      {"noprobe.yaml",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
       "    spec:\n      containers:\n        - name: c\n          command: [kiln, status]\n"
       "          resources: {requests: {cpu: 1}}\n"},
      {"undefined.yaml",
       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n"
       "    spec:\n      containers:\n        - name: c\n          command: [kiln, \"$(NOPE)\"]\n"},
  };
  for (const auto& [name, text] : cases) {
    fs::path path = dir->path() / name;
    deploytest::writeFile(path, text);
    auto result = run({"python3", script, path.string()}, 30s);
    EXPECT_EQ(result.status.exitCode, 1) << name << ": " << result.stderrText;
    EXPECT_NE(result.stderrText.find(name), std::string::npos) << result.stderrText;
    EXPECT_EQ(result.stderrText.find("Traceback"), std::string::npos) << result.stderrText;
  }
}

// KEY=VALUE lines of an environment file.
std::map<std::string, std::string> readEnvironmentFile(const fs::path& path) {
  std::map<std::string, std::string> values;
  std::istringstream lines(readFile(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

TEST(ManifestTest, SystemdUnitsVerifyAndTheirCommandsAreValid) {
  const fs::path units = kSource / "deploy/systemd";
  auto env = readEnvironmentFile(units / "kiln.env");
  ASSERT_FALSE(env.empty());
  std::string host = deploytest::hostCommand(kKiln);
  auto dir = WorkingDirectory::create({}, "kiln-systemd-test");
  ASSERT_TRUE(dir.ok());
  // The units pass the credential systemd copies from the cluster key file;
  // here, one made for the test.
  fs::path key = dir->path() / "cluster.key";
  ASSERT_TRUE(run({kKiln, "keygen", "--out", key.string()}, 20s).status.success());
  LoopbackCoordinator coordinator(key.string());
  std::vector<std::string> verify = {"systemd-analyze", "verify"};
  for (const char* name : {"kiln-coordinator.service", "kiln-host@.service"}) {
    std::string text = readFile(units / name);
    EXPECT_NE(text.find("\nRestart=on-failure\n"), std::string::npos) << name;
    EXPECT_NE(text.find("\nEnvironmentFile=/etc/kiln/kiln.env\n"), std::string::npos) << name;
    EXPECT_NE(text.find("\nLoadCredential=cluster.key:/etc/kiln/curve/cluster.key\n"),
              std::string::npos)
        << name;
    EXPECT_NE(text.find(" --key-file %d/cluster.key\n"), std::string::npos) << name;
    std::smatch exec;
    ASSERT_TRUE(std::regex_search(text, exec, std::regex("\nExecStart=kiln ([^\n]*)\n"))) << name;
    // Expand ${VAR} the way systemd does (one word each) and run with --help.
    std::vector<std::string> argv = {"kiln"};
    std::istringstream words(exec[1].str());
    for (std::string word; words >> word;) {
      std::smatch variable;
      if (std::regex_match(word, variable, std::regex(R"(\$\{([A-Z_]+)\})"))) {
        ASSERT_TRUE(env.count(variable[1].str())) << variable[1] << " is not in kiln.env";
        word = env[variable[1].str()];
      }
      argv.push_back(word);
    }
    auto help = runWithHelp(argv, host);
    EXPECT_TRUE(help.status.success()) << name << ": " << help.stderrText;
    EXPECT_EQ(runForReal(argv, host, coordinator), "") << name;
    // systemd-analyze checks that the command exists: point it at the build.
    std::string local =
        std::regex_replace(text, std::regex("\nExecStart=kiln "), "\nExecStart=" + kKiln + " ");
    deploytest::writeFile(dir->path() / name, local);
    verify.push_back((dir->path() / name).string());
  }
  if (run({"sh", "-c", "command -v systemd-analyze"}, 10s).status.exitCode != 0) {
    GTEST_SKIP() << "systemd-analyze is not installed: unit files checked only by hand";
  }
  auto verified = run(verify, 60s);
  EXPECT_TRUE(verified.status.success()) << verified.stderrText;
  EXPECT_EQ(verified.stderrText, "") << "systemd-analyze warned";
}

TEST(ManifestTest, CurveSecretCommandMakesAMatchingKeyPair) {
  if (!zmq_has("curve")) GTEST_SKIP() << "this libzmq was built without CURVE";
  auto made = run({(kSource / "deploy/kubernetes/make-curve-secret").string()}, 30s);
  ASSERT_TRUE(made.status.success()) << made.stderrText;
  std::smatch secret, pub;
  ASSERT_TRUE(std::regex_search(made.stdoutText, secret, std::regex("secret-key = (\\S{40})\n")))
      << made.stdoutText;
  ASSERT_TRUE(std::regex_search(made.stdoutText, pub, std::regex("public-key = (\\S{40})\n")));
  char derived[41] = {};
  ASSERT_EQ(zmq_curve_public(derived, secret[1].str().c_str()), 0);
  EXPECT_EQ(std::string(derived), pub[1].str());
  // Fresh keys every time: nothing secret is fixed in the repository.
  auto again = run({(kSource / "deploy/kubernetes/make-curve-secret").string()}, 30s);
  EXPECT_EQ(again.stdoutText.find(secret[1].str()), std::string::npos);
  if (haveYaml()) {
    fs::path file = fs::temp_directory_path() / fmt::format("kiln-curve-{}.yaml", ::getpid());
    deploytest::writeFile(file, made.stdoutText);
    auto parsed = run({"python3", "-c",
                       "import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); "
                       "open(sys.argv[2], 'w').write(d['stringData']['cluster.key'])",
                       file.string(), (file.string() + ".key")},
                      20s);
    fs::remove(file);
    // The Secret's file is a key file kiln reads as it is.
    fs::permissions(file.string() + ".key", fs::perms::owner_read | fs::perms::owner_write);
    auto keys = loadKeyFile(file.string() + ".key");
    fs::remove(file.string() + ".key");
    ASSERT_TRUE(keys.ok()) << parsed.stderrText << keys.status().toString();
    EXPECT_EQ(keys->secretKey, secret[1].str());
    EXPECT_EQ(keys->publicKey, pub[1].str());
  }
}

TEST(ManifestTest, DockerfileBuildsFromDebianWithTheSetupScript) {
  std::string docker = readFile(kSource / "deploy/docker/Dockerfile");
  EXPECT_NE(docker.find("\nFROM debian:12\n"), std::string::npos);
  // The packages come from scripts/setup itself, so the lists cannot drift.
  EXPECT_NE(docker.find("scripts/setup"), std::string::npos);
  EXPECT_NE(docker.find("build/bin/kiln /usr/local/bin/kiln"), std::string::npos);
  std::string ignore = readFile(kSource / "deploy/docker/Dockerfile.dockerignore");
  EXPECT_NE(ignore.find("\nbuild-*\n"), std::string::npos);
  EXPECT_TRUE(fs::exists(kSource / "scripts/setup"));
}

}  // namespace
}  // namespace kiln
