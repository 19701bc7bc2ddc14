#include "nesting/isolated_child.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>
#include <variant>
#include <vector>

#include "common/base/exit_codes.h"
#include "common/base/sanitizers.h"
#include "common/security/identity.h"
#include "common/transport/readiness_poll.h"
#include "common/types/underlying_wire.h"
#include "nesting/isolation_tokens.h"
#include "worker/damaged_exit.h"

namespace kiln::nesting {

namespace {

using namespace isolation;

// Set by SIGTERM or SIGINT from the host: a clean stop (the host drains).
volatile std::sig_atomic_t gStopAsked = 0;
// The sender of such a signal that was not the host: a terminal's Ctrl-C
// or a service manager reaches the host as well, which passes its stop on;
// stopping here on its own would have the host take the exit for a crash.
volatile std::sig_atomic_t gIgnoredFrom = 0;
volatile std::sig_atomic_t gHostPid = 0;

void onStopSignal(int, siginfo_t* info, void*) {
  if (info != nullptr && info->si_pid == gHostPid) {
    gStopAsked = 1;
  } else {
    gIgnoredFrom = info != nullptr ? info->si_pid : -1;
  }
}

// A handler, not SIG_IGN: compilers the child starts get the default back
// at exec.
void takeStopsFromHost(pid_t host) {
  gHostPid = host;
  struct sigaction action {};
  action.sa_sigaction = onStopSignal;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

// The host's descriptors (its client sockets, listening port, ZeroMQ's
// internals) must not stay open in a child: a dead host's clients would not
// see their connections drop, and its port could not be bound again.
void closeInheritedDescriptors() {
  std::vector<int> open;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    int own = ::dirfd(dir);
    while (dirent* entry = ::readdir(dir)) {
      int fd = std::atoi(entry->d_name);
      if (fd > 2 && fd != own) open.push_back(fd);
    }
    ::closedir(dir);
  }
  for (int fd : open) ::close(fd);
}

void sendParts(zmq::socket_t& socket, std::initializer_list<std::string_view> parts) {
  std::size_t left = parts.size();
  for (std::string_view part : parts) {
    auto flags = --left > 0 ? zmq::send_flags::sndmore : zmq::send_flags::none;
    (void)socket.send(zmq::buffer(part.data(), part.size()), flags);
  }
}

class DealerSink final : public ReplySink {
 public:
  DealerSink(zmq::socket_t& dealer, const FrameLimits& limits) : dealer_(dealer), limits_(limits) {}
  void send(const std::string& routingId, zmq::message_t frame) override {
    // The host would drop a reply it cannot read, and its client would wait
    // for its deadline: it gets the refusal instead.
    if (frame.size() > limits_.maxMessageBytes) {
      frame = refuseOversizedReply(std::move(frame), limits_);
    }
    (void)dealer_.send(zmq::buffer(&kReply, 1), zmq::send_flags::sndmore);
    (void)dealer_.send(zmq::buffer(routingId), zmq::send_flags::sndmore);
    (void)dealer_.send(frame, zmq::send_flags::none);
  }

 private:
  zmq::socket_t& dealer_;
  const FrameLimits& limits_;
};

struct ChildWorker {
  std::unique_ptr<SessionHost> host;
  bool releasing = false;
  std::uint32_t sessionsAtRelease = 0;
};

class ChildLoop {
 public:
  ChildLoop(const ChildSetup& setup, const FrontendParts& parts)
      : setup_(setup),
        parts_(parts),
        dealer_(zmq_, zmq::socket_type::dealer),
        gate_(new TokenGatedQueue(tokens_)),
        pool_(setup.slots, std::unique_ptr<TaskQueue>(gate_)),
        executor_(pool_),
        sink_(dealer_, setup.frames) {
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::routing_id, setup_.identity);
    dealer_.set(zmq::sockopt::sndhwm, 0);
    dealer_.set(zmq::sockopt::rcvhwm, 0);
    dealer_.connect(setup_.hostEndpoint);
  }

  [[noreturn]] void run() {
    sendParts(dealer_, {std::string_view(&kHello, 1)});
    std::vector<Completion> done;
    std::vector<TokenEvent> events;
    ReadinessPoll poll;
    const std::size_t host = poll.addSocket(dealer_);
    const std::size_t completions = poll.addFd(completions_.fd());
    const std::size_t tokens = poll.addFd(tokens_.fd());
    for (;;) {
      poll.wait(std::chrono::milliseconds(50));
      if (poll.ready(host)) readHost();
      if (poll.ready(completions)) {
        completions_.drain(done);
        dispatch(done);
        if (auto damage = parts_.types.damage()) leaveDamaged(*damage);
      }
      if (poll.ready(tokens)) {
        tokens_.drain(events);
        for (const TokenEvent& event : events) {
          if (!event.release) {
            sendParts(dealer_, {std::string_view(&kAcquire, 1)});
            continue;
          }
          std::string ran;
          putU64(ran, static_cast<std::uint64_t>(
                          std::chrono::duration_cast<std::chrono::nanoseconds>(event.ran).count()));
          sendParts(dealer_, {std::string_view(&kTokenBack, 1), ran});
        }
        events.clear();
      }
      for (auto& [id, worker] : workers_) worker.host->tick();
      finishReleases();
      reportLoad();
      noteStopSignals();
      if (stopping_ && idle()) stopCleanly();
    }
  }

 private:
  void dispatch(std::vector<Completion>& done) {
    for (Completion& completion : done) deliver(std::move(completion));
    done.clear();
  }
  void deliver(Completion completion) {
    auto found = workers_.find(completion.target);
    if (found != workers_.end()) found->second.host->onCompletion(std::move(completion));
  }

  // A crash caught inside compile work may have damaged this process's
  // memory (ServiceContext::damage()): answer what already runs, take nothing
  // new, and exit for the host to start a fresh child. The host restores the
  // sessions by replay; the crashing step was answered with its error.
  [[noreturn]] void leaveDamaged(const std::string& damage) {
    parts_.logger->error(
        "compile work crashed inside the child process of experiment '{}' ({}); its memory may "
        "be damaged: finishing the running requests and exiting to be restarted",
        setup_.experiment, damage);
    answerRunningBeforeExit(pool_, completions_,
                            [this](Completion completion) { deliver(std::move(completion)); });
    parts_.logger->flush();
    // The answers must leave before the process does.
    dealer_.set(zmq::sockopt::linger, 2000);
    dealer_.close();
    zmq_.close();
    ::_exit(kExitRestartAfterCaughtCrash);
  }

  void noteStopSignals() {
    if (gIgnoredFrom != 0) {
      parts_.logger->warn(
          "the child process of experiment '{}' ignores a stop signal from process {}: it stops "
          "when its nesting host does (stop the host, or SIGKILL this child to have it restarted)",
          setup_.experiment, static_cast<int>(gIgnoredFrom));
      gIgnoredFrom = 0;
    }
    if (gStopAsked == 0 || stopping_) return;
    stopping_ = true;
    std::size_t running = 0;
    for (auto& [id, worker] : workers_) running += worker.host->inflight();
    parts_.logger->info(
        "the child process of experiment '{}' is stopping (its host drains): taking no new "
        "requests, {} in flight are answered first",
        setup_.experiment, running);
  }

  bool idle() const {
    for (const auto& [id, worker] : workers_) {
      HostLoad load = worker.host->load();
      if (worker.host->inflight() != 0 || load.busySessions != 0 || load.waitingRequests != 0) {
        return false;
      }
    }
    return pool_.busy() == 0;
  }

  // What the host's clean stop asks (isolating_backend.h): the sessions
  // end, every context of this process runs its shutdown(), the session
  // directories go, and the process exits 0. The host waits for that within
  // its --drain-seconds and kills a child that overruns it.
  [[noreturn]] void stopCleanly() {
    std::size_t sessions = 0;
    for (auto& [id, worker] : workers_) {
      sessions += worker.host->load().liveSessions;
      worker.host->clear();
    }
    workers_.clear();
    // This process's copy of the host's registry (fork): its contexts are
    // this process's own, and nothing of them is used after this.
    Status stopped = parts_.types.shutdown();
    if (!stopped.ok()) {
      parts_.logger->error("the child process of experiment '{}': context shutdown failed: {}",
                           setup_.experiment, stopped.toString());
    }
    removeSessionDirectoriesOf(parts_.workingDirectory, ::getpid());
    parts_.logger->info(
        "the child process of experiment '{}' stopped cleanly: {} sessions ended, its contexts "
        "shut down",
        setup_.experiment, sessions);
    parts_.logger->flush();
    // The answers must leave before the process does.
    dealer_.set(zmq::sockopt::linger, 2000);
    dealer_.close();
    zmq_.close();
    ::_exit(stopped.ok() ? 0 : 1);
  }

  void readHost() {
    for (int i = 0; i < 4096; ++i) {
      std::vector<zmq::message_t> parts;
      zmq::message_t part;
      if (!dealer_.recv(part, zmq::recv_flags::dontwait)) return;
      parts.push_back(std::move(part));
      while (parts.back().more()) {
        zmq::message_t next;
        if (!dealer_.recv(next, zmq::recv_flags::dontwait)) break;
        parts.push_back(std::move(next));
      }
      onHostMessage(parts);
    }
  }

  void onHostMessage(std::vector<zmq::message_t>& parts) {
    auto message = decodeHostMessage(partViews(parts), setup_.frames, parts_.limits.passKey);
    if (!message.ok()) {
      // Only the host talks to this socket, and it sends nothing malformed.
      parts_.logger->warn("isolated child of experiment '{}' ignores a message from its host: {}",
                          setup_.experiment, message.status().message());
      return;
    }
    std::visit([this](auto& decoded) { onHostMessage(decoded); }, *message);
  }

  void onHostMessage(ForwardedRequest& request) {
    if (stopping_) {
      sink_.send(request.routingId,
                 encodeErrorReply(request.message.envelope().getRequestId(),
                                  disconnected(fmt::format(
                                      "the nesting host is stopping (the operator sent it SIGTERM "
                                      "or SIGINT) and its compile process of experiment '{}' "
                                      "takes no more requests: restore the session on another "
                                      "worker",
                                      setup_.experiment))));
      return;
    }
    auto found = workers_.find(request.message.envelope().getTarget());
    if (found == workers_.end() || found->second.releasing) {
      sink_.send(request.routingId,
                 encodeErrorReply(request.message.envelope().getRequestId(),
                                  notFound("this underlying worker is being released")));
      return;
    }
    found->second.host->handle(request.routingId, std::move(request.message));
  }

  // The host reads requests with the limits it gave this child, so this is
  // a fault of the link; its client still gets an answer now, not silence
  // until its deadline.
  void onHostMessage(UnreadableRequest& unreadable) {
    parts_.logger->warn("isolated child of experiment '{}' cannot read a request: {}",
                        setup_.experiment, unreadable.why.message());
    sink_.send(unreadable.routingId,
               encodeErrorReply(unreadable.requestId,
                                internalError(fmt::format(
                                    "the compile process of experiment '{}' cannot read this "
                                    "request its nesting host accepted ({}); the host's "
                                    "--max-message-bytes ({} bytes) applies to both",
                                    setup_.experiment, unreadable.why.message(),
                                    setup_.frames.maxMessageBytes))));
  }

  void onHostMessage(CreateWorker& create) {
    UnderlyingSpec& spec = create.spec;
    if (stopping_ || workers_.contains(spec.workerId)) return;
    HostLimits limits = parts_.limits;
    // The host's metrics live in the host: a copy here would be read by
    // no one, and a lock another host thread held at fork stays held.
    limits.observer = nullptr;
    if (spec.maxSessions != 0) limits.maxSessions = std::min(limits.maxSessions, spec.maxSessions);
    HostScope scope{spec.workerId, spec.experiment, spec.sessionTypes, spec.weight};
    workers_[spec.workerId].host =
        std::make_unique<SessionHost>(parts_.types, parts_.cache, limits, parts_.clock, executor_,
                                      sink_, completions_, parts_.logger, std::move(scope));
  }

  void onHostMessage(ReleaseWorker& release) {
    auto found = workers_.find(release.workerId);
    if (found == workers_.end()) return;
    found->second.releasing = true;
    found->second.sessionsAtRelease = found->second.host->load().liveSessions;
    found->second.host->retireAll();
  }

  void onHostMessage(GrantToken&) {
    pool_.withQueue([this](TaskQueue&) { gate_->grant(1); });
  }

  void onHostMessage(DropSilentClients& drop) {
    const TimePoint since = parts_.clock.now() - drop.silentFor;
    for (auto& [id, worker] : workers_) {
      worker.host->dropSessionsOfClientsSilentSince(since, drop.why);
    }
  }

  void onHostMessage(KeepAlive& keepAlive) {
    for (auto& [id, worker] : workers_) worker.host->touchLease(ClientId{keepAlive.clientId});
  }

  void onHostMessage(AddBenchmarks& add) {
    // As SessionHost::addBenchmarks keeps them: under the client's own key.
    for (auto& [uri, program] : add.programs) {
      parts_.cache.insert(privateCacheKey(add.client, uri), std::move(program));
    }
  }

  void finishReleases() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      ChildWorker& worker = it->second;
      if (worker.releasing) worker.host->retireAll();
      if (!worker.releasing || worker.host->inflight() != 0 ||
          worker.host->load().liveSessions != 0) {
        ++it;
        continue;
      }
      std::string id, ended;
      putU64(id, it->first);
      putU64(ended, worker.sessionsAtRelease);
      sendParts(dealer_, {std::string_view(&kReleased, 1), id, ended});
      it = workers_.erase(it);
    }
  }

  void reportLoad() {
    auto now = std::chrono::steady_clock::now();
    if (now < nextLoad_) return;
    nextLoad_ = now + std::chrono::milliseconds(50);
    std::string records;
    for (const auto& [id, worker] : workers_) {
      HostLoad load = worker.host->load();
      putU64(records, id);
      putU64(records, load.liveSessions);
      putU64(records, load.busySessions);
      putU64(records, load.waitingRequests);
      putU64(records, load.stepsTotal);
    }
    sendParts(dealer_, {std::string_view(&kLoad, 1), records});
  }

  const ChildSetup& setup_;
  const FrontendParts& parts_;
  zmq::context_t zmq_{1};
  zmq::socket_t dealer_;
  Mailbox<Completion> completions_;
  Mailbox<TokenEvent> tokens_;
  TokenGatedQueue* gate_;  // owned by pool_
  TaskPool pool_;
  PoolExecutor executor_;
  DealerSink sink_;
  std::map<std::uint64_t, ChildWorker> workers_;
  std::chrono::steady_clock::time_point nextLoad_{};
  bool stopping_ = false;  // its host asked for a clean stop
};

}  // namespace

Result<pid_t> forkIsolatedChild(const ChildSetup& setup, const FrontendParts& parts) {
  // Buffered output would otherwise be written twice, once by each process.
  std::fflush(nullptr);
  parts.logger->flush();
  pid_t pid = ::fork();
  if (pid < 0) {
    return internalError(fmt::format("cannot fork the child process of experiment '{}': {}",
                                     setup.experiment, std::strerror(errno)));
  }
  if (pid > 0) return pid;
  // Child. Only this thread exists here; nothing of the host's but memory
  // (copy-on-write) and stdio is used from now on, and nothing of the host's
  // is destroyed: the child leaves with _exit().
  closeInheritedDescriptors();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != setup.hostPid) ::_exit(0);  // the host died before prctl
  takeStopsFromHost(setup.hostPid);  // before the unblock: a stop already sent waits for it
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_UNBLOCK, &all, nullptr);  // the host blocks SIGTERM for its signal thread
  ::prctl(PR_SET_NAME, "kiln-isolated", 0, 0, 0);
  // AddressSanitizer reserves terabytes of shadow address space up front, so
  // under it any RLIMIT_AS fails the child's next mapping: sanitizer builds
  // run their children without the limit.
  if (setup.memoryLimitBytes != 0 && !kUnderAddressSanitizer) {
    // Compile work runs in this process (llvm sessions): a step that runs
    // away fails its allocations here and takes down only this child.
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = setup.memoryLimitBytes;
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
      std::fprintf(stderr, "isolated child of experiment '%s': cannot limit its memory: %s\n",
                   setup.experiment.c_str(), std::strerror(errno));
    }
  }
  try {
    ChildLoop loop(setup, parts);
    loop.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "isolated child of experiment '%s' failed: %s\n", setup.experiment.c_str(),
                 e.what());
  }
  ::_exit(1);
}

}  // namespace kiln::nesting
