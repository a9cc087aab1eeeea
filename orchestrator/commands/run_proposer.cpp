// The run's proposer: which one, made before the run folder when it needs none (autotune,
// files), the model's once the folder exists, and on --resume what the model already spent.
#include <algorithm>
#include <iostream>

#include "common/cli_value_checks.hpp"
#include "common/device_list.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/commands/optimize_run.hpp"
#include "orchestrator/commands/run_failure.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> comma_list(const std::string& text) {
    std::vector<std::string> out = comma_items(text);
    out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
    return out;
}

// --nvidia-research's settings; the guide pages follow the device's architecture.
docs_settings docs_settings_of(const optimizer_options& o, const device_facts& device) {
    docs_settings d;
    d.allowed_hosts = comma_list(o.docs_hosts);
    d.guide_pages = o.docs_pages.empty() ? default_guide_pages(device.compute_capability)
                                         : comma_list(o.docs_pages);
    d.cache_dir = o.docs_cache.empty() ? default_docs_cache() : fs::path(o.docs_cache);
    d.max_fetches = o.docs_max_fetches;
    d.max_result_chars = static_cast<std::size_t>(o.docs_max_chars);
    return d;
}

}  // namespace

void choose_proposer(run_context& c) {
    c.model = read_model_config(c.o);
    const bool configured = c.model.configured;
    const std::string& p = c.o.proposer;
    if (p == "auto")
        c.kind = configured ? proposer_kind::llm : proposer_kind::autotune;
    else if (const auto k = k_proposer_kinds.parse(p);
             k && *k != proposer_kind::initial && *k != proposer_kind::reference)
        c.kind = *k;
    else
        throw run_failure(
            exit_code::usage,
            "--proposer: expected auto, llm, autotune or files, got " + quote_value(p));
    if (c.kind == proposer_kind::llm && !configured)
        throw run_failure(exit_code::usage,
                          "--proposer llm needs a key: set " + c.model.key_name +
                              " (or put it in ./.env), or give --base-url for a local server");
    c.info.proposer = c.kind;
}

void make_offline_proposer(run_context& c) {
    if (c.kind == proposer_kind::files && c.o.candidates.empty())
        throw run_failure(exit_code::usage, "--proposer files needs --candidates DIR");
    c.model.prices = read_price_table(c.o);
    try {
        if (c.kind == proposer_kind::autotune)
            c.prop = make_autotune_proposer(*c.contract, c.o.seed, c.o.batch,
                                            c.info.device.max_threads_per_block);
        else if (c.kind == proposer_kind::files)
            c.prop = make_files_proposer(c.o.candidates);
    } catch (const std::exception& e) {
        throw run_failure(exit_code::usage, e.what());
    }
    // Warnings about the model's flags are printed even with --quiet, as every warning is.
    if (c.kind == proposer_kind::llm)
        for (const std::string& note : c.model.notes)
            std::cerr << "cuda-optimizer: warning: " << note << "\n";
    if (c.o.quiet) return;
    std::cerr << "cuda-optimizer: proposer " << to_string(c.kind);
    const llm_settings& m = c.model.settings;
    if (c.kind == proposer_kind::llm)
        std::cerr << " (" << k_llm_providers.name(m.provider) << ", " << m.model << ", "
                  << api_name(m) << " API at " << api_url(m)
                  << (m.reasoning_effort.empty() ? "" : ", effort " + m.reasoning_effort)
                  << (m.thinking_budget > 0
                          ? ", thinking budget " + std::to_string(m.thinking_budget)
                      : m.adaptive_thinking ? ", adaptive thinking"
                                            : "")
                  << ")";
    else if (c.o.proposer == "auto")
        std::cerr << " (auto: no model is configured)";
    std::cerr << "\n";
}

void make_model_proposer(run_context& c) {
    const optimizer_options& o = c.o;
    if (c.kind != proposer_kind::llm) {
        if (o.nvidia_research || o.use_nsight)
            std::cerr << "cuda-optimizer: warning: --nvidia-research and --use-nsight are model "
                         "tools; the "
                      << to_string(c.kind) << " proposer does not use them\n";
        return;
    }
    c.transport = make_curl_transport();
    c.client = std::make_unique<llm_client>(
        c.model.settings, c.model.api_key, *c.transport, retry_settings{},
        llm_budget{o.max_model_calls, o.max_tokens_total}, c.run);
    llm_proposer_settings ls;
    ls.description = o.description;
    ls.signature = o.signature;
    ls.device = c.info.device;
    ls.work_folder = c.run / "model-compile";
    if (o.nvidia_research) {
        c.docs = std::make_unique<docs_library>(
            docs_settings_of(o, c.info.device), *c.transport, [&c](const docs_exchange& e) {
                c.client->record_tool_exchange("nvidia_docs", e.request_json, e.response_json);
            });
        ls.docs = c.docs.get();
    }
    profile_function profile;
    if (o.use_nsight) {
        c.profiler = std::make_unique<ncu_profiler>(*c.contract, *c.evaluator, *c.runner, o.harness,
                                                    c.run, milliseconds_of(o.profile_timeout_s));
        profile = [&c](const search_state& s, const std::string& case_name) {
            return c.profiler->profile(s.best ? s.history[*s.best].cand : s.initial, case_name);
        };
    }
    c.prop = make_llm_proposer(*c.contract, *c.client, *c.evaluator, ls, profile);
}

void restore_spending(run_context& c) {
    if (!c.client) return;
    const recorded_spending spent = read_recorded_spending(c.run);
    c.client->restore(spent);
    if (c.docs) c.docs->restore_fetches(spent.docs_fetches);
}

}  // namespace cuopt
