// optimize --resume's parts one by one: history.json and candidates.json read back exactly,
// the autotuner and the files proposer restored mid-run, the model's spending counted from the
// run's records, and the refusals of a run whose inputs or settings changed.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include "common/child_process.hpp"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/pid_lock.hpp"
#include "common/sha256.hpp"
#include "orchestrator/artifacts/candidates_file.hpp"
#include "orchestrator/artifacts/history_reader.hpp"
#include "orchestrator/artifacts/run_artifacts.hpp"
#include "orchestrator/commands/resume_run.hpp"
#include "orchestrator/commands/run_failure.hpp"
#include "orchestrator/model/llm_client.hpp"
#include "orchestrator/proposers/proposer.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

const std::string k_pilot = std::string(CUOPT_SOURCE_DIR) + "/examples/matmul/";

response_gpu_reading reading(int sm_clock) {
    response_gpu_reading g;
    g.sm_clock_mhz = sm_clock;
    g.mem_clock_mhz = 3201;
    g.temperature_c = 61;
    g.power_w = 412.25;
    g.power_limit_w = 700;
    g.throttle_reasons = {"sw_power_cap"};
    return g;
}

// A timed case with every field history.json writes, a NaN among the error figures included.
case_evaluation timed_case() {
    case_evaluation ce;
    ce.name = "perf-256";
    ce.kind = case_kind::performance;
    ce.status = case_status::failed;
    ce.reason = "case 'perf-256': c: 1 of 65536 elements differ";
    ce.median_ms = 0.021337;
    ce.mean_ms = 0.0214;
    ce.min_ms = 0.0211;
    ce.max_ms = 0.0301;
    ce.stdev_ms = 1.7e-4;
    ce.iterations = 100;
    response_timing_details& d = ce.timing;
    d.timer = response_timer_kind::cupti;
    d.timer_note = "events were busy";
    d.stop_rule = response_stop_rule::fixed;
    d.relative_standard_error = 0.0013;
    d.cupti = response_channel{0.021337, 0, 0, {}};
    d.events = response_channel{0.022637, 0, 0, {}};
    d.event_overhead_ms = 0.0013;
    d.channels_agree = true;
    d.gpu_state = response_gpu_state{reading(1980), reading(1755), true, {"sw_power_cap"}};
    validation_result v;
    v.mismatches = 1;
    v.worst_index = 4097;
    v.worst_actual = std::numeric_limits<double>::quiet_NaN();
    v.worst_expected = 3.25;
    v.max_abs_error = std::numeric_limits<double>::infinity();
    v.max_rel_error = 0.1 + 0.2;
    v.relative_l2_error = 1.0 / 3.0;
    ce.outputs.push_back({"c", "/tmp/run/candidates/iter-02/attempt-1/outputs/perf.c.bin", 0, v,
                          std::nullopt, false});
    return ce;
}

attempt_result rich_attempt() {
    attempt_result r;
    r.iteration = 2;
    r.attempt = 1;
    r.cand.source = "__global__ void k() {}\n// caf\xc3\xa9\n";
    r.cand.entry = "k";
    r.cand.proposer = proposer_kind::autotune;
    r.cand.label = "BLOCK_X=32 --use_fast_math";
    r.cand.rationale = "autotune: BLOCK_X=32";
    r.cand.parent_iteration = 1;
    r.cand.defines = {{"BLOCK_X", "32"}, {"NAME", "\"x\""}};
    r.cand.tunables = {{"BLOCK_X", 32}};
    r.cand.compile_options = {"--use_fast_math", "-DX=1"};
    r.folder = "/tmp/run/candidates/iter-02/attempt-1";
    r.verdict = verdict::wrong_output;
    r.reason = "case 'perf-256': c: 1 of 65536 elements differ";
    r.compile = {true, true, 12.625, "ptxas info: 40 registers", 40, 1024, 0, 8, "", ""};
    r.harness_exit_code = 0;
    r.harness_signal = 0;
    r.harness_wall_ms = 431.0078125;
    r.harness_stderr = "warning: x";
    r.speedup_vs_initial = 1.2345678901234567;
    r.repair_of = 0;
    r.device = 1;
    r.compile_ahead = compile_ahead_record{true, 14.5, 0.25};
    r.cases.push_back(timed_case());
    case_evaluation skipped;
    skipped.name = "correctness-31x37x29";
    skipped.kind = case_kind::correctness;
    skipped.status = case_status::not_run;
    r.cases.push_back(skipped);
    return r;
}

search_outcome outcome_of(std::vector<attempt_result> history) {
    search_outcome o;
    o.history = std::move(history);
    return o;
}

}  // namespace

TEST_CASE("history.json read back writes the same text again", "[resume]") {
    attempt_result first = rich_attempt();
    first.iteration = 0;
    first.attempt = 0;
    first.verdict = verdict::valid;
    first.reason.clear();
    first.became_best = true;
    first.geomean_ms = 0.0213370001;
    first.repair_of = -1;
    first.cand.parent_iteration.reset();
    first.cand.proposer = proposer_kind::initial;
    const search_outcome written = outcome_of({first, rich_attempt()});
    const fs::path run = "/tmp/run";
    const std::string text = history_json(written, run);
    const std::vector<recorded_attempt> read =
        history_from_json(parse_json(text, "history.json"), run);
    REQUIRE(read.size() == 2);
    std::vector<attempt_result> again;
    for (const recorded_attempt& ra : read) {
        CHECK(ra.source_sha256 == sha256_hex(written.history[again.size()].cand.source));
        again.push_back(ra.result);
        again.back().cand.source = written.history[again.size() - 1].cand.source;
    }
    CHECK(history_json(outcome_of(again), run) == text);
    const attempt_result& r = again[1];
    CHECK(r.folder == run / "candidates/iter-02/attempt-1");
    CHECK(r.repair_of == 0);
    CHECK(r.cases[0].timing.gpu_state->before->sm_clock_mhz == 1980);
    CHECK(std::isnan(r.cases[0].outputs[0].validation->worst_actual));
    CHECK(r.cases[0].outputs[0].validation->max_rel_error == 0.1 + 0.2);  // every bit
    CHECK(*r.speedup_vs_initial == 1.2345678901234567);
}

TEST_CASE("a history.json that breaks its schema is named with the field", "[resume]") {
    const rapidjson::Document d = parse_json(
        R"({"schema_version": 1, "run": "run-001", "attempts": [{"iteration": 0}]})", "h");
    CHECK_THROWS_WITH(history_from_json(d, "/tmp/run"), Catch::Contains("history.json"));
}

TEST_CASE("candidates.json keeps every field of every candidate, repairs and declined ones too",
          "[resume]") {
    const manifest m = read_manifest(k_pilot + "input_cases.json");
    candidate c = rich_attempt().cand;
    launch_expressions l;
    l.grid = {"ceil(n/BLOCK_X)", "ceil(m/8)", "1"};
    l.block = {"BLOCK_X", "8", "1"};
    l.dynamic_shared_bytes = "4*BLOCK_X";
    c.launch = l;
    c.case_launch["perf-256"] = l;
    c.case_launch["perf-256"].block[1] = "16";
    candidate rejected = c;
    rejected.launch.reset();
    rejected.case_launch.clear();
    rejected.proposer = proposer_kind::llm;
    rejected.rejected = "no tool call after corrections";
    iteration_record rec;
    rec.batch = {c, rejected};
    rec.repairs = {{0, 2, c}, {2, 3, std::nullopt}};
    const std::string text = candidates_json(4, rec);
    const rapidjson::Document d = parse_json(text, "candidates.json");
    const iteration_record back = iteration_record_from_json(d, m, "candidates.json");
    CHECK(candidates_json(4, back) == text);
    REQUIRE(back.batch.size() == 2);
    CHECK(back.batch[0].source == c.source);
    CHECK(back.batch[0].launch->dynamic_shared_bytes == "4*BLOCK_X");
    CHECK(back.batch[0].case_launch.at("perf-256").block[1] == "16");
    CHECK(back.batch[1].rejected == "no tool call after corrections");
    CHECK(!back.batch[1].launch);
    REQUIRE(back.repair_for(2));
    CHECK(!back.repair_for(2)->fixed);
    CHECK(back.repair_for(0)->attempt == 2);
}

namespace {

// The fake harness's timing rule for the pilot: 1 + sum |define - 32| / 64, so the search has
// a best; flags make no difference.
double fake_geomean(const candidate& c) {
    double f = 1;
    for (const auto& [k, v] : c.tunables) f += std::fabs(static_cast<double>(v) - 32) / 64;
    return f;
}

// Runs the autotuner for `iterations`, each batch "evaluated" by fake_geomean with the 1%
// min-gain rule; returns every batch and the history they made.
struct tuned_run {
    std::vector<std::vector<candidate>> batches;
    std::vector<attempt_result> history;
    std::optional<std::size_t> best;
    std::size_t before(int iteration) const {
        std::size_t n = 0;
        while (n < history.size() && history[n].iteration < iteration) ++n;
        return n;
    }
};

void record_batch(tuned_run& t, int iteration, const std::vector<candidate>& batch) {
    t.batches.push_back(batch);
    for (std::size_t j = 0; j < batch.size(); ++j) {
        attempt_result r;
        r.iteration = iteration;
        r.attempt = static_cast<int>(j);
        r.cand = batch[j];
        r.verdict = verdict::valid;
        r.geomean_ms = fake_geomean(batch[j]);
        r.became_best = !t.best || *r.geomean_ms * 1.01 < *t.history[*t.best].geomean_ms;
        t.history.push_back(r);
        if (r.became_best) t.best = t.history.size() - 1;
    }
}

std::vector<std::string> labels(const std::vector<candidate>& batch) {
    std::vector<std::string> out;
    for (const candidate& c : batch) out.push_back(c.label);
    return out;
}

}  // namespace

TEST_CASE("an autotuner restored mid-run proposes exactly what the uninterrupted one does",
          "[resume]") {
    const manifest m = read_manifest(k_pilot + "input_cases.json");
    candidate initial;
    initial.entry = "matmul_f32";
    initial.tunables = m.default_tunables();
    initial.proposer = proposer_kind::initial;
    const int iterations = 6;
    tuned_run whole;
    attempt_result zero;
    zero.cand = initial;
    zero.verdict = verdict::valid;
    zero.geomean_ms = fake_geomean(initial);
    zero.became_best = true;
    whole.history.push_back(zero);
    whole.best = 0;
    const auto uninterrupted = make_autotune_proposer(m, 7, 4, 1024);
    for (int i = 1; i <= iterations; ++i)
        record_batch(whole, i, uninterrupted->propose({m, initial, whole.history, whole.best, i}));
    for (int stopped_after = 0; stopped_after < iterations; ++stopped_after) {
        const auto resumed = make_autotune_proposer(m, 7, 4, 1024);
        for (int i = 1; i <= stopped_after; ++i) {
            const std::vector<attempt_result> then(
                whole.history.begin(), whole.history.begin() + static_cast<long>(whole.before(i)));
            std::optional<std::size_t> best;
            for (std::size_t k = 0; k < then.size(); ++k)
                if (then[k].became_best) best = k;
            resumed->restore({m, initial, then, best, i}, whole.batches[i - 1]);
        }
        tuned_run rest;
        rest.history.assign(
            whole.history.begin(),
            whole.history.begin() + static_cast<long>(whole.before(stopped_after + 1)));
        for (std::size_t k = 0; k < rest.history.size(); ++k)
            if (rest.history[k].became_best) rest.best = k;
        for (int i = stopped_after + 1; i <= iterations; ++i) {
            const auto batch = resumed->propose({m, initial, rest.history, rest.best, i});
            INFO("stopped after iteration " << stopped_after << ", iteration " << i);
            CHECK(labels(batch) == labels(whole.batches[i - 1]));
            record_batch(rest, i, batch);
        }
    }
}

TEST_CASE("a files proposer restored after two iterations proposes the third file", "[resume]") {
    test::scratch_folder dir;
    for (const char* f : {"a.cu", "b.cu", "c.cu"}) dir.write(std::string("cands/") + f, "// x\n");
    const manifest m = read_manifest(k_pilot + "input_cases.json");
    candidate initial;
    std::vector<attempt_result> history;
    const auto files = make_files_proposer(dir / "cands");
    for (int i = 1; i <= 2; ++i) files->restore({m, initial, history, std::nullopt, i}, {initial});
    const auto batch = files->propose({m, initial, history, std::nullopt, 3});
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].label == "c.cu");
    CHECK(files->propose({m, initial, history, std::nullopt, 4}).empty());
}

TEST_CASE("the model's spending is counted from the run's model-NNN.json records", "[resume]") {
    test::scratch_folder dir;
    dir.write("model-001.json", R"({"index": 1, "kind": "model", "usage": {"prompt_tokens": 100,
        "completion_tokens": 40, "reasoning_tokens": 10, "cached_tokens": 20}})");
    dir.write("model-002.json",
              R"({"index": 2, "kind": "nvidia_docs", "response": {"pages": [
        "cache https://docs.nvidia.com/a", "fetch https://docs.nvidia.com/b -> HTTP 200",
        "fetch https://docs.nvidia.com/c -> HTTP 301"]}})");
    dir.write("model-003.json", R"({"index": 3, "kind": "model", "usage": null})");
    dir.write("model-004.json", R"({"index": 4, "kind": "model", "usage": {"prompt_tokens": 5,
        "completion_tokens": 6, "reasoning_tokens": null, "cached_tokens": 0}})");
    dir.write("notes.json", R"({"index": 99, "kind": "model"})");
    const recorded_spending s = read_recorded_spending(dir.path());
    CHECK(s.exchanges == 4);
    CHECK(s.totals.calls == 3);  // an exchange that failed still cost a call
    CHECK(s.totals.usage.prompt == 105);
    CHECK(s.totals.usage.completion == 46);
    CHECK(s.totals.usage.cached == 20);
    CHECK(!s.totals.usage.reasoning_reported);
    CHECK(s.docs_fetches == 2);
}

TEST_CASE("a resume is refused with the file and the field that changed", "[resume]") {
    recorded_run then;
    then.run = "/tmp/run-007";
    then.proposer = "autotune";
    then.sha256 = {{"manifest", std::string(64, 'a')}, {"inputs/a256.bin", std::string(64, 'b')}};
    then.settings = {{"max_iterations", "7"}, {"isolation", "\"worker\""}};
    run_info now;
    now.proposer = proposer_kind::autotune;
    now.sha256 = then.sha256;
    now.settings = {{"max_iterations", std::int64_t{7}}, {"isolation", std::string("process")}};
    optimizer_options o;
    o.input_cases = "cases.json";
    CHECK_NOTHROW(check_unchanged(then, now, o));  // isolation may differ
    auto refusal = [&](const run_info& n) {
        try {
            check_unchanged(then, n, o);
        } catch (const run_failure& f) {
            CHECK(f.code() == exit_code::resume_refused);
            return std::string(f.what());
        }
        return std::string("not refused");
    };
    run_info changed = now;
    changed.sha256["inputs/a256.bin"] = std::string(64, 'c');
    CHECK_THAT(refusal(changed),
               Catch::Contains("the input file a256.bin changed since the run began (run.json "
                               "sha256.inputs/a256.bin bbbbbbbbbbbb..., now cccccccccccc...)"));
    changed = now;
    changed.sha256["manifest"] = std::string(64, 'd');
    CHECK_THAT(refusal(changed), Catch::Contains("the manifest cases.json changed"));
    changed = now;
    changed.settings["max_iterations"] = std::int64_t{9};
    CHECK_THAT(refusal(changed), Catch::Contains("settings.max_iterations was 7 when the run "
                                                 "began and is 9 now"));
    changed = now;
    changed.proposer = proposer_kind::llm;
    CHECK_THAT(refusal(changed), Catch::Contains("its proposer was autotune and would be llm"));
}

TEST_CASE("a resume is refused when a hashed file was added to the run or taken out of it",
          "[resume]") {
    recorded_run then;
    then.run = "/tmp/run-008";
    then.proposer = "autotune";
    then.sha256 = {{"manifest", std::string(64, 'a')},
                   {"holdout", std::string(64, 'h')},
                   {"inputs/gen.bin", std::string(64, 'g')}};
    run_info now;
    now.proposer = proposer_kind::autotune;
    now.sha256 = then.sha256;
    optimizer_options o;
    o.reference = "ref.cu";
    auto refusal = [&](const run_info& n, hash_stage stage) {
        try {
            check_unchanged(then, n, o, stage);
        } catch (const run_failure& f) {
            CHECK(f.code() == exit_code::resume_refused);
            return std::string(f.what());
        }
        return std::string("not refused");
    };
    run_info changed = now;
    changed.sha256["reference"] = std::string(64, 'r');  // a reference added to the config
    for (hash_stage s : {hash_stage::before_oracle, hash_stage::after_oracle})
        CHECK_THAT(refusal(changed, s),
                   Catch::Contains("the reference kernel ref.cu is part of the run now and was "
                                   "not when it began (run.json has no sha256.reference"));
    changed = now;
    changed.sha256.erase("holdout");  // the holdout taken out
    CHECK_THAT(refusal(changed, hash_stage::before_oracle),
               Catch::Contains("run.json sha256.holdout (hhhhhhhhhhhh...) names a file the run "
                               "had when it began and does not have now"));
    CHECK(refusal(changed, hash_stage::after_oracle) == "not refused");  // hashed after this
    changed = now;
    changed.sha256.erase("inputs/gen.bin");  // generated inputs are hashed with the oracle
    CHECK(refusal(changed, hash_stage::before_oracle) == "not refused");
    CHECK_THAT(refusal(changed, hash_stage::after_oracle),
               Catch::Contains("run.json sha256.inputs/gen.bin"));
    run_info more = now;
    more.sha256["inputs/new.bin"] = std::string(64, 'n');  // an input the run never had
    CHECK_THAT(refusal(more, hash_stage::after_oracle), Catch::Contains("sha256.inputs/new.bin"));
    then.sha256.erase("inputs/gen.bin");  // stopped before its oracle: no input recorded yet
    CHECK(refusal(more, hash_stage::after_oracle) == "not refused");
    then.sha256["reference"] = std::string(64, 'r');  // the reference taken out
    CHECK_THAT(refusal(now, hash_stage::before_oracle),
               Catch::Contains("run.json sha256.reference (rrrrrrrrrrrr...) names a file"));
}

TEST_CASE("a resume on another GPU, or another first --devices index, is refused naming both",
          "[resume]") {
    recorded_run then;
    then.run = "/tmp/run-009";
    then.device = fingerprint_of(
        read_device_facts(R"({"index": 0, "name": "NVIDIA H200", "uuid": "GPU-aaa"})"));
    REQUIRE(then.device);
    auto refusal = [&](const char* now) {
        try {
            check_same_device(then, fingerprint_of(read_device_facts(now)));
        } catch (const run_failure& f) {
            CHECK(f.code() == exit_code::resume_refused);
            return std::string(f.what());
        }
        return std::string("not refused");
    };
    CHECK(refusal(R"({"index": 0, "name": "NVIDIA H200", "uuid": "GPU-aaa"})") == "not refused");
    CHECK(refusal(R"({"index": 0, "name": "NVIDIA H200"})") == "not refused");  // no uuid now
    CHECK_THAT(refusal(R"({"index": 0, "name": "NVIDIA A100", "uuid": "GPU-aaa"})"),
               Catch::Contains("the run began on device 0 NVIDIA H200 (GPU-aaa) and would go on "
                               "on device 0 NVIDIA A100 (GPU-aaa)"));
    CHECK_THAT(refusal(R"({"index": 0, "name": "NVIDIA H200", "uuid": "GPU-bbb"})"),
               Catch::Contains("would go on on device 0 NVIDIA H200 (GPU-bbb)"));
    CHECK_THAT(refusal(R"({"index": 1, "name": "NVIDIA H200", "uuid": "GPU-aaa"})"),
               Catch::Contains("would go on on device 1 NVIDIA H200"));
    then.device.reset();  // a run.json without a device block: nothing to hold against
    CHECK(refusal(R"({"index": 1, "name": "x"})") == "not refused");
}

TEST_CASE(
    "RUN/.lock is held by one run_lock at a time, names its pid, and is handed down to the "
    "children started while it is held, read-only",
    "[integration][resume]") {
    test::scratch_folder dir;
    std::unique_ptr<child_process> child;
    {
        run_lock held(dir.path());
        REQUIRE(held.fd() >= 0);
        CHECK((::fcntl(held.fd(), F_GETFD) & FD_CLOEXEC) != 0);        // no program this one execs
        CHECK((::fcntl(held.fd(), F_GETFL) & O_ACCMODE) == O_RDONLY);  // a child cannot write it
        CHECK(read_text_file(dir / ".lock") == std::to_string(::getpid()) + "\n");
        try {
            run_lock second(dir.path());
            FAIL("a second lock was taken");
        } catch (const run_failure& f) {
            CHECK(f.code() == exit_code::resume_refused);
            CHECK_THAT(std::string(f.what()),
                       Catch::Contains("the run is still going (pid " + std::to_string(::getpid()) +
                                       " holds " + (dir / ".lock").string() + ")"));
        }
        child = std::make_unique<child_process>(std::vector<std::string>{"/bin/sleep", "0.5"},
                                                child_streams{});
    }
    // The run lets go; the harness it started has not: the run is still going (its pid runs).
    try {
        run_lock again(dir.path());
        FAIL("taken while a child of the run held it");
    } catch (const run_failure& f) {
        CHECK_THAT(std::string(f.what()), Catch::Contains("the run is still going (pid "));
    }
    child->wait();
    CHECK_NOTHROW(run_lock(dir.path()));  // released with the last of them
    // Nothing is handed down once the lock is gone.
    { run_lock(dir.path()); }
    child_process after(std::vector<std::string>{"/bin/sleep", "0.5"}, child_streams{});
    CHECK_NOTHROW(run_lock(dir.path()));
    after.wait();
}

TEST_CASE("a run_lock whose holder has ended waits for the children it left, then takes the lock",
          "[integration][resume]") {
    test::scratch_folder dir;
    const std::unique_ptr<child_process> straggler = test::straggler_holding(dir / ".lock", "0.6");
    CHECK_FALSE(process_running("2147483647"));
    const auto started = std::chrono::steady_clock::now();
    CHECK_NOTHROW(run_lock(dir.path()));
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(300));
    // Taken only once the straggler had ended (its lock goes a moment before it can be reaped).
    bool ended = false;
    for (int i = 0; i < 200 && !(ended = straggler->poll().has_value()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(ended);
}

TEST_CASE(
    "take_after_stragglers gives up when its wait runs out, and at once on a running holder, "
    "saying which",
    "[integration][resume]") {
    test::scratch_folder dir;
    const std::unique_ptr<child_process> straggler = test::straggler_holding(dir / ".lock", "5");
    std::string holder;
    bool running = true;
    int told = 0;
    const auto started = std::chrono::steady_clock::now();
    CHECK_FALSE(pid_lock::take_after_stragglers(dir / ".lock", 0644, std::chrono::milliseconds(300),
                                                holder, running, [&] { ++told; }));
    CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(300));
    CHECK(holder == "2147483647");
    CHECK_FALSE(running);  // the wait ran out: the holder had ended
    CHECK(told == 1);
    ::kill(straggler->pid(), SIGKILL);
    straggler->wait();
    // A holder that runs (this process): refused at once, never waited on.
    const std::optional<pid_lock> mine = pid_lock::try_take(dir / ".lock", 0644, holder);
    REQUIRE(mine);
    told = 0;
    CHECK_FALSE(pid_lock::take_after_stragglers(dir / ".lock", 0644, std::chrono::seconds(30),
                                                holder, running, [&] { ++told; }));
    CHECK(running);
    CHECK(holder == std::to_string(::getpid()));
    CHECK(told == 0);
}

TEST_CASE("process_running: a pid that runs, never a zombie, a pid that is gone, or a non-pid",
          "[resume]") {
    CHECK(process_running(std::to_string(::getpid())));
    for (const char* text :
         {"", "0", "-1", "abc", "12a", "99999999999", "2147483647", "4294967295"})
        CHECK_FALSE(process_running(text));
    child_process ended(std::vector<std::string>{"/bin/true"}, child_streams{});
    const std::string pid = std::to_string(ended.pid());
    // Not reaped yet: a zombie, which has ended (its descriptors closed, its children told).
    for (int i = 0; i < 500 && process_running(pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(process_running(pid));
    CHECK(::kill(ended.pid(), 0) == 0);  // still there to be reaped
    ended.wait();
    // A FIFO planted at the lock's name is refused at once, never waited on.
    test::scratch_folder dir;
    REQUIRE(::mkfifo((dir / ".lock").c_str(), 0644) == 0);
    std::string holder;
    CHECK_THROWS_WITH(pid_lock::try_take(dir / ".lock", 0644, holder),
                      Catch::Contains(".lock: not a regular file"));
    CHECK(holder_text("") == "?");
    CHECK(holder_text("1234") == "1234");
    CHECK(holder_text("12 34\n") == "'12 34\\n'");
}

TEST_CASE(
    "remove_partial_writes takes the atomic writer's temporaries only, regular files, never "
    "through a link",
    "[resume]") {
    test::scratch_folder dir, elsewhere;
    const fs::path run = dir / "run";
    dir.write("run/history.json.tmp-0123456789abcdef", "{");
    dir.write("run/candidates/iter-01/candidates.json.tmp-fedcba9876543210", "[");
    dir.write("run/notes.tmp-0123", "kept: not the writer's name");
    dir.write("run/kernel.tmp-0123456789ABCDEF", "kept: upper-case digits");
    fs::create_directories(run / "folder.tmp-0123456789abcdef");
    elsewhere.write("run.json.tmp-0123456789abcdef", "not the run's");
    fs::create_directory_symlink(elsewhere.path(), run / "linked");
    fs::create_symlink(elsewhere / "run.json.tmp-0123456789abcdef",
                       run / "link.tmp-0123456789abcdef");
    CHECK(remove_partial_writes(run) == 2);
    CHECK_FALSE(fs::exists(run / "history.json.tmp-0123456789abcdef"));
    CHECK_FALSE(fs::exists(run / "candidates/iter-01/candidates.json.tmp-fedcba9876543210"));
    for (const char* kept : {"notes.tmp-0123", "kernel.tmp-0123456789ABCDEF",
                             "folder.tmp-0123456789abcdef", "link.tmp-0123456789abcdef"})
        CHECK(fs::exists(fs::symlink_status(run / kept)));
    CHECK(read_text_file(elsewhere / "run.json.tmp-0123456789abcdef") == "not the run's");
}
