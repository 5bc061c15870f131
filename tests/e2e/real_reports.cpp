#include "real_reports.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "nsel/sys/process.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nsel::test::run;
using nsel::test::slurp;
using nsel::test::spit;

namespace nsel::e2e {

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

// nsys finds its importer beside itself; a copy of its folder without one leaves the .qdstrm,
// exactly as Debian's package does before the importer link is made.
fs::path nsys_without_importer(const fs::path& dir) {
  const char* path = std::getenv("PATH");
  const fs::path real = fs::canonical(nsel::resolve_program("nsys", path ? path : "", "nsys"));
  const fs::path target = dir / "nsys-no-importer" / "target-linux-x64";
  fs::create_directories(target);
  for (const auto& entry : fs::directory_iterator(real.parent_path())) {
    if (entry.path().filename() == "nsys") continue;
    fs::create_symlink(entry.path(), target / entry.path().filename());
  }
  std::error_code ec;
  fs::create_hard_link(real, target / "nsys", ec);
  if (ec) fs::copy_file(real, target / "nsys");
  return target / "nsys";
}

// Made by real nsys once for this build of nsel and kept in the build folder, so that the
// test processes CTest starts (one per test) share them; a lock keeps parallel runs apart.
RealFiles make_real_files(const fs::path& dir) {
  RealFiles f;
  f.dir = dir;
  const std::map<std::string, std::string> env = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                                                  {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
                                                  {"RANK", "1"},
                                                  {"SLURM_PROCID", "1"},
                                                  {"SLURM_JOB_ID", "4242"}};
  const std::string stamp =
      std::to_string(fs::last_write_time(kNsel).time_since_epoch().count()) + "\n";
  if (slurp(dir / "made-for") != stamp) {
    for (const char* part : {"exec", "never", "left", "nsys-no-importer"})
      fs::remove_all(dir / part);
    const auto exec =
        run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
             (dir / "exec").string(), "--", kWorker, "--steps", "4", "--work-ms", "30"},
            env);
    f.exec_err = exec.err;
    auto never = env;
    never["NRL_NSYS_PROFILE_STEP_RANGE"] = "50:60";
    run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
         (dir / "never").string(), "--", kWorker, "--steps", "2", "--work-ms", "10"},
        never);
    const fs::path nsys = nsys_without_importer(dir);
    fs::create_directories(dir / "left");
    run({nsys.string(), "profile", "-t", "nvtx,osrt", "-s", "none", "--cpuctxsw=none", "-o",
         (dir / "left" / "leftover").string(), kWorker, "--steps", "3", "--work-ms", "20"},
        {});
    spit(dir / "made-for", stamp);
  }
  for (const auto& entry : fs::directory_iterator(dir / "exec")) {
    if (entry.path().extension() == ".nsys-rep") f.report = entry.path();
    if (entry.path().string().ends_with(".nsel.json")) f.manifest = entry.path();
  }
  for (const auto& entry : fs::directory_iterator(dir / "never")) {
    if (entry.path().string().ends_with(".nsel.json")) f.missing_manifest = entry.path();
  }
  f.qdstrm = dir / "left" / "leftover.qdstrm";
  return f;
}

}  // namespace

void place(const fs::path& from, const fs::path& to, std::chrono::seconds age) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::last_write_time(to, fs::file_time_type::clock::now() - age);
}

const RealFiles& real_files() {
  static const RealFiles files = [] {
    const fs::path dir = NSEL_TEST_CACHE_DIR;
    fs::create_directories(dir);
    const int lock = ::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    flock(lock, LOCK_EX);
    RealFiles f = make_real_files(dir);
    flock(lock, LOCK_UN);
    ::close(lock);
    return f;
  }();
  return files;
}

pid_t start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  const pid_t child = fork();
  if (child == 0) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> pointers;
    for (const std::string& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
    pointers.push_back(nullptr);
    execv(pointers[0], pointers.data());
    _exit(127);
  }
  return child;
}

int wait_for(pid_t child, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

}  // namespace nsel::e2e
