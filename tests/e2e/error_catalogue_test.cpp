// The error catalogue: every variable and flag nsel reads, in its invalid forms. Each gives exit
// code 2, exactly one line naming the source and quoting the value, nothing on stdout, and
// nothing written (no report folder, no session, the program never started).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>

#include "support.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

struct Case {
  std::string name;                        // the test's name
  std::vector<std::string> args;           // after "nsel"; "{dir}" is the run's folder
  std::map<std::string, std::string> env;  // on top of a clean environment
  std::string message;                     // after "nsel: error: "
  std::string existing_file;               // made in {dir} before the run, when not empty
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

std::string expand(std::string text, const fs::path& dir) {
  for (size_t at = text.find("{dir}"); at != std::string::npos; at = text.find("{dir}")) {
    text.replace(at, 5, dir.string());
  }
  return text;
}

class ErrorCatalogue : public ::testing::TestWithParam<Case> {};

TEST_P(ErrorCatalogue, ExitTwoOneExactLineNothingWritten) {
  const Case& c = GetParam();
  const fs::path dir = nsel::test::make_temp_dir("catalogue");
  if (!c.existing_file.empty()) std::ofstream(dir / c.existing_file) << "x";
  const auto before = nsel::test::files_in(dir);
  std::vector<std::string> argv = {kNsel};
  for (const std::string& arg : c.args) argv.push_back(expand(arg, dir));
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : c.env) env[name] = expand(value, dir);
  const auto r = nsel::test::run(argv, env, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "nsel: error: " + expand(c.message, dir) + "\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(nsel::test::files_in(dir), before) << "nothing may be written on bad input";
  fs::remove_all(dir);
}

const std::map<std::string, std::string> kSelected = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                                                      {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}};

std::map<std::string, std::string> selected_with(const std::string& name,
                                                 const std::string& value) {
  auto env = kSelected;
  env[name] = value;
  return env;
}

// A command that would start the worker (and write {dir}/ran and {dir}/out) were it not for the
// error.
const std::vector<std::string> kExec = {"exec",         "--worker",  "dtensor_policy_worker",
                                        "--output-dir", "{dir}/out", "--",
                                        kWorker,        "--steps",   "1",
                                        "--describe",   "{dir}/ran"};
const std::vector<std::string> kPlan = {"plan", "dtensor_policy_worker"};

const std::string kRangeForm =
    "; expected 'start:stop' with whole numbers 1 <= start < stop, for example '2:4' (steps 2 "
    "and 3)";
const std::string kOptionsForm =
    "; expected a JSON object of nsys options, for example '{\"t\": \"cuda,nvtx,osrt\", "
    "\"cuda-memory-usage\": true}'";
const std::string kSecondsForm =
    "; expected a number of seconds greater than 0 and at most 86400, for example '60' or '2.5'";

// Variables read by plan, exec and demo alike: each invalid form against each command.
std::vector<Case> selection_variable_cases() {
  struct Bad {
    std::string label;
    std::map<std::string, std::string> env;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {"RangeStartZero", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "0:10"),
       "NRL_NSYS_PROFILE_STEP_RANGE='0:10': start must be >= 1 (steps are 1-based)" + kRangeForm},
      {"RangeReversed", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "5:3"),
       "NRL_NSYS_PROFILE_STEP_RANGE='5:3': empty range (stop must be greater than start; stop is "
       "exclusive)" +
           kRangeForm},
      {"RangeNoColon", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "5"),
       "NRL_NSYS_PROFILE_STEP_RANGE='5': missing ':' between start and stop" + kRangeForm},
      {"RangeLetters", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "a:b"),
       "NRL_NSYS_PROFILE_STEP_RANGE='a:b': start 'a' is not a whole number" + kRangeForm},
      {"RangeNegative", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "-1:3"),
       "NRL_NSYS_PROFILE_STEP_RANGE='-1:3': start must be >= 1 (steps are 1-based)" + kRangeForm},
      {"RangeNewline", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "2:4\nrm -rf /"),
       "NRL_NSYS_PROFILE_STEP_RANGE='2:4\\nrm -rf /': stop '4\\nrm -rf /' is not a whole number" +
           kRangeForm},
      {"RangeOverflow", selected_with("NRL_NSYS_PROFILE_STEP_RANGE", "99999999999999999999:2"),
       "NRL_NSYS_PROFILE_STEP_RANGE='99999999999999999999:2': start '99999999999999999999' is "
       "too large" +
           kRangeForm},
      {"PatternsWithoutRange",
       {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}},
       "NRL_NSYS_WORKER_PATTERNS='*policy*' is set but NRL_NSYS_PROFILE_STEP_RANGE is not; set "
       "both (for example NRL_NSYS_PROFILE_STEP_RANGE='2:4') or neither"},
      {"RangeWithoutPatterns",
       {{"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}},
       "NRL_NSYS_PROFILE_STEP_RANGE='2:4' is set but NRL_NSYS_WORKER_PATTERNS is not; set both "
       "(for example NRL_NSYS_WORKER_PATTERNS='*policy*') or neither"},
      {"PatternsBlank", selected_with("NRL_NSYS_WORKER_PATTERNS", " , ,"),
       "NRL_NSYS_WORKER_PATTERNS=' , ,': no pattern in it (blank pieces are dropped); expected "
       "comma-separated patterns such as '*policy*,*vllm*'"},
      {"OptionsNotJson", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{t: cuda}"),
       "NRL_NSYS_EXTRA_OPTIONS='{t: cuda}': not valid JSON (at byte 3)" + kOptionsForm},
      {"OptionsArray", selected_with("NRL_NSYS_EXTRA_OPTIONS", "[1]"),
       "NRL_NSYS_EXTRA_OPTIONS='[1]': a JSON array is not an object" + kOptionsForm},
      {"OptionsString", selected_with("NRL_NSYS_EXTRA_OPTIONS", "\"t\""),
       "NRL_NSYS_EXTRA_OPTIONS='\"t\"': a JSON string is not an object" + kOptionsForm},
      {"OptionsDashedKey", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"--trace\": \"cuda\"}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"--trace\": \"cuda\"}': key '--trace' is not an nsys option "
       "name (letters, digits, '-' and '_', without leading dashes)" +
           kOptionsForm},
      {"OptionsShellKey", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"t;touch x\": \"1\"}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"t;touch x\": \"1\"}': key 't;touch x' is not an nsys option "
       "name (letters, digits, '-' and '_', without leading dashes)" +
           kOptionsForm},
      {"OptionsEmptyKey", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"\": \"1\"}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"\": \"1\"}': key '' is not an nsys option name (letters, "
       "digits, '-' and '_', without leading dashes)" +
           kOptionsForm},
      {"OptionsNestedValue", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"t\": [\"cuda\"]}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"t\": [\"cuda\"]}': value of 't' is a JSON array; option "
       "values must be strings, numbers, booleans or null (null removes a default)" +
           kOptionsForm},
      // Inside the object 1e999 is Python's inf, as json.loads reads it; alone it is no object.
      {"OptionsNumberOverflow", selected_with("NRL_NSYS_EXTRA_OPTIONS", "1e999"),
       "NRL_NSYS_EXTRA_OPTIONS='1e999': not valid JSON (a number out of range)" + kOptionsForm},
      // json.loads takes NaN, not nan.
      {"OptionsLowerCaseNan", selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"d\": nan}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"d\": nan}': not valid JSON (at byte 8)" + kOptionsForm},
      {"OptionsAliasTwice",
       selected_with("NRL_NSYS_EXTRA_OPTIONS", "{\"trace\": \"cuda\", \"t\": null}"),
       "NRL_NSYS_EXTRA_OPTIONS='{\"trace\": \"cuda\", \"t\": null}': keys 't' and 'trace' name "
       "the same nsys option" +
           kOptionsForm},
      {"CaptureUnknown", selected_with("NSEL_CAPTURE", "gpu"),
       "NSEL_CAPTURE='gpu': unknown capture mode; expected one of 'auto' (CUDA profiler API with "
       "a GPU, NVTX range without), 'cuda', 'nvtx', 'none'"},
      {"CaptureUpperCase", selected_with("NSEL_CAPTURE", "NVTX"),
       "NSEL_CAPTURE='NVTX': unknown capture mode; expected one of 'auto' (CUDA profiler API with "
       "a GPU, NVTX range without), 'cuda', 'nvtx', 'none'"},
  };
  std::vector<Case> cases;
  for (const Bad& b : bad) {
    cases.push_back({"Plan" + b.label, kPlan, b.env, b.message, ""});
    cases.push_back({"Exec" + b.label, kExec, b.env, b.message, ""});
    cases.push_back(
        {"Demo" + b.label, {"demo", "--steps", "1", "--root", "{dir}/demo"}, b.env, b.message, ""});
  }
  return cases;
}

// Variables only `nsel exec` reads, and every flag.
std::vector<Case> exec_and_flag_cases() {
  const auto exec_with = [](std::vector<std::string> flags) {
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  };
  return {
      {"StopTimeoutLetters", kExec, selected_with("NSEL_STOP_TIMEOUT", "soon"),
       "NSEL_STOP_TIMEOUT='soon': not a number of seconds" + kSecondsForm, ""},
      {"StopTimeoutZero", kExec, selected_with("NSEL_STOP_TIMEOUT", "0"),
       "NSEL_STOP_TIMEOUT='0': must be greater than 0" + kSecondsForm, ""},
      {"StopTimeoutNegative", kExec, selected_with("NSEL_STOP_TIMEOUT", "-5"),
       "NSEL_STOP_TIMEOUT='-5': not a number of seconds" + kSecondsForm, ""},
      {"StopTimeoutExponent", kExec, selected_with("NSEL_STOP_TIMEOUT", "1e3"),
       "NSEL_STOP_TIMEOUT='1e3': not a number of seconds" + kSecondsForm, ""},
      {"StopTimeoutUnit", kExec, selected_with("NSEL_STOP_TIMEOUT", "30s"),
       "NSEL_STOP_TIMEOUT='30s': not a number of seconds" + kSecondsForm, ""},
      {"StopTimeoutTooPrecise", kExec, selected_with("NSEL_STOP_TIMEOUT", "0.0001"),
       "NSEL_STOP_TIMEOUT='0.0001': more precise than a millisecond" + kSecondsForm, ""},
      {"StopTimeoutTooLong", kExec, selected_with("NSEL_STOP_TIMEOUT", "86401"),
       "NSEL_STOP_TIMEOUT='86401': too long" + kSecondsForm, ""},
      {"AllowUnprofiledWord", kExec, selected_with("NSEL_ALLOW_UNPROFILED", "maybe"),
       "NSEL_ALLOW_UNPROFILED='maybe': not a yes/no value; expected '1' (yes) or '0' (no)", ""},
      {"AllowUnprofiledTwo", kExec, selected_with("NSEL_ALLOW_UNPROFILED", "2"),
       "NSEL_ALLOW_UNPROFILED='2': not a yes/no value; expected '1' (yes) or '0' (no)", ""},
      // Flags of exec.
      {"ExecWorkerMissing", exec_with({"--", kWorker}), kSelected,
       "--worker is required; see 'nsel exec --help'", ""},
      {"ExecWorkerWithoutValue", exec_with({"--worker"}), kSelected,
       "--worker='': no value given; expected --worker NAME; see 'nsel exec --help'", ""},
      {"ExecWorkerTwice", exec_with({"--worker", "a", "--worker", "b", "--", kWorker}), kSelected,
       "--worker given 2 times; expected it once; see 'nsel exec --help'", ""},
      {"ExecWorkerEmpty", exec_with({"--worker", "", "--", kWorker, "--describe", "{dir}/ran"}),
       kSelected, "--worker='': empty; expected a worker name such as 'dtensor_policy_worker'", ""},
      {"ExecWorkerSlash",
       exec_with({"--worker", "../policy", "--", kWorker, "--describe", "{dir}/ran"}), kSelected,
       "--worker='../policy': holds '/', which a report file name cannot hold; expected a worker "
       "name such as 'dtensor_policy_worker'",
       ""},
      {"ExecCaptureUnknown",
       exec_with({"--worker", "dtensor_policy_worker", "--capture", "gpu", "--", kWorker}),
       kSelected,
       "--capture='gpu': unknown capture mode; expected one of 'auto' (CUDA profiler API with a "
       "GPU, NVTX range without), 'cuda', 'nvtx', 'none'",
       ""},
      {"ExecOutputDirIsAFile",
       exec_with({"--worker", "dtensor_policy_worker", "--output-dir", "{dir}/file", "--", kWorker,
                  "--describe", "{dir}/ran"}),
       kSelected,
       "--output-dir='{dir}/file': it exists and is not a folder; expected a folder for the "
       "reports",
       "file"},
      {"ExecProgramMissing", exec_with({"--worker", "dtensor_policy_worker"}), kSelected,
       "missing PROGRAM; expected 'nsel exec --worker NAME -- PROGRAM [ARGS...]'", ""},
      {"ExecProgramNotOnPath",
       exec_with({"--worker", "dtensor_policy_worker", "--", "no-such-program-$(touch x)"}),
       kSelected,
       "PROGRAM='no-such-program-$(touch x)': not found on PATH; expected a program on PATH or a "
       "path to one",
       ""},
      {"ExecProgramNotExecutable",
       exec_with({"--worker", "dtensor_policy_worker", "--", "{dir}/file"}), kSelected,
       "PROGRAM='{dir}/file': not an executable file; expected a path to a program", "file"},
      {"ExecUnknownFlag", exec_with({"--worker", "w", "--bogus", "--", kWorker}), kSelected,
       "The following argument was not expected: --bogus; see 'nsel exec --help'", ""},
      // Flags of plan.
      {"PlanNoWorker", {"plan"}, kSelected, "worker is required; see 'nsel plan --help'", ""},
      {"PlanWorkerEmpty",
       {"plan", ""},
       kSelected,
       "WORKER='': empty; expected a worker name such as 'dtensor_policy_worker'",
       ""},
      {"PlanWorkerSlash",
       {"plan", "a/b"},
       kSelected,
       "WORKER='a/b': holds '/', which a report file name cannot hold; expected a worker name "
       "such as 'dtensor_policy_worker'",
       ""},
      {"PlanWorkerNotUtf8",
       {"plan", "w\xff\xfe"},
       kSelected,
       "WORKER='w\xff\xfe': not valid UTF-8 (names are text, as in Python); expected a worker "
       "name such as 'dtensor_policy_worker'",
       ""},
      {"PlanCaptureUnknown",
       {"plan", "--capture", "cupti", "w"},
       kSelected,
       "--capture='cupti': unknown capture mode; expected one of 'auto' (CUDA profiler API with a "
       "GPU, NVTX range without), 'cuda', 'nvtx', 'none'",
       ""},
      {"PlanCaptureWithoutValue",
       {"plan", "w", "--capture"},
       kSelected,
       "--capture='': no value given; expected --capture MODE; see 'nsel plan --help'",
       ""},
      {"PlanJsonWithValue",
       {"plan", "--json=maybe", "w"},
       kSelected,
       "--json='maybe': not a switch value; expected --json alone, or --json=true / --json=false; "
       "see 'nsel plan --help'",
       ""},
      {"PlanOutputDirWithoutValue",
       {"plan", "w", "--output-dir"},
       kSelected,
       "--output-dir='': no value given; expected --output-dir DIR; see 'nsel plan --help'",
       ""},
      // Flags of demo.
      {"DemoStepsZero",
       {"demo", "--steps", "0", "--root", "{dir}/demo"},
       {},
       "--steps='0': out of range; expected a whole number from 1 to 1000000",
       ""},
      {"DemoStepsWord",
       {"demo", "--steps", "five", "--root", "{dir}/demo"},
       {},
       "--steps='five': not a whole number; expected a whole number from 1 to 1000000",
       ""},
      {"DemoStepsHuge",
       {"demo", "--steps", "99999999999999999999", "--root", "{dir}/demo"},
       {},
       "--steps='99999999999999999999': out of range; expected a whole number from 1 to 1000000",
       ""},
      {"DemoWorkNegative",
       {"demo", "--work-ms", "-1", "--root", "{dir}/demo"},
       {},
       "--work-ms='-1': out of range; expected a whole number from 0 to 600000",
       ""},
      {"DemoWorkFraction",
       {"demo", "--work-ms", "1.5", "--root", "{dir}/demo"},
       {},
       "--work-ms='1.5': not a whole number; expected a whole number from 0 to 600000",
       ""},
      {"DemoRootIsAFile",
       {"demo", "--root", "{dir}/file"},
       {},
       "--root='{dir}/file': not a folder; expected a folder for the sessions (created if "
       "missing)",
       "file"},
      // A folder name no file system takes (before: "filesystem error: status: File name too
      // long", exit 1), and a TMPDIR that is no folder for the default root (before:
      // "filesystem error: temp_directory_path", exit 1).
      {"DemoRootNameTooLong",
       {"demo", "--root", "{dir}/" + std::string(256, 'a')},
       {},
       "--root='{dir}/" + std::string(256, 'a') +
           "': a folder name of 256 bytes, more than the 255 a file system allows; expected a "
           "folder for the sessions (created if missing)",
       ""},
      {"DemoTmpdirIsNoFolder",
       {"demo", "--steps", "1"},
       {{"TMPDIR", "{dir}/no-such-folder"}},
       "TMPDIR='{dir}/no-such-folder': No such file or directory; expected a folder for temporary "
       "files, or TMPDIR unset (then /tmp)",
       ""},
      {"DemoWithProgram",
       {"demo", "--root", "{dir}/demo", "--", "/bin/true"},
       {},
       "nsel demo takes no PROGRAM; see 'nsel demo --help'",
       ""},
      // Flags of doctor.
      {"DoctorWithProgram",
       {"doctor", "--", "/bin/true"},
       {},
       "nsel doctor takes no PROGRAM; see 'nsel doctor --help'",
       ""},
      {"DoctorOutputDirWithoutValue",
       {"doctor", "--output-dir"},
       {},
       "--output-dir='': no value given; expected --output-dir DIR; see 'nsel doctor --help'",
       ""},
      {"DoctorJsonWithValue",
       {"doctor", "--json=perhaps"},
       {},
       "--json='perhaps': not a switch value; expected --json alone, or --json=true / "
       "--json=false; "
       "see 'nsel doctor --help'",
       ""},
      // The command itself.
      {"UnknownCommand",
       {"profile", "w"},
       {},
       "unknown command 'profile'; expected a command that 'nsel --help' lists; see 'nsel --help'",
       ""},
      {"NoCommand", {}, {}, "A subcommand is required; see 'nsel --help'", ""},
      {"UnknownRayCommand",
       {"ray", "bogus"},
       {},
       "unknown ray command 'bogus'; expected one that 'nsel ray --help' lists; see 'nsel ray "
       "--help'",
       ""},
  };
}

// Every value-taking flag of every command given an empty value: a bad value, never read as
// "not given" (an empty --html once meant no page and exit 0).
std::vector<Case> empty_value_cases() {
  struct Flag {
    std::vector<std::string> command;  // the command's words
    std::string flag;
    std::string form;  // what the help calls its value
  };
  const std::vector<Flag> flags = {
      {{"plan", "w"}, "--capture", "MODE"},
      {{"plan", "w"}, "--output-dir", "DIR"},
      {{"plan", "w"}, "--rank", "N"},
      {{"plan", "w"}, "--local-rank", "N"},
      {{"plan", "w"}, "--ranks", "LIST"},
      {{"exec"}, "--output-dir", "DIR"},
      {{"exec"}, "--capture", "MODE"},
      {{"exec"}, "--rank", "N"},
      {{"exec"}, "--local-rank", "N"},
      {{"demo"}, "--steps", "N"},
      {{"demo"}, "--work-ms", "MS"},
      {{"demo"}, "--root", "DIR"},
      {{"demo"}, "--slow-percent", "P"},
      {{"demo"}, "--ranks", "N"},
      {{"report"}, "--csv", "DIR"},
      {{"report"}, "--html", "FILE"},
      {{"report"}, "--step-name", "PATTERN"},
      {{"report"}, "--straggler-percent", "P"},
      {{"report"}, "--top", "N"},
      {{"report"}, "--jobs", "N"},
      {{"report"}, "--cache-dir", "DIR"},
      {{"diff", "a", "b"}, "--csv", "DIR"},
      {{"diff", "a", "b"}, "--html", "FILE"},
      {{"diff", "a", "b"}, "--gate", "PERCENT"},
      {{"diff", "a", "b"}, "--alpha", "P"},
      {{"diff", "a", "b"}, "--min-change", "PERCENT"},
      {{"diff", "a", "b"}, "--min-steps", "N"},
      {{"diff", "a", "b"}, "--pair-by", "KEYS"},
      {{"diff", "a", "b"}, "--step-name", "PATTERN"},
      {{"diff", "a", "b"}, "--jobs", "N"},
      {{"diff", "a", "b"}, "--cache-dir", "DIR"},
      {{"diff"}, "--baseline", "PATH"},
      {{"diff"}, "--candidate", "PATH"},
      {{"check"}, "--expect", "N"},
      {{"recover"}, "--importer", "PROGRAM"},
      {{"sync"}, "--src", "DIR"},
      {{"sync"}, "--dest", "LOG_DIR"},
      {{"sync"}, "--every", "SECONDS"},
      {{"sync"}, "--full-every", "SECONDS"},
      {{"sync"}, "--max-watches", "N"},
      {{"sync"}, "--node", "NAME"},
      {{"doctor"}, "--output-dir", "DIR"},
      {{"doctor"}, "--python", "PROGRAM"},
      {{"ray", "patch"}, "--site-packages", "DIR"},
      {{"ray", "patch"}, "--python", "PROGRAM"},
  };
  std::vector<Case> cases;
  for (const Flag& f : flags) {
    std::vector<std::string> args = f.command;
    args.push_back(f.flag);
    args.push_back("");
    std::string name = "Empty";
    for (const std::string& word : f.command) {
      if (word.size() > 1)
        name += std::string(1, static_cast<char>(std::toupper(word[0]))) + word.substr(1);
    }
    for (char c : f.flag) {
      if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    }
    const std::string& help = f.command.front();
    cases.push_back(
        {name,
         args,
         {},
         f.flag + "='': empty; expected a non-empty " + f.form + "; see 'nsel " + help + " --help'",
         ""});
  }
  // Positionals too: an empty path is no path.
  cases.push_back({"EmptyReportPath",
                   {"report", ""},
                   {},
                   "PATH='': empty; expected a non-empty value; see 'nsel report --help'",
                   ""});
  cases.push_back({"EmptyLsRoot",
                   {"ls", ""},
                   {},
                   "ROOT='': empty; expected a non-empty value; see 'nsel ls --help'",
                   ""});
  return cases;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(EmptyValues, ErrorCatalogue, ::testing::ValuesIn(empty_value_cases()),
                         [](const auto& test_case) { return test_case.param.name; });
INSTANTIATE_TEST_SUITE_P(Variables, ErrorCatalogue, ::testing::ValuesIn(selection_variable_cases()),
                         [](const auto& test_case) { return test_case.param.name; });
INSTANTIATE_TEST_SUITE_P(Flags, ErrorCatalogue, ::testing::ValuesIn(exec_and_flag_cases()),
                         [](const auto& test_case) { return test_case.param.name; });
