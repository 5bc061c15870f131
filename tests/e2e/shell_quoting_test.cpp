// No shell ever interprets a user value. Hostile worker names, patterns, option values, paths and
// program arguments go through `nsel exec` (argv only) and through the shell-joined command line a
// Ray worker is started with (`bash -c "exec ..."`); every value must arrive literally and no
// command hidden in one may run (it would create the file "pwned" in the working folder).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "nsel/core/command_line.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/terminal_text.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nsel::test::slurp;

namespace {

const std::string kNsel = NSEL_BINARY;

// Each tries to run `touch pwned` (relative: the run's working folder) if a shell read it.
const std::vector<std::string> kHostile = {
    "$(touch pwned)",
    "`touch pwned`",
    "; touch pwned",
    "| touch pwned",
    "& touch pwned",
    "&& touch pwned ||",
    "' ; touch pwned ; '",
    "\" ; touch pwned ; \"",
    "a'b\"c\\d",
    "two  spaces\tand tab",
    "line one\ntouch pwned",
    "naïve 名前 🙂",
    "$HOME ${PATH} $0 $$ $?",
    "* ? [a-z] ~ {a,b}",
    "> pwned",
    "< /etc/passwd",
    "#not a comment",
    "",
    "-e",
    "'",
    "\\",
    "!!",
};

// NUL-separated values, as `printf '%s\0' "$@"` writes them.
std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end = text.find('\0'); end != std::string::npos; end = text.find('\0', begin)) {
    parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

// The program a worker runs: writes its arguments and $NSEL_QUOTING_PROBE, then exits.
std::vector<std::string> recording_program(const fs::path& dir) {
  return {"/bin/sh", "-c",
          "printf '%s\\0' \"$@\" > args.bin; printf '%s' \"$NSEL_QUOTING_PROBE\" > probe.bin",
          (dir / "program").string()};
}

// A worker name, patterns and extra options as hostile as nsel accepts them. A worker name
// cannot hold '/' (it names a file), nor '"' or '&' (Nsight Systems 2022.4 cannot finish a report
// under such a name: nsel refuses it, see WorkerNamesNsysCannotNameAReportAfterAreRefused);
// patterns are split on ','; nsys reads ',' in --env-var.
// CPU context-switch tracing is off: with it, Debian's nsys 2022.4 hangs at the end of about
// half of the sessions of a short program (the agent hang docs/nsys-facts.md describes).
struct HostileSelection {
  std::string worker = "policy $(touch pwned) `touch pwned`; |<>'\n名前 🙂 *?[\\ ~";
  std::string patterns = "  *$(touch pwned)* , [!x]*;touch pwned ";
  std::string probe = "$(touch pwned) `touch pwned` ;|& ' \" 名 🙂";
  std::map<std::string, std::string> env(const fs::path&) const {
    nlohmann::json options = {
        {"t", "nvtx,osrt"}, {"e", "NSEL_QUOTING_PROBE=" + probe}, {"cpuctxsw", "none"}};
    return {{"NRL_NSYS_WORKER_PATTERNS", patterns},
            {"NRL_NSYS_PROFILE_STEP_RANGE", "1:2"},
            {"NRL_NSYS_EXTRA_OPTIONS", options.dump()},
            {"NSEL_CAPTURE", "none"}};
  }
};

// What a profiled worker left: its arguments, the probe variable nsys set, the report's name.
// `nsel exec` leaves the report's manifest beside it; nsys run by itself does not.
void expect_literal_run(const fs::path& dir, const fs::path& output_dir,
                        const HostileSelection& selection, bool with_manifest) {
  EXPECT_FALSE(fs::exists(dir / "pwned")) << "a shell interpreted a value";
  EXPECT_EQ(split_nul(slurp(dir / "args.bin")), kHostile);
  EXPECT_EQ(slurp(dir / "probe.bin"), selection.probe);
  const auto reports = nsel::test::reports_in(output_dir);
  ASSERT_EQ(reports.size(), 1u);
  std::vector<fs::path> expected = {reports[0]};
  if (with_manifest) expected.insert(expected.begin(), nsel::manifest_path_for(reports[0]));
  EXPECT_EQ(nsel::test::files_in(output_dir), expected);
  const std::string name = reports[0].filename().string();
  EXPECT_TRUE(name.starts_with(selection.worker + "_1:2_")) << name;
  EXPECT_TRUE(name.ends_with(".nsys-rep")) << name;
}

}  // namespace

TEST(ShellQuoting, BashReadsEveryJoinedArgumentBackLiterally) {
  const fs::path dir = nsel::test::make_temp_dir("quote");
  std::vector<std::string> argv = recording_program(dir);
  argv.insert(argv.end(), kHostile.begin(), kHostile.end());
  // As Ray does: bash -c "exec <command line>".
  const auto r = nsel::test::run({"/bin/bash", "-c", "exec " + nsel::shell_join(argv)}, {}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(split_nul(slurp(dir / "args.bin")), kHostile);
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  for (const std::string& value : kHostile) {
    const auto echo = nsel::test::run(
        {"/bin/bash", "-c", "printf '%s' " + nsel::shell_quote(value) + " > one.bin"}, {}, dir);
    EXPECT_EQ(slurp(dir / "one.bin"), value);
  }
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  fs::remove_all(dir);
}

TEST(ShellQuoting, HostileValuesStayLiteralThroughNselExec) {
  const fs::path dir = nsel::test::make_temp_dir("quote-exec");
  const HostileSelection selection;
  const fs::path output_dir = dir / "out $(touch pwned) `touch pwned` 'q' \"d\" ;|&<> é\\";
  std::vector<std::string> argv = {
      kNsel, "exec", "--worker", selection.worker, "--output-dir", output_dir.string(), "--"};
  for (const std::string& part : recording_program(dir)) argv.push_back(part);
  argv.insert(argv.end(), kHostile.begin(), kHostile.end());
  const auto r = nsel::test::run(argv, selection.env(dir), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The log line quotes nothing away: the worker and pattern appear whole, only the worker's
  // newline shown as "\n" (a raw one would forge a line of the log).
  EXPECT_NE(
      r.err.find("Nsight profiling enabled for worker '" + nsel::terminal_text(selection.worker) +
                 "' (matched pattern '*$(touch pwned)*')"),
      std::string::npos)
      << r.err;
  expect_literal_run(dir, output_dir, selection, true);
  fs::remove_all(dir);
}

TEST(ShellQuoting, HostileValuesStayLiteralThroughTheShellJoinedCommand) {
  const fs::path dir = nsel::test::make_temp_dir("quote-ray");
  const HostileSelection selection;
  const fs::path output_dir = dir / "ray $(touch pwned) `x` 'q' \"d\" ; |& 名\n";
  std::vector<std::string> argv = {
      kNsel, "plan", "--json", "--output-dir", output_dir.string(), selection.worker, "--"};
  for (const std::string& part : recording_program(dir)) argv.push_back(part);
  argv.insert(argv.end(), kHostile.begin(), kHostile.end());
  const auto plan = nsel::test::run(argv, selection.env(dir), dir);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto json = nlohmann::json::parse(plan.out);
  ASSERT_TRUE(json["profile"].get<bool>());
  // What Ray's launcher would run: env VAR=... nsys profile ... PROGRAM ARGS, through bash.
  std::vector<std::string> command = {"/usr/bin/env"};
  for (const auto& [name, value] : json["environment"].items()) {
    command.push_back(name + "=" + value.get<std::string>());
  }
  for (const auto& part : json["command"]) command.push_back(part.get<std::string>());
  fs::create_directories(output_dir);
  const auto r = nsel::test::run({"/bin/bash", "-c", "exec " + nsel::shell_join(command)},
                                 {{"NSEL_CAPTURE", "none"}}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_literal_run(dir, output_dir, selection, false);
  fs::remove_all(dir);
}

TEST(ShellQuoting, WorkerNamesNsysCannotNameAReportAfterAreRefused) {
  for (const std::string worker : {"policy \"$(touch pwned)\"", "policy & touch pwned"}) {
    const fs::path dir = nsel::test::make_temp_dir("quote-refused");
    const HostileSelection selection;
    std::vector<std::string> argv = {
        kNsel, "exec", "--worker", worker, "--output-dir", (dir / "out").string(), "--"};
    for (const std::string& part : recording_program(dir)) argv.push_back(part);
    auto env = selection.env(dir);
    env["NRL_NSYS_WORKER_PATTERNS"] = "*";  // selected: the refusal is about its report's name
    const auto r = nsel::test::run(argv, env, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("worker name=" + nsel::quote(worker) +
                         ": the report name would hold '\"' or '&'"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "pwned"));
    EXPECT_FALSE(fs::exists(dir / "args.bin")) << "the worker must not start";
    EXPECT_FALSE(fs::exists(dir / "out")) << "nothing may be written";
    fs::remove_all(dir);
  }
}
