#include "orchestrator/artifacts/timing_conditions.hpp"

#include <algorithm>
#include <set>

#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"

namespace cuopt {

using rapidjson::Value;

namespace {

bool measured(const case_evaluation& ce) {
    return ce.median_ms.has_value();
}

std::optional<double> median_of(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <class T>
void widen(std::optional<T>& low, std::optional<T>& high, const std::optional<T>& x) {
    if (!x) return;
    if (!low || *x < *low) low = x;
    if (!high || *x > *high) high = x;
}

template <class T>
void raise_to(std::optional<T>& high, const std::optional<T>& x) {
    if (x && (!high || *x > *high)) high = x;
}

// One reading (before or after a case's loop) into the run's ranges.
void add_reading(gpu_state_summary& s, const response_gpu_reading& r) {
    widen(s.sm_clock_min_mhz, s.sm_clock_max_mhz, r.sm_clock_mhz);
    widen(s.mem_clock_min_mhz, s.mem_clock_max_mhz, r.mem_clock_mhz);
    raise_to(s.max_temperature_c, r.temperature_c);
    raise_to(s.max_power_w, r.power_w);
    raise_to(s.power_limit_w, r.power_limit_w);
}

Value reading_json(const std::optional<response_gpu_reading>& r, json_allocator& a) {
    if (!r) return Value();
    json_object v(a);
    v.add("sm_clock_mhz", r->sm_clock_mhz).add("mem_clock_mhz", r->mem_clock_mhz);
    v.add("temperature_c", r->temperature_c).add("power_w", r->power_w);
    v.add("power_limit_w", r->power_limit_w).add("throttle_reasons", r->throttle_reasons);
    return v.take();
}

}  // namespace

std::optional<timer_use> summarize_timer(const std::vector<attempt_result>& attempts) {
    timer_use t;
    std::set<std::string> names;
    std::optional<std::string> case_note;
    std::vector<double> overheads;
    for (const attempt_result& r : attempts) {
        if (r.timer) {
            if (!t.note && r.timer->note) t.note = r.timer->note;
            if (!t.library && r.timer->library) t.library = r.timer->library;
        }
        for (const case_evaluation& ce : r.cases) {
            const response_timing_details& d = ce.timing;
            if (!measured(ce) || !d.timer) continue;
            names.insert(k_response_timer_kinds.name(*d.timer));
            ++t.cases[k_response_timer_kinds.name(*d.timer)];
            if (!case_note && d.timer_note) case_note = d.timer_note;
            // The events' own cost: from cases where the two clocks agree about the kernel.
            if (d.event_overhead_ms && d.channels_agree != false)
                overheads.push_back(*d.event_overhead_ms);
            t.channels_disagree += d.channels_agree == false;
        }
    }
    // Responses that timed nothing (compile errors, failed cases) still name their clock.
    if (names.empty())
        for (const attempt_result& r : attempts)
            if (r.timer) names.insert(k_response_timer_kinds.name(r.timer->name));
    if (names.empty()) return std::nullopt;
    t.name = names.size() == 1 ? *names.begin() : "mixed";
    if (!t.note) t.note = case_note;
    t.median_event_overhead_ms = median_of(overheads);
    return t;
}

std::optional<gpu_state_summary> summarize_gpu_state(const std::vector<attempt_result>& attempts) {
    gpu_state_summary s;
    bool heard = false;
    std::set<std::string> reasons;
    for (const attempt_result& r : attempts) {
        if (r.gpu_monitor) {
            heard = true;
            if (!s.source && r.gpu_monitor->source) s.source = r.gpu_monitor->source;
            if (!s.note && r.gpu_monitor->note) s.note = r.gpu_monitor->note;
        }
        for (const case_evaluation& ce : r.cases) {
            if (!measured(ce) || !ce.timing.gpu_state) continue;
            const response_gpu_state& g = *ce.timing.gpu_state;
            heard = true;
            ++s.cases;
            for (const auto* reading : {&g.before, &g.after})
                if (*reading) add_reading(s, **reading);
            if (!g.throttled) continue;
            reasons.insert(g.throttle_reasons.begin(), g.throttle_reasons.end());
            s.throttled.push_back(
                {r.iteration, r.attempt, r.cand.label, ce.name, g.throttle_reasons});
        }
    }
    if (!heard) return std::nullopt;
    s.throttle_reasons.assign(reasons.begin(), reasons.end());
    return s;
}

Value timer_json(const std::optional<timer_use>& t, json_allocator& a) {
    if (!t) return Value();
    json_object v(a);
    v.add("name", t->name).add("note", t->note).add("library", t->library).add("cases", t->cases);
    v.add("event_overhead_ms_median", t->median_event_overhead_ms);
    return v.add("channels_disagree", t->channels_disagree).take();
}

Value gpu_state_json(const std::optional<gpu_state_summary>& g, json_allocator& a) {
    if (!g) return Value();
    json_object v(a);
    v.add("source", g->source).add("note", g->note).add("cases", g->cases);
    v.add("sm_clock_min_mhz", g->sm_clock_min_mhz).add("sm_clock_max_mhz", g->sm_clock_max_mhz);
    v.add("mem_clock_min_mhz", g->mem_clock_min_mhz).add("mem_clock_max_mhz", g->mem_clock_max_mhz);
    v.add("max_temperature_c", g->max_temperature_c).add("max_power_w", g->max_power_w);
    v.add("power_limit_w", g->power_limit_w);
    v.add("throttled_cases", static_cast<int>(g->throttled.size()));
    v.add("throttle_reasons", g->throttle_reasons);
    json_array list(a);
    for (const throttled_case& c : g->throttled) {
        json_object e(a);
        e.add("iteration", c.iteration).add("attempt", c.attempt).add("label", c.label);
        list.push(e.add("case", c.case_name).add("reasons", c.reasons));
    }
    return v.add("throttled", list).take();
}

std::optional<gpu_state_summary> gpu_state_from_json(const json_field& v) {
    if (!v.is_object()) return std::nullopt;
    gpu_state_summary g{v.optional_text("source"),
                        v.optional_text("note"),
                        v.optional_integer<int>("cases").value_or(0),
                        v.optional_integer<int>("sm_clock_min_mhz"),
                        v.optional_integer<int>("sm_clock_max_mhz"),
                        v.optional_integer<int>("mem_clock_min_mhz"),
                        v.optional_integer<int>("mem_clock_max_mhz"),
                        v.optional_integer<int>("max_temperature_c"),
                        v.optional_number("max_power_w"),
                        v.optional_number("power_limit_w"),
                        v.optional_texts("throttle_reasons"),
                        {}};
    if (const std::optional<json_field> list = v.find("throttled"))
        for (const json_field& e : list->items())
            g.throttled.push_back({e.optional_integer<int>("iteration").value_or(0),
                                   e.optional_integer<int>("attempt").value_or(0),
                                   e.optional_text("label").value_or(""),
                                   e.optional_text("case").value_or(""),
                                   e.optional_texts("reasons")});
    return g;
}

void add_case_timing(Value& entry, const case_evaluation& ce, json_allocator& a) {
    const response_timing_details& d = ce.timing;
    auto word = [](const char* name) { return Value(rapidjson::StringRef(name)); };
    json_object e(entry, a);
    e.add("iterations", ce.iterations);
    e.add("timer", d.timer ? word(k_response_timer_kinds.name(*d.timer)) : Value());
    e.add("timer_note", d.timer_note);
    e.add("stop_rule", d.stop_rule ? word(k_response_stop_rules.name(*d.stop_rule)) : Value());
    e.add("relative_standard_error", d.relative_standard_error);
    e.add("cupti_median_ms", d.cupti ? std::optional<double>(d.cupti->median_ms) : std::nullopt);
    e.add("events_median_ms", d.events ? std::optional<double>(d.events->median_ms) : std::nullopt);
    e.add("event_overhead_ms", d.event_overhead_ms).add("channels_agree", d.channels_agree);
    Value gpu;
    if (d.gpu_state) {
        json_object g(a);
        g.add("throttled", d.gpu_state->throttled);
        g.add("throttle_reasons", d.gpu_state->throttle_reasons);
        g.add("before", reading_json(d.gpu_state->before, a));
        gpu = g.add("after", reading_json(d.gpu_state->after, a)).take();
    }
    e.add("gpu_state", std::move(gpu));
}

}  // namespace cuopt
