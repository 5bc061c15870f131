#include "launch/keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "launch/nsys_process_tree.hpp"
#include "launch/stop_signals.hpp"
#include "nsel/core/error.hpp"
#include "nsel/launch/nsys_agents.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/proc.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace {

using Clock = std::chrono::steady_clock;

bool group_alive(int group) {
  return kill(-group, 0) == 0;
}

// "60" or "2.5": how the user wrote it in NSEL_STOP_TIMEOUT.
std::string seconds_text(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(duration.count()) / 1000.0);
  return text;
}

// Nsight Systems sessions that start at the same moment on one machine sometimes fail: one never
// starts its program ("Local Endpoint is not available") or loses its agent ("Connection to
// Agent lost") and writes no report. Measured with scripts/startup-stress.sh (4 ranks started
// together): 2023.4 lost 4 of 120 sessions, 2022.4 1 of 20; taking turns, none of 80 each.
constexpr std::chrono::milliseconds kStartTurnWait{std::chrono::seconds(30)};
constexpr std::chrono::milliseconds kStartTurnLimit{std::chrono::seconds(15)};

void say(const std::string& message) {
  std::fprintf(stderr, "nsel: %s\n", message.c_str());
}

// The keeper: runs nsys, takes stop requests from the launcher (a signal number per byte, end
// of file when the launcher is gone) and from its own signals, and bounds every wait.
class Keeper {
 public:
  Keeper(const SupervisionOptions& options, int control_fd)
      : options_(options), control_fd_(control_fd) {}

  int run(const std::vector<std::string>& command, const std::vector<std::string>& environment) {
    int self_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, self_pipe) != 0) {
      say(std::string("cannot create a pipe: ") + std::strerror(errno));
      return 1;
    }
    self_read_ = self_pipe[0];
    write_signals_to(self_pipe[1]);
    for (int signal_number : kStopSignals) install_signal_writer(signal_number);
    install_signal_writer(SIGCHLD);
    signal(SIGPIPE, SIG_IGN);  // the launcher may be gone when the exit code is sent
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);

    // nsys's own processes (its agent, while it detaches) are never the program.
    nsys_folder_ = nsys_install_folder(command.front());
    for (int attempt = 1;; ++attempt) {
      const auto turn_asked = Clock::now();
      start_turn_ = FileLock(nsys_start_turn_lock(), kStartTurnWait, [this] {
        pollfd fds[2] = {{self_read_, POLLIN, 0}, {control_fd_, POLLIN, 0}};
        if (poll(fds, control_fd_ >= 0 ? 2 : 1, 0) > 0) {
          drain_self_pipe();
          if (control_fd_ >= 0 && fds[1].revents != 0) read_control();
        }
        return stop_signal_ == 0;
      });
      // Stopped while waiting for the turn: nothing has started, so nothing is lost.
      if (stop_signal_ != 0) return 128 + stop_signal_;
      say_long_turn_wait(Clock::now() - turn_asked);
      if (attempt == 1 && options_.under_start_turn) {
        if (const std::string refused = options_.under_start_turn(); !refused.empty()) {
          std::fprintf(stderr, "nsel: error: %s\n", refused.c_str());
          return 1;
        }
      }
      start_turn_until_ = Clock::now() + kStartTurnLimit;
      try {
        // nsys leads a group of its own (with its launcher), so the keeper can end that group
        // without ending itself.
        // File times come from the kernel's coarse clock, a tick behind: 100 ms of slack.
        nsys_started_ =
            std::filesystem::file_time_type::clock::now() - std::chrono::milliseconds(100);
        nsys_ = spawn_process(command, environment, "", ChildOutput::inherit, true);
      } catch (const Error& e) {
        std::fprintf(stderr, "nsel: error: %s\n", e.what());
        return e.exit_code();
      }
      if (options_.on_started) options_.on_started(nsys_);
      const int code = supervise();
      // nsys failed at its start-up, before the program began (its launcher may have forked
      // already): nothing of the program is lost by starting nsys again.
      if (attempt < kNsysStartAttempts && stop_signal_ == 0 && code != 0 &&
          options_.program_never_began && options_.program_never_began()) {
        kill_program_groups(SIGKILL);  // what nsys's launcher left of a start never completed
        say("nsys ended (exit status " + std::to_string(code) +
            ") before the program began, a failure of Nsight Systems at its start-up; starting "
            "it again (" +
            std::to_string(attempt + 1) + " of " + std::to_string(kNsysStartAttempts) + ")");
        forget_nsys();
        continue;
      }
      SupervisionEnd end;
      end.exit_code = code;
      end.stop_timed_out = escalated_ || outlived_;
      // A stop that had to be forced is never a success, whatever nsys said after its SIGINT.
      if (end.stop_timed_out && end.exit_code < 128) end.exit_code = 128 + SIGKILL;
      if (options_.on_finished) return options_.on_finished(end);
      return end.exit_code;
    }
  }

 private:
  // Everything known of an nsys that has ended, before another is started.
  void forget_nsys() {
    start_turn_.release();
    nsys_ = 0;
    nsys_code_.reset();
    program_groups_.clear();
    deadline_.reset();
    escalated_ = false;
    outlived_ = false;
    stop_delivered_ = false;
  }

  // A start that waited long is said, so that a rank starting late names the cause.
  void say_long_turn_wait(Clock::duration waited) const {
    if (waited < std::chrono::seconds(2)) return;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(waited).count());
    say(std::string(start_turn_.held() ? "waited " : "gave up waiting after ") + seconds +
        " s for another nsys of this user to start its program (nsys sessions started together "
        "fail; see docs/nsys-facts.md)" +
        (start_turn_.held() ? "" : "; starting nsys now"));
  }

  int supervise() {
    while (true) {
      pollfd fds[2] = {{self_read_, POLLIN, 0}, {control_fd_, POLLIN, 0}};
      const int count = control_fd_ >= 0 ? 2 : 1;
      poll(fds, count, poll_timeout_ms());
      drain_self_pipe();
      if (count == 2 && fds[1].revents != 0) read_control();
      if (!nsys_code_ && reap_nsys()) {
        // Its agents serve nothing now, and a program still running waits in its NVTX calls
        // for as long as they live.
        stop_nsys_agents(nsys_, nsys_started_);
      }
      if (start_turn_.held() &&
          (nsys_code_ || !program_groups_.empty() || Clock::now() >= start_turn_until_)) {
        start_turn_.release();  // the next keeper's nsys may start now
      }
      if (nsys_code_) {
        if (escalated_) kill_program_groups(SIGKILL);  // nothing of the program may stay
        if (escalated_ || !outlives_nsys()) return *nsys_code_;
        continue;  // nsys is gone: nothing more to find below it or to escalate
      }
      tick();
    }
  }

  // True when nsys has just ended; its exit status is kept.
  bool reap_nsys() {
    int status = 0;
    if (waitpid(nsys_, &status, WNOHANG) != nsys_) return false;
    nsys_code_ = WIFEXITED(status)     ? WEXITSTATUS(status)
                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                       : 1;
    return true;
  }

  // nsys has ended while the program it was told to stop lives on: a batch system that signals
  // every process of the job (scancel) stops nsys too, which then exits at once, and the program
  // may ignore the signal or hang in nsys's NVTX code. It gets until the stop deadline, as it
  // would with nsys alive, and is then killed with whatever is left of nsys's group, so that
  // nothing of the job outlives nsel (it would be outside the job's process tree by then).
  bool outlives_nsys() {
    if (stop_signal_ == 0) return false;
    // nsys's group (its launcher and tee) keeps nsys's process id in use while it lives. Zombies
    // do not count: orphans are init's, which may reap them seconds late.
    bool nsys_group_alive = false;
    bool alive = false;
    for (const ProcessStat& process : read_process_table()) {
      if (process.state == 'Z') continue;
      nsys_group_alive = nsys_group_alive || process.group == nsys_;
      alive = alive || process.group == nsys_ || program_groups_.contains(process.group);
    }
    if (!alive) return false;
    if (Clock::now() < *deadline_) return true;
    say(std::string("nsys has ended but the profiled program still runs ") +
        seconds_text(options_.stop_timeout) + " s (NSEL_STOP_TIMEOUT) after " +
        signal_name(stop_signal_) + "; killing it");
    kill_program_groups(SIGKILL);
    if (nsys_group_alive) kill(-nsys_, SIGKILL);
    outlived_ = true;
    nsys_code_ = 128 + SIGKILL;  // what nsys said no longer tells how the program ended
    return false;
  }

  int poll_timeout_ms() const {
    // Looking for the program (to stop it or to see it end) is a /proc scan; after that a cheap
    // liveness check is enough. Once nsys has ended, each look is a /proc scan (outlives_nsys).
    if (nsys_code_) return 250;
    if (start_turn_.held()) return 20;  // others wait for this program to start
    if (stop_signal_ != 0 && !stop_delivered_) return 20;
    if (program_groups_.empty()) return 200;
    return 250;
  }

  void drain_self_pipe() {
    unsigned char bytes[64];
    ssize_t n = 0;
    while ((n = read(self_read_, bytes, sizeof bytes)) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (bytes[i] != SIGCHLD) request_stop(bytes[i], true);
      }
    }
  }

  void read_control() {
    unsigned char bytes[64];
    const ssize_t n = read(control_fd_, bytes, sizeof bytes);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) request_stop(bytes[i], true);
      return;
    }
    if (n < 0 && errno == EINTR) return;
    // The launcher is gone (killed, perhaps by SIGKILL): the job is being ended.
    close(control_fd_);
    control_fd_ = -1;
    request_stop(SIGTERM, false);
  }

  // `received`: nsel got the signal; otherwise the launcher is gone and SIGTERM stands in.
  void request_stop(int signal_number, bool received) {
    if (stop_signal_ != 0) {
      // A repeated request is passed on again (a program may need two Ctrl-Cs).
      if (stop_delivered_) kill_program_groups(signal_number);
      return;
    }
    stop_signal_ = signal_number;
    const std::string why = received ? std::string("received ") + signal_name(signal_number)
                                     : std::string("the nsel launcher is gone");
    if (nsys_ == 0) {
      say(why +
          " while waiting for the turn to start nsys; neither nsys nor the program is "
          "started");
      return;
    }
    say(why + "; passing " + signal_name(signal_number) +
        " to the profiled program so that nsys writes its report (waiting at most " +
        seconds_text(options_.stop_timeout) + " s)");
    start_deadline();
  }

  void start_deadline() {
    if (!deadline_) deadline_ = Clock::now() + options_.stop_timeout;
  }

  void find_program() {
    for (int group : descendant_process_groups(nsys_, nsys_folder_)) program_groups_.insert(group);
    // A short program can start and end between two looks; nsys's launcher has then exited.
    if (program_groups_.empty() && !deadline_ && launcher_exited(nsys_)) start_deadline();
  }

  void kill_program_groups(int signal_number) {
    for (int group : program_groups_) kill(-group, signal_number);
  }

  void tick() {
    if (program_groups_.empty() || (stop_signal_ != 0 && !stop_delivered_)) find_program();
    if (stop_signal_ != 0 && !stop_delivered_ && !program_groups_.empty()) {
      kill_program_groups(stop_signal_);
      stop_delivered_ = true;
    }
    // Once the program has ended, nsys alone is left to write the report: bound that too (an
    // agent that hangs would otherwise keep nsys, and the job, waiting for good).
    if (!program_groups_.empty() && !deadline_) {
      bool any_alive = false;
      for (int group : program_groups_) any_alive = any_alive || group_alive(group);
      if (!any_alive) start_deadline();
    }
    if (deadline_ && Clock::now() >= *deadline_) escalate();
  }

  void escalate() {
    if (!escalated_) {
      escalated_ = true;
      say("nsys did not finish within " + seconds_text(options_.stop_timeout) +
          " s (NSEL_STOP_TIMEOUT); interrupting it");
      kill(nsys_, SIGINT);
      deadline_ = Clock::now() + kKillGrace;
      return;
    }
    say("nsys still runs; killing it and the program (the report is lost)");
    kill_program_groups(SIGKILL);
    kill(-nsys_, SIGKILL);
    deadline_ = Clock::now() + std::chrono::hours(24);  // waitpid now returns soon
  }

  SupervisionOptions options_;
  int control_fd_ = -1;
  int self_read_ = -1;
  pid_t nsys_ = 0;
  std::filesystem::file_time_type nsys_started_;  // what its agents made since is theirs
  std::string nsys_folder_;
  std::optional<int> nsys_code_;  // once nsys has ended
  int stop_signal_ = 0;
  bool stop_delivered_ = false;
  bool escalated_ = false;
  bool outlived_ = false;  // the program outlived nsys past the deadline and was killed
  std::set<int> program_groups_;
  std::optional<Clock::time_point> deadline_;
  FileLock start_turn_;  // held while this nsys starts (kStartTurnLimit at most)
  Clock::time_point start_turn_until_;
};

}  // namespace

std::filesystem::path nsys_start_turn_lock() {
  std::error_code ec;
  const char* folder = std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : "/tmp";
  return std::filesystem::path(folder) / ("nsel-nsys-start-" + std::to_string(geteuid()) + ".lock");
}

namespace {

// The live claim of another PID namespace among this user's (see NsysNamespaceClaim), as
// "PID namespace <inode> (nsel pid <pid> there)", or "". Claims whose launch has ended are
// removed on the way when `tidy`.
std::string live_claim_elsewhere(bool tidy) {
  const std::filesystem::path folder = nsys_start_turn_lock().parent_path();
  const std::string prefix = "nsel-nsys-pidns-" + std::to_string(geteuid()) + "-";
  const std::string own_namespace = std::to_string(own_pid_namespace().value_or(0));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".lock")) continue;
    // <prefix><namespace>-<pid>.lock
    const std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 5);
    const size_t dash = rest.find('-');
    if (dash == std::string::npos) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat info {};
    std::string found;
    // Only this user's claims count: nobody else's file can stop a launch.
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid()) {
      if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK && rest.substr(0, dash) != own_namespace) {
          found = "PID namespace " + rest.substr(0, dash) + " (nsel pid " + rest.substr(dash + 1) +
                  " there)";
        }
      } else if (tidy) {
        ::unlink(entry.path().c_str());  // its launch has ended
      }
    }
    close(fd);
    if (!found.empty()) return found;
  }
  return "";
}

}  // namespace

std::string nsys_pid_namespace_in_use_elsewhere() {
  return live_claim_elsewhere(false);
}

NsysNamespaceClaim claim_nsys_pid_namespace() {
  NsysNamespaceClaim claim;
  claim.conflict = live_claim_elsewhere(true);
  if (!claim.conflict.empty()) return claim;
  const std::filesystem::path folder = nsys_start_turn_lock().parent_path();
  claim.held = FileLock(folder / ("nsel-nsys-pidns-" + std::to_string(geteuid()) + "-" +
                                  std::to_string(own_pid_namespace().value_or(0)) + "-" +
                                  std::to_string(getpid()) + ".lock"),
                        std::chrono::milliseconds(0));
  return claim;
}

[[noreturn]] void keeper_main(const std::vector<std::string>& command,
                              const std::vector<std::string>& environment,
                              const SupervisionOptions& options, int control_fd, int status_fd) {
  // A session of its own: a signal to the launcher's group or session never reaches the keeper,
  // nsys or the program.
  setsid();
  prctl(PR_SET_NAME, "nsel-keeper", 0, 0, 0);
  int code = 1;
  try {
    Keeper keeper(options, control_fd);
    code = keeper.run(command, environment);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nsel: error: %s\n", e.what());
  }
  const unsigned char byte = static_cast<unsigned char>(code);
  ssize_t ignored = write(status_fd, &byte, 1);
  (void)ignored;
  _exit(code);
}

}  // namespace nsel
