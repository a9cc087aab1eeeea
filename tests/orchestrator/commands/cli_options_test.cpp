// The words of optimize's and check's option errors: a number out of range says what was
// expected and what was given, on the command line and in a --config file alike, and an unknown
// config key is answered with the closest known one; replay's help gives the codes it exits with.
#include "orchestrator/commands/cli_options.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "common/cli_value_checks.hpp"
#include "common/json_document.hpp"
#include "test_support.hpp"

using namespace cuopt;

namespace {

// The message optimize's parser gives for `args` (after "optimize"), "" when it takes them.
std::string parse_error(std::vector<std::string> args) {
    CLI::App app;
    optimizer_options o;
    define_run_options(&app, o);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        return e.what();
    }
    return "";
}

// The message apply_config_text gives for `text`, "" when it takes it.
std::string config_error(const std::string& text) {
    CLI::App app;
    optimizer_options o;
    define_run_options(&app, o);
    try {
        apply_config_text(&app, o, text, "/tmp/config.json");
    } catch (const json_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a positive number out of range is said in a few words, with its unit, not 300 digits") {
    const std::string said = parse_error({"--timeout", "0"});
    CHECK(said == "--timeout: expected a number above 0 and at most 86400 s (24 h), got 0");
    CHECK(parse_error({"--request-timeout", "-1"}) ==
          "--request-timeout: expected a number above 0 and at most 86400 s (24 h), got -1");
    CHECK(parse_error({"--min-gain", "2"}) == "--min-gain: expected a number from 0 to 1, got 2");
    // A temperature nan or inf would cut the JSON body at it; a negative one was "not set".
    for (const std::string t : {"nan", "inf", "-0.5", "2.5"})
        CHECK(parse_error({"--temperature", t}) ==
              "--temperature: expected a number from 0 to 2, got " + t);
    CHECK(parse_error({"--target-rse", "0"}) ==
          "--target-rse: expected a number above 0 and at most 1, got 0");
    CHECK(parse_error({"--device", "-1"}) ==
          "--device: expected a whole number from 0 to 1023, got -1");
    CHECK(parse_error({"--timeout", "0.5", "--min-gain", "0.5", "--device", "1"}).empty());
}

TEST_CASE("every duration and count is range-checked before it is converted, flag or config") {
    // 1e300 s overflowed the conversion to milliseconds (UBSan), and 1e10 s wrapped into a
    // timeout of ~40 ms that blamed the toolkit; both are refused with the range now.
    for (const char* huge : {"1e300", "1e10", "86400.5", "1e999", "inf", "nan"})
        CHECK(parse_error({"--timeout", huge}) ==
              std::string("--timeout: expected a number above 0 and at most 86400 s (24 h), got ") +
                  huge);
    CHECK(parse_error({"--timeout", "86400"}).empty());
    CHECK(parse_error({"--sanitizer-timeout", "1e300"}) ==
          "--sanitizer-timeout: expected a number above 0 and at most 86400 s (24 h), got 1e300");
    CHECK(parse_error({"--device", "99999999999999999999"}) ==
          "--device: expected a whole number from 0 to 1023, got 99999999999999999999");
    for (const char* seed : {"-1", "18446744073709551616", "1000000000000000"})
        CHECK(parse_error({"--seed", seed}) ==
              std::string("--seed: expected a whole number from 0 to 999999999999999, got ") +
                  seed);
    CHECK(parse_error({"--seed", "999999999999999"}).empty());
    CHECK(parse_error({"--max-output-tokens-retry", "1e30"}) ==
          "--max-output-tokens-retry: expected a whole number from -1 to 10000000, got 1e30");
    CHECK(config_error(R"({"timeout": 1e300})") ==
          "/tmp/config.json: field timeout: expected a number above 0 and at most 86400 s (24 h), "
          "got 1e+300");
    CHECK(config_error(R"({"iterations": 1e300})") ==
          "/tmp/config.json: field iterations: expected a whole number from 1 to 100000, got "
          "1e+300");
    // A value of 1 MB is shown by its start and size, not whole.
    const std::string said = parse_error({"--timeout", std::string(1 << 20, '9')});
    CHECK(said.size() < 200);
    CHECK_THAT(said, Catch::EndsWith("'… (1048576 bytes)"));
    // Quoted and escaped when not plain: one line, cut at a character's boundary.
    CHECK(parse_error({"--timeout", "1\n2"}) ==
          "--timeout: expected a number above 0 and at most 86400 s (24 h), got '1\\n2'");
    const std::string accents = parse_error({"--timeout", std::string(100, 'a') + "\xc3\xa9"});
    CHECK_THAT(accents, Catch::EndsWith("got '" + std::string(40, 'a') + "'… (102 bytes)"));
    // The one conversion every timeout goes through saturates instead of overflowing.
    CHECK(milliseconds_of(1e300).count() == 86400000);
    CHECK(milliseconds_of(-5).count() == 0);
    CHECK(milliseconds_of(std::nan("")).count() == 0);
    CHECK(milliseconds_of(2.5).count() == 2500);
    // A positive duration is never 0 ms (curl's "no limit"): 1e-300 s and 0.0001 s are 1 ms.
    CHECK(milliseconds_of(1e-300).count() == 1);
    CHECK(milliseconds_of(0.0001).count() == 1);
    CHECK(milliseconds_of(0.1).count() == 100);
}

TEST_CASE("serve's durations and sizes have ceilings too", "[integration]") {
    for (const auto& [flag, value, said] : std::vector<std::array<std::string, 3>>{
             {"--max-upload-mb", "1e300", "expected a number above 0 and at most 65536 MiB"},
             {"--stop-when-idle", "-1", "expected a number from 0 to 2592000 s (720 h)"},
             {"--poll", "1e10", "expected a number above 0 and at most 86400 s (24 h)"},
             {"--slurm-max-jobs", "1e20", "expected a whole number from 1 to 100000"}}) {
        const auto r = test::run_optimizer({"serve", "--spool", "/nonexistent", flag, value});
        CHECK(r.exit_code == 64);
        CHECK_THAT(r.output, Catch::Contains(flag + ": " + said + ", got " + value));
    }
}

TEST_CASE("an integer option given a fraction says it expects a whole number, not a range") {
    CHECK(parse_error({"--max-iterations", "1.5"}) ==
          "--max-iterations: expected a whole number from 0 to 10000, got 1.5");
    CHECK(parse_error({"--max-iterations", "three"}) ==
          "--max-iterations: expected a whole number from 0 to 10000, got three");
    CHECK(parse_error({"--max-tokens-total", "2000000000000"}) ==
          "--max-tokens-total: expected a whole number from 1 to 1000000000000, got 2000000000000");
    CHECK(parse_error({"--max-iterations", "10000"}).empty());
    CHECK(number_text(1e12) == "1000000000000");
    CHECK(number_text(0.005) == "0.005");
}

TEST_CASE("a config file's value out of range is said as on the command line, naming the field") {
    CHECK(config_error(R"({"max_iterations": 1.5})") ==
          "/tmp/config.json: field max_iterations: expected a whole number from 0 to 10000, got "
          "1.5");
    CHECK(config_error(R"({"timeout": 0})") ==
          "/tmp/config.json: field timeout: expected a number above 0 and at most 86400 s (24 h), "
          "got 0");
    CHECK(config_error(R"({"max_iterations": 3, "timeout": 2.5})").empty());
}

TEST_CASE("an unknown config key is answered with the closest known one") {
    CHECK(config_error(R"({"max_iteration": 3})") ==
          "/tmp/config.json: field max_iteration: unknown option; did you mean max_iterations?");
    CHECK(config_error(R"({"sanitiser_timeout": 3})") ==
          "/tmp/config.json: field sanitiser_timeout: unknown option; did you mean "
          "sanitizer_timeout?");
    CHECK(config_error(R"({"frobnicate": 3})") ==
          "/tmp/config.json: field frobnicate: unknown option");
    // check reads the same file: its unknown key is matched against optimize's keys too.
    CLI::App check, optimize;
    optimizer_options a, b;
    define_check_options(&check, a);
    define_run_options(&optimize, b);
    try {
        apply_config_text(&check, a, R"({"max_iteratons": 3})", "/tmp/config.json", &optimize);
        FAIL("an unknown key was taken");
    } catch (const json_error& e) {
        CHECK_THAT(e.what(), Catch::EndsWith("unknown option; did you mean max_iterations?"));
    }
}

TEST_CASE("check reads a config's optimize-only keys as optimize would, with optimize's code") {
    test::scratch_folder dir;
    optimizer_options o;
    o.config = dir.write("config.json", R"({"max_iterations": "three"})").string();
    exit_code code = exit_code::ok;
    CHECK(optimize_config_problem(o, nullptr, code) ==
          o.config + ": field max_iterations: expected a whole number from 0 to 10000, got three");
    CHECK(code == exit_code::invalid_request);
    // A number written as a string, and a help key, are a hand-written config's slips.
    dir.write("config.json", R"({"max_iterations": "5"})");
    CHECK(optimize_config_problem(o, nullptr, code) ==
          o.config +
              ": field max_iterations: expected a number (without quotes), found the string '5'");
    dir.write("config.json", R"({"min_gain": "0.01"})");
    CHECK_THAT(optimize_config_problem(o, nullptr, code), Catch::Contains("found the string"));
    dir.write("config.json", R"({"help": true})");
    CHECK_THAT(optimize_config_problem(o, nullptr, code),
               Catch::Contains("field help: unknown option"));
    dir.write("config.json", R"({"timing_mode": "adaptive", "iterations": 10, "min_samples": 20})");
    CHECK_THAT(optimize_config_problem(o, nullptr, code),
               Catch::StartsWith("--min-samples 20 is more than --iterations 10"));
    CHECK(code == exit_code::usage);
    dir.write("config.json", R"({"max_iterations": 3, "proposer": "autotune"})");
    CHECK(optimize_config_problem(o, nullptr, code).empty());
    // A key only optimize's own command defines (quiet) is not a problem when it is named.
    dir.write("config.json", R"({"quiet": true})");
    CLI::App optimize;
    bool quiet = false;
    optimize.add_flag("--quiet", quiet);
    CHECK(optimize_config_problem(o, &optimize, code).empty());
    // check reads help as optimize does: no option, though both apps have --help.
    dir.write("config.json", R"({"help": true})");
    CLI::App run;
    optimizer_options r;
    define_run_options(&run, r);
    CHECK_THAT(optimize_config_problem(o, &run, code),
               Catch::Contains("field help: unknown option"));
}

TEST_CASE("replay's help gives the exit codes replay exits with", "[integration]") {
    const auto r = test::run_optimizer({"replay", "--help"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("20 no CUDA driver, no such GPU") &&
                             !Catch::Contains("14 no") && !Catch::Contains("15 no"));
}

TEST_CASE("serve's number options say what they expected, as optimize's do", "[integration]") {
    const auto poll = test::run_optimizer({"serve", "--spool", "/nonexistent", "--poll", "0"});
    CHECK(poll.exit_code == 64);
    CHECK_THAT(
        poll.output,
        Catch::Contains("--poll: expected a number above 0 and at most 86400 s (24 h), got 0"));
    const auto jobs =
        test::run_optimizer({"serve", "--spool", "/nonexistent", "--max-jobs-per-user", "1.5"});
    CHECK(jobs.exit_code == 64);
    CHECK_THAT(
        jobs.output,
        Catch::Contains("--max-jobs-per-user: expected a whole number from 1 to 100000, got 1.5"));
}
