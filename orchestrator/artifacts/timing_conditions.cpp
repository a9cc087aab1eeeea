#include "orchestrator/artifacts/timing_conditions.hpp"

#include <algorithm>
#include <set>

#include "common/json_document.hpp"

namespace cuopt {

using rapidjson::Value;
using allocator = rapidjson::Document::AllocatorType;

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

Value text_or_null(const std::optional<std::string>& s, allocator& a) {
    return s ? json_text(*s, a) : Value();
}

Value integer_or_null(const std::optional<int>& v) {
    return v ? Value(*v) : Value();
}

Value texts(const std::vector<std::string>& v, allocator& a) {
    Value out(rapidjson::kArrayType);
    for (const std::string& s : v) out.PushBack(json_text(s, a), a);
    return out;
}

Value reading_json(const std::optional<response_gpu_reading>& r, allocator& a) {
    if (!r) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("sm_clock_mhz", integer_or_null(r->sm_clock_mhz), a);
    v.AddMember("mem_clock_mhz", integer_or_null(r->mem_clock_mhz), a);
    v.AddMember("temperature_c", integer_or_null(r->temperature_c), a);
    v.AddMember("power_w", json_number(r->power_w), a);
    v.AddMember("power_limit_w", json_number(r->power_limit_w), a);
    v.AddMember("throttle_reasons", texts(r->throttle_reasons, a), a);
    return v;
}

// An object's member of one kind, or nothing (absent, null or another kind).
const Value* member_of(const Value& v, const char* key) {
    const auto it = v.FindMember(key);
    return it == v.MemberEnd() ? nullptr : &it->value;
}
std::optional<int> int_member(const Value& v, const char* key) {
    const Value* x = member_of(v, key);
    return x && x->IsInt() ? std::optional<int>(x->GetInt()) : std::nullopt;
}
std::optional<double> number_member(const Value& v, const char* key) {
    const Value* x = member_of(v, key);
    return x && x->IsNumber() ? std::optional<double>(x->GetDouble()) : std::nullopt;
}
std::optional<std::string> text_member(const Value& v, const char* key) {
    const Value* x = member_of(v, key);
    return x && x->IsString() ? std::optional<std::string>(x->GetString()) : std::nullopt;
}
std::vector<std::string> texts_member(const Value& v, const char* key) {
    std::vector<std::string> out;
    if (const Value* x = member_of(v, key); x && x->IsArray())
        for (const Value& e : x->GetArray())
            if (e.IsString()) out.emplace_back(e.GetString());
    return out;
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

Value timer_json(const std::optional<timer_use>& t, allocator& a) {
    if (!t) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("name", json_text(t->name, a), a);
    v.AddMember("note", text_or_null(t->note, a), a);
    v.AddMember("library", text_or_null(t->library, a), a);
    Value cases(rapidjson::kObjectType);
    for (const auto& [name, n] : t->cases) cases.AddMember(json_text(name, a), Value(n), a);
    v.AddMember("cases", cases, a);
    v.AddMember("event_overhead_ms_median", json_number(t->median_event_overhead_ms), a);
    v.AddMember("channels_disagree", t->channels_disagree, a);
    return v;
}

Value gpu_state_json(const std::optional<gpu_state_summary>& g, allocator& a) {
    if (!g) return Value();
    Value v(rapidjson::kObjectType);
    v.AddMember("source", text_or_null(g->source, a), a);
    v.AddMember("note", text_or_null(g->note, a), a);
    v.AddMember("cases", g->cases, a);
    v.AddMember("sm_clock_min_mhz", integer_or_null(g->sm_clock_min_mhz), a);
    v.AddMember("sm_clock_max_mhz", integer_or_null(g->sm_clock_max_mhz), a);
    v.AddMember("mem_clock_min_mhz", integer_or_null(g->mem_clock_min_mhz), a);
    v.AddMember("mem_clock_max_mhz", integer_or_null(g->mem_clock_max_mhz), a);
    v.AddMember("max_temperature_c", integer_or_null(g->max_temperature_c), a);
    v.AddMember("max_power_w", json_number(g->max_power_w), a);
    v.AddMember("power_limit_w", json_number(g->power_limit_w), a);
    v.AddMember("throttled_cases", static_cast<int>(g->throttled.size()), a);
    v.AddMember("throttle_reasons", texts(g->throttle_reasons, a), a);
    Value list(rapidjson::kArrayType);
    for (const throttled_case& c : g->throttled) {
        Value e(rapidjson::kObjectType);
        e.AddMember("iteration", c.iteration, a);
        e.AddMember("attempt", c.attempt, a);
        e.AddMember("label", json_text(c.label, a), a);
        e.AddMember("case", json_text(c.case_name, a), a);
        e.AddMember("reasons", texts(c.reasons, a), a);
        list.PushBack(e, a);
    }
    v.AddMember("throttled", list, a);
    return v;
}

std::optional<gpu_state_summary> gpu_state_from_json(const Value& v) {
    if (!v.IsObject()) return std::nullopt;
    gpu_state_summary g;
    g.source = text_member(v, "source");
    g.note = text_member(v, "note");
    g.cases = int_member(v, "cases").value_or(0);
    g.sm_clock_min_mhz = int_member(v, "sm_clock_min_mhz");
    g.sm_clock_max_mhz = int_member(v, "sm_clock_max_mhz");
    g.mem_clock_min_mhz = int_member(v, "mem_clock_min_mhz");
    g.mem_clock_max_mhz = int_member(v, "mem_clock_max_mhz");
    g.max_temperature_c = int_member(v, "max_temperature_c");
    g.max_power_w = number_member(v, "max_power_w");
    g.power_limit_w = number_member(v, "power_limit_w");
    g.throttle_reasons = texts_member(v, "throttle_reasons");
    const auto list = v.FindMember("throttled");
    if (list != v.MemberEnd() && list->value.IsArray())
        for (const Value& e : list->value.GetArray()) {
            if (!e.IsObject()) continue;
            g.throttled.push_back(
                {int_member(e, "iteration").value_or(0), int_member(e, "attempt").value_or(0),
                 text_member(e, "label").value_or(""), text_member(e, "case").value_or(""),
                 texts_member(e, "reasons")});
        }
    return g;
}

void add_case_timing(Value& entry, const case_evaluation& ce, allocator& a) {
    const response_timing_details& d = ce.timing;
    auto word = [](const char* name) { return Value(rapidjson::StringRef(name)); };
    entry.AddMember("iterations", integer_or_null(ce.iterations), a);
    entry.AddMember("timer", d.timer ? word(k_response_timer_kinds.name(*d.timer)) : Value(), a);
    entry.AddMember("timer_note", text_or_null(d.timer_note, a), a);
    entry.AddMember("stop_rule",
                    d.stop_rule ? word(k_response_stop_rules.name(*d.stop_rule)) : Value(), a);
    entry.AddMember("relative_standard_error", json_number(d.relative_standard_error), a);
    entry.AddMember("cupti_median_ms", d.cupti ? Value(d.cupti->median_ms) : Value(), a);
    entry.AddMember("events_median_ms", d.events ? Value(d.events->median_ms) : Value(), a);
    entry.AddMember("event_overhead_ms", json_number(d.event_overhead_ms), a);
    entry.AddMember("channels_agree", d.channels_agree ? Value(*d.channels_agree) : Value(), a);
    Value gpu;
    if (d.gpu_state) {
        gpu.SetObject();
        gpu.AddMember("throttled", d.gpu_state->throttled, a);
        gpu.AddMember("throttle_reasons", texts(d.gpu_state->throttle_reasons, a), a);
        gpu.AddMember("before", reading_json(d.gpu_state->before, a), a);
        gpu.AddMember("after", reading_json(d.gpu_state->after, a), a);
    }
    entry.AddMember("gpu_state", gpu, a);
}

}  // namespace cuopt
