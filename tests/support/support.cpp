#include "support.hpp"

#include "nsel/sys/proc.hpp"
#include "nsel/sys/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace nsel::test {
namespace fs = std::filesystem;

namespace {

fs::path export_of(const fs::path& report) {
  const fs::path out = report.parent_path() / (report.stem().string() + ".test.sqlite");
  if (!fs::exists(out)) {
    const RunResult r = run({"nsys", "export", "--type", "sqlite", "--force-overwrite", "true",
                             "-o", out.string(), report.string()},
                            {});
    if (r.exit_code != 0 || !fs::exists(out)) {
      throw std::runtime_error("nsys export failed for " + report.string() + ": " + r.err);
    }
  }
  return out;
}

template <typename Row>
void query(const fs::path& db_path, const std::string& sql, Row row) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    throw std::runtime_error("cannot open " + db_path.string());
  }
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK) {
    while (sqlite3_step(statement) == SQLITE_ROW) row(statement);
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const fs::path& working_directory) {
  return finish(start(argv, env, working_directory));
}

Started start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const fs::path& working_directory, bool own_process_group) {
  static std::atomic<int> counter = 0;
  const fs::path out_file = fs::temp_directory_path() / ("nsel-test-" + std::to_string(getpid()) +
                                                         "-" + std::to_string(++counter));
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("NRL_NSYS_", 0) == 0 || entry.rfind("NSEL_", 0) == 0) continue;
    const std::string name = entry.substr(0, entry.find('='));
    if (env.count(name)) continue;
    environment.push_back(entry);
  }
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);

  std::vector<std::string> arguments = argv;
  std::vector<char*> argument_pointers;
  for (auto& a : arguments) argument_pointers.push_back(a.data());
  argument_pointers.push_back(nullptr);
  std::vector<char*> environment_pointers;
  for (auto& e : environment) environment_pointers.push_back(e.data());
  environment_pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (out_file.string() + ".out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (out_file.string() + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, working_directory.c_str());
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (own_process_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  }
  Started started{0, out_file};
  const int rc = posix_spawnp(&started.pid, arguments.front().c_str(), &actions, &attributes,
                              argument_pointers.data(), environment_pointers.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv.front());
  return started;
}

RunResult finish(const Started& started) {
  const fs::path& out_file = started.output;
  RunResult result;
  result.pid = started.pid;
  result.exit_code = nsel::wait_exit_code(result.pid);
  result.out = slurp(out_file.string() + ".out");
  result.err = slurp(out_file.string() + ".err");
  fs::remove(out_file.string() + ".out");
  fs::remove(out_file.string() + ".err");
  return result;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& path, const std::string& bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

fs::path make_temp_dir(const std::string& label) {
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() /
      ("nsel-it-" + label + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<long long> exported_steps(const fs::path& report) {
  std::vector<std::pair<long long, long long>> found;  // (start, step)
  query(export_of(report),
        "SELECT COALESCE(e.text, s.value), e.start FROM NVTX_EVENTS e LEFT JOIN StringIds s "
        "ON e.textId = s.id",
        [&](sqlite3_stmt* row) {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(row, 0));
          if (text == nullptr) return;
          const std::string name(text);
          if (name.rfind("step ", 0) != 0) return;
          found.emplace_back(sqlite3_column_int64(row, 1), std::stoll(name.substr(5)));
        });
  std::sort(found.begin(), found.end());
  std::vector<long long> steps;
  for (const auto& [start, step] : found) steps.push_back(step);
  return steps;
}

long long exported_row_count(const fs::path& report, const std::string& table) {
  long long count = 0;
  query(export_of(report), "SELECT COUNT(*) FROM " + table,
        [&](sqlite3_stmt* row) { count = sqlite3_column_int64(row, 0); });
  return count;
}

std::map<std::string, std::string> read_description(const fs::path& file) {
  std::map<std::string, std::string> values;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> reports_in(const fs::path& dir) {
  std::vector<fs::path> reports;
  for (const fs::path& file : files_in(dir)) {
    if (file.extension() == ".nsys-rep") reports.push_back(file);
  }
  return reports;
}

}  // namespace nsel::test

namespace nsel::test {

int count_processes_with(const std::vector<std::string>& arguments) {
  int count = 0;
  for (const nsel::ProcessStat& process : nsel::read_process_table()) {
    const std::vector<std::string> parts = nsel::process_arguments(process.pid);
    const bool all = std::all_of(arguments.begin(), arguments.end(), [&](const std::string& want) {
      return std::any_of(parts.begin(), parts.end(), [&](const std::string& part) {
        if (!want.empty() && want.back() == '*')
          return part.rfind(want.substr(0, want.size() - 1), 0) == 0;
        return part == want;
      });
    });
    count += all ? 1 : 0;
  }
  return count;
}

}  // namespace nsel::test
