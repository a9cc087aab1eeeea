// How a run was timed, summed over its attempts: the clock, the events' overhead, the GPU's
// clocks and power, the throttled cases; and how the progress and closing lines say it.
#include "orchestrator/artifacts/timing_conditions.hpp"

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "orchestrator/artifacts/console_report.hpp"

using namespace cuopt;

namespace {

response_gpu_reading reading(int sm_mhz, int temperature_c, double power_w) {
    response_gpu_reading r;
    r.sm_clock_mhz = sm_mhz;
    r.mem_clock_mhz = 3201;
    r.temperature_c = temperature_c;
    r.power_w = power_w;
    r.power_limit_w = 700;
    return r;
}

// A measured case timed by `timer` with CUDA events `overhead_ms` slower beside CUPTI.
case_evaluation timed_case(const std::string& name, response_timer_kind timer,
                           double overhead_ms = 0.0013) {
    case_evaluation ce;
    ce.name = name;
    ce.median_ms = 0.02;
    ce.timing.timer = timer;
    ce.timing.events = response_channel{0.02 + overhead_ms, 0.02, 0.03, {}};
    if (timer == response_timer_kind::cupti) {
        ce.timing.cupti = response_channel{0.02, 0.02, 0.03, {}};
        ce.timing.event_overhead_ms = overhead_ms;
        ce.timing.channels_agree = true;
    }
    ce.timing.gpu_state =
        response_gpu_state{reading(1980, 45, 120), reading(1980, 52, 300), false, {}};
    return ce;
}

attempt_result attempt(int iteration, const std::string& label, std::vector<case_evaluation> cs) {
    attempt_result r;
    r.iteration = iteration;
    r.cand.label = label;
    r.verdict = verdict::valid;
    r.cases = std::move(cs);
    r.timer = response_timer{response_timer_kind::cupti, std::nullopt, "libcupti.so.13"};
    r.gpu_monitor = response_gpu_monitor{"nvml", std::nullopt};
    return r;
}

}  // namespace

TEST_CASE(
    "the run's timer is the clock every measured case used, with the median overhead of the "
    "events beside it, and mixed where cases used both") {
    std::vector<attempt_result> run{
        attempt(0, "initial.cu",
                {timed_case("a", response_timer_kind::cupti, 0.0012),
                 timed_case("b", response_timer_kind::cupti, 0.0013)}),
        attempt(1, "fast.cu", {timed_case("a", response_timer_kind::cupti, 0.0014)})};
    std::optional<timer_use> t = summarize_timer(run);
    REQUIRE(t);
    CHECK(t->name == "cupti");
    CHECK(t->library == "libcupti.so.13");
    CHECK(t->cases.at("cupti") == 3);
    CHECK(t->median_event_overhead_ms == Approx(0.0013));
    CHECK(t->channels_disagree == 0);

    case_evaluation fell_back = timed_case("b", response_timer_kind::events);
    fell_back.timing.timer_note = "CUPTI missed 2 of 100 launches; events used";
    run[1].cases.push_back(fell_back);
    run[1].cases[0].timing.channels_agree = false;
    t = summarize_timer(run);
    CHECK(t->name == "mixed");
    CHECK(t->cases.at("events") == 1);
    CHECK(t->note == "CUPTI missed 2 of 100 launches; events used");
    CHECK(t->channels_disagree == 1);

    attempt_result old;  // a harness from before issue 12 names no clock
    old.cases.push_back(case_evaluation{});
    old.cases[0].median_ms = 0.02;
    CHECK_FALSE(summarize_timer({old}));
    rapidjson::Document doc;
    CHECK(timer_json(std::nullopt, doc.GetAllocator()).IsNull());
}

TEST_CASE(
    "the GPU-state summary spans every reading of every measured case and names each throttled "
    "case with its attempt and reasons") {
    std::vector<attempt_result> run{
        attempt(0, "initial.cu", {timed_case("a", response_timer_kind::cupti)}),
        attempt(2, "hot.cu", {timed_case("a", response_timer_kind::cupti)})};
    run[1].attempt = 3;
    response_gpu_state& g = *run[1].cases[0].timing.gpu_state;
    g.after = reading(1410, 83, 699.5);
    g.throttled = true;
    g.throttle_reasons = {"sw_power_cap", "sw_thermal_slowdown"};
    const std::optional<gpu_state_summary> s = summarize_gpu_state(run);
    REQUIRE(s);
    CHECK(s->source == "nvml");
    CHECK(s->cases == 2);
    CHECK(s->sm_clock_min_mhz == 1410);
    CHECK(s->sm_clock_max_mhz == 1980);
    CHECK(s->mem_clock_min_mhz == 3201);
    CHECK(s->max_temperature_c == 83);
    CHECK(s->max_power_w == 699.5);
    CHECK(s->power_limit_w == 700);
    CHECK(s->throttle_reasons == std::vector<std::string>{"sw_power_cap", "sw_thermal_slowdown"});
    REQUIRE(s->throttled.size() == 1);
    CHECK(s->throttled[0].label == "hot.cu");
    CHECK(s->throttled[0].iteration == 2);
    CHECK(s->throttled[0].attempt == 3);
    CHECK(s->throttled[0].case_name == "a");

    rapidjson::Document doc;
    const rapidjson::Value v = gpu_state_json(s, doc.GetAllocator());
    CHECK(v["throttled_cases"].GetInt() == 1);
    CHECK(std::string(v["throttled"][0]["case"].GetString()) == "a");
    CHECK(v["sm_clock_min_mhz"].GetInt() == 1410);

    attempt_result unmonitored;  // NVML missing: the note, no figures
    unmonitored.gpu_monitor = response_gpu_monitor{std::nullopt, "NVML not found"};
    const auto none = summarize_gpu_state({unmonitored});
    REQUIRE(none);
    CHECK(none->cases == 0);
    CHECK(none->note == "NVML not found");
    CHECK_FALSE(summarize_gpu_state({attempt_result{}}));
}

TEST_CASE(
    "a case timed while throttled and a case whose clocks disagree each get a warning under the "
    "attempt's progress line") {
    attempt_result r = attempt(1, "hot.cu",
                               {timed_case("perf-256", response_timer_kind::cupti),
                                timed_case("perf-384", response_timer_kind::cupti)});
    r.cases[0].timing.gpu_state->throttled = true;
    r.cases[0].timing.gpu_state->throttle_reasons = {"sw_power_cap"};
    r.cases[1].timing.channels_agree = false;
    r.cases[1].timing.events->median_ms = 0.03;
    search_outcome o;
    o.history.push_back(r);
    const std::string line = progress_line(r, o, 5, 1.0);
    CHECK_THAT(line, Catch::Contains("\n  warning: case 'perf-256' timed while throttled "
                                     "(sw_power_cap)"));
    CHECK_THAT(line, Catch::Contains("\n  warning: case 'perf-384': CUPTI 0.0200 ms and CUDA "
                                     "events 0.0300 ms disagree beyond the events' overhead"));
    r.cases[0].timing.gpu_state->throttled = false;
    r.cases[1].timing.channels_agree = true;
    CHECK_THAT(progress_line(r, o, 5, 1.0), !Catch::Contains("warning"));
}

TEST_CASE("the closing table names the timer, the events' overhead and the GPU's state") {
    manifest m;
    m.cases.push_back(manifest_case{});
    m.cases[0].name = "a";
    search_outcome o;
    o.history.push_back(attempt(0, "initial.cu", {timed_case("a", response_timer_kind::cupti)}));
    o.initial = o.best = 0;
    std::string t = closing_table(o, m);
    CHECK_THAT(t, Catch::Contains("\ntimer: cupti (CUDA events beside: median overhead 1.3 us)\n"));
    CHECK_THAT(t, Catch::Contains("\ngpu: SM 1980 MHz, memory 3201 MHz, up to 52 C, up to 300 W of "
                                  "700 W; no measured case throttled\n"));
    o.history[0].cases[0].timing = response_timing_details{};
    o.history[0].cases[0].timing.timer = response_timer_kind::events;
    o.history[0].timer = response_timer{response_timer_kind::events, "CUPTI not found", {}};
    o.history[0].gpu_monitor = response_gpu_monitor{std::nullopt, "NVML not found"};
    t = closing_table(o, m);
    CHECK_THAT(t, Catch::Contains("\ntimer: events (CUPTI not found)\n"));
    CHECK_THAT(t, Catch::Contains("\ngpu: not monitored (NVML not found)\n"));
    // A stand-in harness's clock and GPU state are its inventions, and say so.
    t = closing_table(o, m, {}, true);
    CHECK_THAT(t, Catch::Contains("\ntimer (simulated): events (CUPTI not found)\n"));
    CHECK_THAT(t, Catch::Contains("\ngpu (simulated): not monitored (NVML not found)\n"));
}
