// deploy/slurm/kiln.sbatch on a real Slurm cluster that this test starts
// itself (munged, slurmctld, slurmd in the foreground, with their own config,
// key, socket and ports in a temporary directory) and stops again, exactly
// those daemons, pass or fail: one node on this machine, or several nodes,
// each a host of the namespace bed (scripts/netbed) with a network and a
// hostname of its own, one of which is lost mid-job. Skips when not root or
// Slurm/munge are not installed: it never pretends to have run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "common/process/working_directory.h"
#include "tests/deploy/deploy_support.h"
#include "tests/support/net_bed.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using deploytest::readFile;
using deploytest::run;
using deploytest::writeFile;

std::string shortHostname() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::string host(name);
  return host.substr(0, host.find('.'));
}

// Owns the daemons; the destructor cancels what is left of the test's job
// and stops the daemons in reverse order of start. Without a bed, one node on
// this machine under its own hostname; with one, node nI on bed host I (the
// controller on host 1, where the cluster's commands run too).
class TestSlurm {
 public:
  TestSlurm(fs::path dir, const testsupport::NetBed* bed = nullptr)
      : dir_(std::move(dir)), bed_(bed) {}
  ~TestSlurm() {
    if (!jobId_.empty()) command({"scancel", "--full", jobId_}, 10s);
    if (!jobId_.empty()) {
      deploytest::waitUntil(
          [&] {
            return command({"squeue", "-h", "-j", jobId_}, 5s).stdoutText.empty();
          },
          15s);
    }
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
      deploytest::stopProcess(*it, 10s);
    }
  }

  unsigned nodes() const { return bed_ ? bed_->hosts() : 1; }
  std::string nodeName(unsigned node) const {
    return bed_ ? fmt::format("n{}", node) : shortHostname();
  }

  // Runs a Slurm (or any) command where it reaches the controller.
  ProcessOutput command(std::vector<std::string> argv, std::chrono::milliseconds timeout) const {
    return run(onNode(1, std::move(argv)), timeout);
  }

  // Empty on success, else why the cluster could not be started.
  std::string start() {
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool");
    fs::create_directories(dir_ / "munge");
    fs::permissions(dir_ / "munge", fs::perms::owner_all);
    key_ = dir_ / "munge" / "munge.key";
    {
      std::random_device random;
      std::string key(1024, '\0');
      for (auto& c : key) c = static_cast<char>(random());
      writeFile(key_, key);
      fs::permissions(key_, fs::perms::owner_read);
    }
    socket_ = dir_ / "munge" / "munge.socket";
    auto munged = spawn(
        {"munged", "--foreground", "--force", "--key-file=" + key_.string(),
         "--socket=" + socket_.string(), "--pid-file=" + (dir_ / "munge" / "munged.pid").string(),
         "--log-file=" + (dir_ / "munge" / "munged.log").string(),
         "--seed-file=" + (dir_ / "munge" / "munged.seed").string()},
        "munged");
    if (!munged.empty()) return munged;
    if (!deploytest::waitUntil([&] { return fs::exists(socket_); }, 10s)) {
      return "munged did not create its socket within 10 s: " +
             readFile(dir_ / "munge" / "munged.log");
    }
    writeConfig();
    ::setenv("SLURM_CONF", (dir_ / "slurm.conf").c_str(), 1);
    const std::string conf = (dir_ / "slurm.conf").string();
    std::string error = spawnOn(1, {"slurmctld", "-D", "-c", "-f", conf});
    for (unsigned node = 1; node <= nodes() && error.empty(); ++node) {
      error = spawnOn(node, {"slurmd", "-D", "-f", conf});
    }
    if (!error.empty()) return error;
    bool idle = deploytest::waitUntil(
        [&] {
          auto state = command({"sinfo", "-h", "-N", "-o", "%t"}, 5s);
          if (!state.status.success()) return false;
          std::istringstream lines(state.stdoutText);
          unsigned idleNodes = 0;
          for (std::string line; std::getline(lines, line);) idleNodes += line == "idle";
          return idleNodes == nodes();
        },
        30s);
    if (!idle) {
      std::string logs = "slurmctld log:\n" + readFile(dir_ / "ctld.log");
      for (unsigned node = 1; node <= nodes(); ++node) {
        logs += "\nslurmd log of " + nodeName(node) + ":\n" + readFile(slurmdLog(node));
      }
      return fmt::format("not all {} nodes became idle within 30 s; {}", nodes(), logs);
    }
    return "";
  }

  // The state sinfo gives a node ("idle", "alloc", "down*", ...).
  std::string nodeState(unsigned node) const {
    auto state = command({"sinfo", "-h", "-n", nodeName(node), "-o", "%t"}, 5s);
    std::string text = state.stdoutText;
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
  }

  fs::path slurmdLog(unsigned node) const {
    return bed_ ? dir_ / ("d-" + nodeName(node) + ".log") : dir_ / "d.log";
  }

  void setJob(std::string id) { jobId_ = std::move(id); }
  const fs::path& dir() const { return dir_; }

 private:
  // On a bed host, under the node's own hostname (a UTS namespace): Slurm
  // takes a daemon's node from its hostname.
  std::vector<std::string> onNode(unsigned node, std::vector<std::string> argv) const {
    if (!bed_) return argv;
    std::vector<std::string> wrapped = bed_->runOn(node);
    wrapped.insert(wrapped.end(), {"unshare", "--uts", "sh", "-c", "hostname \"$0\" && exec \"$@\"",
                                   nodeName(node)});
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return wrapped;
  }

  std::string spawnOn(unsigned node, const std::vector<std::string>& argv) {
    return spawn(onNode(node, argv), bed_ ? argv[0] + "-" + nodeName(node) : argv[0]);
  }

  // Empty once `argv` runs, else why not; its output goes to `name`.out/err.
  std::string spawn(const std::vector<std::string>& argv, const std::string& name) {
    SubprocessOptions options;
    options.stdoutPath = dir_ / (name + ".out");
    options.stderrPath = dir_ / (name + ".err");
    auto process = Subprocess::spawn(argv, options);
    if (!process.ok()) return name + ": " + process.status().toString();
    daemons_.push_back(std::move(process).value());
    std::this_thread::sleep_for(300ms);
    if (auto ended = daemons_.back().poll()) {
      return fmt::format("{} {} right after start: {}", name, ended->describe(),
                         readFile(options.stderrPath));
    }
    return "";
  }

  void writeConfig() {
    std::string d = dir_.string();
    const long cpus = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
    std::string controller = nodeName(1);
    std::string nodeLines;
    if (!bed_) {
      nodeLines = fmt::format("NodeName={} CPUs={} State=UNKNOWN\n", controller, cpus);
    } else {
      controller += "(" + bed_->address(1) + ")";
      for (unsigned node = 1; node <= nodes(); ++node) {
        nodeLines += fmt::format("NodeName={} NodeAddr={} CPUs={} State=UNKNOWN\n", nodeName(node),
                                 bed_->address(node), cpus);
      }
    }
    // Several nodes: each slurmd with files of its own (%n, the node's name),
    // and a node that stops answering is declared down within seconds.
    const std::string perNode = bed_ ? "-%n" : "";
    writeFile(dir_ / "slurm.conf",
              fmt::format(R"(ClusterName=kilntest
SlurmctldHost={0}
SlurmctldPort={1}
SlurmdPort={2}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={3}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation={4}/state
SlurmdSpoolDir={4}/spool{6}
SlurmctldLogFile={4}/ctld.log
SlurmdLogFile={4}/d{6}.log
SlurmctldPidFile={4}/ctld.pid
SlurmdPidFile={4}/d{6}.pid
ReturnToService=2
SlurmdTimeout={7}
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
{5}PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
)",
                          controller, deploytest::freeTcpPort(), deploytest::freeTcpPort(),
                          socket_.string(), d, nodeLines, perNode, bed_ ? 6 : 300));
    writeFile(dir_ / "cgroup.conf", "CgroupPlugin=cgroup/v1\n");
  }

  fs::path dir_;
  const testsupport::NetBed* bed_;
  fs::path key_;
  fs::path socket_;
  std::vector<Subprocess> daemons_;
  std::string jobId_;
};

std::string skipReason() {
  if (::geteuid() != 0) return "needs root to run slurmd and munged";
  for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue"}) {
    if (run({"sh", "-c", std::string("command -v ") + tool}, 5s).status.exitCode != 0) {
      return std::string(tool) +
             " is not installed (apt-get install slurmd slurmctld slurm-client munge)";
    }
  }
  return "";
}

// A directory for the cluster's files that slurmd can run the batch script
// from: traversable by the daemons (all root here).
Result<WorkingDirectory> slurmDirectory() {
  auto dir = WorkingDirectory::create({}, "kiln-slurm-test");
  if (dir.ok()) {
    fs::permissions(dir->path(),
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  }
  return dir;
}

// sbatch of kiln.sbatch on `nodes` nodes running `experiment` (a shell
// command), its output in `out`; `settings` adds to the job's environment.
std::vector<std::string> submitCommand(unsigned nodes, const fs::path& out,
                                       const std::string& settings, const std::string& experiment) {
  const std::string kiln = KILN_BINARY;
  return {"sbatch",
          "--parsable",
          fmt::format("--nodes={}", nodes),
          "--time=5",
          "--output=" + out.string(),
          "--chdir=" + out.parent_path().string(),
          fmt::format("--export=ALL,KILN_BIN={},KILN_HOST_COMMAND={},KILN_SLOTS=2,"
                      "KILN_READY_SECONDS=30,KILN_LOG_LEVEL=warn,{}",
                      kiln, deploytest::hostCommand(kiln), settings),
          std::string(KILN_SOURCE_DIR) + "/deploy/slurm/kiln.sbatch",
          "bash",
          "-c",
          experiment};
}

// A tag in the environment of every process the job starts.
std::string jobTag() {
  return fmt::format("KILN_TEST_TAG=slurm-{}-{}", ::getpid(), std::random_device{}());
}

// Nothing started for the job is left running.
void expectNothingLeftOf(const std::string& tag) {
  std::vector<pid_t> left;
  bool clean = deploytest::waitUntil(
      [&] {
        left = deploytest::processesWithEnvironment(tag);
        return left.empty();
      },
      15s);
  EXPECT_TRUE(clean) << left.size() << " processes of the job are still running";
}

// Submits kiln.sbatch with a small experiment on a one-node cluster and
// checks the job ran on it and left nothing behind. With `keyed`, the job
// gets a cluster key (KILN_KEY_FILE) and the experiment uses it too.
void runJobAndCheck(bool keyed) {
  if (auto reason = skipReason(); !reason.empty()) GTEST_SKIP() << reason;
  auto dir = slurmDirectory();
  ASSERT_TRUE(dir.ok()) << dir.status().toString();
  TestSlurm slurm(dir->path());
  if (auto error = slurm.start(); !error.empty()) {
    GTEST_SKIP() << "cannot start a one-node Slurm cluster on this machine: " << error;
  }

  const std::string kiln = KILN_BINARY;
  std::string tag = jobTag();
  std::string keySetting;
  std::string keyOption;
  if (keyed) {
    fs::path key = dir->path() / "cluster.key";
    auto made = run({kiln, "keygen", "--out", key.string()}, 30s);
    ASSERT_TRUE(made.status.success()) << made.stderrText;
    keySetting = ",KILN_KEY_FILE=" + key.string();
    keyOption = R"( --key-file "$KILN_KEY_FILE")";
  }
  std::string experiment =
      R"("$KILN_BIN" status --coordinator "$KILN_COORDINATOR")" + keyOption +
      R"( && "$KILN_BIN" demo --noop --coordinator "$KILN_COORDINATOR" --sessions 4 --steps 50)" +
      keyOption;
  fs::path out = dir->path() / "job.out";
  auto submit = submitCommand(
      1, out, fmt::format("KILN_PORT={},{}{}", deploytest::freeTcpPort(), tag, keySetting),
      experiment);
  submit.insert(submit.begin() + 1, "--wait");
  auto submitted = run(submit, 150s);
  std::string id = submitted.stdoutText.substr(0, submitted.stdoutText.find_first_of(";\n"));
  slurm.setJob(id);
  std::string log = readFile(out);
  ASSERT_TRUE(submitted.status.success()) << "sbatch " << submitted.status.describe() << "\n"
                                          << submitted.stderrText << "\njob output:\n"
                                          << log << "\nslurmd log:\n"
                                          << readFile(dir->path() / "d.log");

  // The coordinator came up on the node, the host registered, the
  // experiment saw the address and ran on that cluster (not an embedded one).
  EXPECT_NE(log.find("1 workers, 2 slots"), std::string::npos) << log;
  EXPECT_NE(log.find("cluster: tcp://"), std::string::npos) << log;
  EXPECT_EQ(log.find("embedded"), std::string::npos) << log;
  EXPECT_NE(log.find("200 steps over 4 sessions"), std::string::npos) << log;
  EXPECT_NE(log.find("experiment exited with status 0"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped coordinator and hosts"), std::string::npos) << log;
  expectNothingLeftOf(tag);
  if (keyed) {
    // Plaintext and loud about it without a key; quiet with one.
    EXPECT_EQ(log.find("beyond loopback"), std::string::npos) << log;
  }
}

TEST(SlurmDeployTest, SbatchStartsClusterRunsExperimentAndCleansUp) { runJobAndCheck(false); }

TEST(SlurmDeployTest, SbatchWithAClusterKeyRunsEverySocketUnderCurve) { runJobAndCheck(true); }

// Three nodes, each a host of the namespace bed; node 3 is lost (its cable
// pulled, every process on it killed: slurmd, the job's step, the kiln host)
// while the experiment's sessions step on it. Slurm declares the node down and
// the job goes on; the coordinator declares the host lost and the client
// restores the sessions on the other nodes; every step is answered and
// every session's sum matches the actions sent.
TEST(SlurmDeployTest, ANodeLostMidJobCostsOnlyItsHostsAndItsSessionsAreRestored) {
  if (auto reason = skipReason(); !reason.empty()) GTEST_SKIP() << reason;
  constexpr unsigned kNodes = 3;
  constexpr unsigned kLost = 3;
  auto bed = testsupport::NetBed::create(std::string(KILN_SOURCE_DIR) + "/scripts/netbed", kNodes);
  if (!bed.ok() && bed.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << bed.status().toString();
  }
  ASSERT_TRUE(bed.ok()) << bed.status().toString();
  auto dir = slurmDirectory();
  ASSERT_TRUE(dir.ok()) << dir.status().toString();
  TestSlurm slurm(dir->path(), bed->get());
  if (auto error = slurm.start(); !error.empty()) {
    GTEST_SKIP() << "cannot start a " << kNodes << "-node Slurm cluster on the bed: " << error;
  }

  const std::string kiln = KILN_BINARY;
  const std::string tag = jobTag();
  const std::string coordinator = fmt::format("tcp://{}:7700", (*bed)->address(1));
  fs::path out = dir->path() / "job.out";
  auto submitted =
      slurm.command(submitCommand(kNodes, out, "KILN_PORT=7700," + tag,
                                  R"("$KILN_BIN" demo --noop --coordinator "$KILN_COORDINATOR" )"
                                  "--sessions 6 --seconds 40"),
                    30s);
  ASSERT_TRUE(submitted.status.success()) << submitted.stderrText;
  std::string id = submitted.stdoutText.substr(0, submitted.stdoutText.find_first_of(";\n"));
  slurm.setJob(id);
  auto jobLog = [&] {
    return "job output:\n" + readFile(out) + "\nslurmctld log:\n" +
           readFile(dir->path() / "ctld.log");
  };

  // Sessions step on node 3's host.
  const std::regex onLostNode(
      fmt::format(R"("host": "{}", [^{{}}]*"sessions": [1-9])", slurm.nodeName(kLost)));
  std::string status;
  bool stepping = deploytest::waitUntil(
      [&] {
        status =
            slurm.command({kiln, "status", "--coordinator", coordinator, "--json"}, 10s).stdoutText;
        return std::regex_search(status, onLostNode);
      },
      60s);
  ASSERT_TRUE(stepping) << "no session on " << slurm.nodeName(kLost) << ": " << status << "\n"
                        << jobLog();

  ASSERT_TRUE((*bed)->crash(kLost).ok());
  // Slurm sees the node go and keeps the job.
  std::string state;
  bool down = deploytest::waitUntil(
      [&] {
        state = slurm.nodeState(kLost);
        return state.rfind("down", 0) == 0;
      },
      60s);
  EXPECT_TRUE(down) << slurm.nodeName(kLost) << " is '" << state << "'\n" << jobLog();
  EXPECT_NE(slurm.command({"squeue", "-h", "-j", id, "-o", "%T"}, 10s).stdoutText.find("RUNNING"),
            std::string::npos)
      << "the job did not outlive its lost node\n"
      << jobLog();

  bool ended = deploytest::waitUntil(
      [&] {
        return slurm.command({"squeue", "-h", "-j", id}, 5s).stdoutText.empty();
      },
      120s);
  ASSERT_TRUE(ended) << jobLog();
  std::string log = readFile(out);
  std::cout << "job output:\n" << log;  // the figures of the run, for the record
  EXPECT_NE(log.find(fmt::format("{} hosts registered", kNodes)), std::string::npos) << log;
  EXPECT_NE(log.find("sums that match the actions sent: 6 of 6"), std::string::npos) << log;
  std::smatch restored;
  ASSERT_TRUE(std::regex_search(
      log, restored, std::regex(R"(sessions restored after losing their worker: (\d+))")))
      << log;
  EXPECT_GE(std::stoi(restored[1]), 1) << log;
  EXPECT_NE(log.find("experiment exited with status 0"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped coordinator and hosts"), std::string::npos) << log;
  expectNothingLeftOf(tag);
}

TEST(SlurmDeployTest, ScriptRefusesToRunOutsideAJobOrWithBadSettings) {
  std::string script = std::string(KILN_SOURCE_DIR) + "/deploy/slurm/kiln.sbatch";
  auto outside = run({"env", "-u", "SLURM_JOB_ID", script, "true"}, 10s);
  EXPECT_EQ(outside.status.exitCode, 2);
  EXPECT_NE(outside.stderrText.find("not inside a Slurm job"), std::string::npos);
  auto noCommand = run({"env", "SLURM_JOB_ID=1", script}, 10s);
  EXPECT_EQ(noCommand.status.exitCode, 2);
  EXPECT_NE(noCommand.stderrText.find("usage"), std::string::npos);
  auto badPort = run({"env", "SLURM_JOB_ID=1", "KILN_PORT=77x", script, "true"}, 10s);
  EXPECT_EQ(badPort.status.exitCode, 2);
  EXPECT_NE(badPort.stderrText.find("KILN_PORT"), std::string::npos);
  auto noBinary = run({"env", "SLURM_JOB_ID=1", "KILN_BIN=/nonexistent/kiln", script, "true"}, 10s);
  EXPECT_EQ(noBinary.status.exitCode, 2);
  EXPECT_NE(noBinary.stderrText.find("not found"), std::string::npos);
  auto noKey = run({"env", "SLURM_JOB_ID=1", std::string("KILN_BIN=") + KILN_BINARY,
                    "KILN_KEY_FILE=/nonexistent/cluster.key", script, "true"},
                   10s);
  EXPECT_EQ(noKey.status.exitCode, 2);
  EXPECT_NE(noKey.stderrText.find("KILN_KEY_FILE"), std::string::npos) << noKey.stderrText;
}

}  // namespace
}  // namespace kiln
