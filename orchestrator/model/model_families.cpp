#include "orchestrator/model/model_families.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace cuopt {

namespace {

constexpr auto anthropic = llm_provider::anthropic;
constexpr auto openai = llm_provider::openai;

// Checked 2026-12-07 against the providers' documentation (docs/MODELS.md quotes it):
//  Anthropic: platform.claude.com/docs/about-claude/models (thinking, default effort),
//    .../build-with-claude/thinking-troubleshooting (which thinking form each model refuses),
//    .../build-with-claude/effort (output_config.effort; xhigh not on the 4.6 models),
//    .../models/sonnet-5-5/whats-new-sonnet-5-5 and migration-guide (budgets and sampling
//    parameters are a 400),
//    .../api/versioning and .../api/migration-2026-10-21 (2026-10-21 removes temperature,
//    top_p and top_k; 2023-06-01 is still accepted: families that take a temperature keep it).
//  OpenAI: developers.openai.com/api/docs/models/gpt-6.1-terra (effort none..max, default
//    medium, tools need Responses), .../guides/deployment-checklist (temperature only with
//    effort none), .../deprecations (gpt-5 family shuts down 2026-12-11).
const std::vector<model_family>& table() {
    using S = sampling;
    using T = thinking_form;
    const auto A = anthropic;
    const auto O = openai;
    const auto R = chat_tools::refused;   // OpenAI: tools need Responses
    const auto C = chat_tools::accepted;  // (Anthropic rows: not used)
    const auto N = chat_tools::without_reasoning;
    static const std::vector<std::string> low_to_max = {"low", "medium", "high", "xhigh", "max"};
    static const std::vector<std::string> none_to_max = {"none", "low",   "medium",
                                                         "high", "xhigh", "max"};
    static const std::vector<std::string> low_to_xhigh = {"low", "medium", "high", "xhigh"};
    static const std::vector<std::string> no_xhigh = {"low", "medium", "high", "max"};
    static const std::vector<std::string> none_to_high = {"none", "low", "medium", "high"};
    static const std::vector<std::string> minimal_to_high = {"minimal", "low", "medium", "high"};
    const std::string v2026 = "2026-10-21", v2023 = k_anthropic_version_2023;
    // clang-format off
    static const std::vector<model_family> families = {
        // id, provider, Chat tools, thinking, on by default, efforts, default effort,
        // temperature, anthropic-version, shuts down, replacement
        {"claude-fable-5",    A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-mythos-5",   A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-fable-5-1",  A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-mythos-5-1", A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-fable-5-2",  A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-mythos-5-2", A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-opus-5-5",   A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-sonnet-5-5", A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-haiku-5-5",  A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-opus-5",     A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-sonnet-5",   A, C, T::adaptive, true,  low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-opus-4-8",   A, C, T::adaptive, false, low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-opus-4-7",   A, C, T::adaptive, false, low_to_max, "", S::refused,  v2026, "", ""},
        {"claude-opus-4-6",   A, C, T::either,   false, no_xhigh,   "", S::accepted, v2023, "", ""},
        {"claude-sonnet-4-6", A, C, T::either,   false, no_xhigh,   "", S::accepted, v2023, "", ""},
        {"claude-haiku-4-5",  A, C, T::budget,   false, {},         "", S::accepted, v2023, "", ""},
        {"gpt-6.2-sol",   O, R, T::none, false, low_to_xhigh,    "medium", S::refused,           "", "", ""},
        {"gpt-6.2-astra", O, R, T::none, false, low_to_xhigh,    "medium", S::refused,           "", "", ""},
        {"gpt-6.1-terra", O, R, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-6.1-sol",   O, R, T::none, false, low_to_max,      "medium", S::refused,           "", "", ""},
        {"gpt-6-astra",   O, R, T::none, false, low_to_max,      "medium", S::refused,           "", "", ""},
        {"gpt-6-sol",     O, N, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-6-luna",    O, N, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-5.6-sol",   O, N, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-5.6-terra", O, N, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-5.6-luna",  O, N, T::none, false, none_to_max,     "medium", S::without_reasoning, "", "", ""},
        {"gpt-5.1",       O, C, T::none, false, none_to_high,    "",       S::without_reasoning, "", "2027-04-01", ""},
        {"gpt-5",         O, C, T::none, false, minimal_to_high, "medium", S::refused, "", "2026-12-11", "gpt-6.1-sol"},
        {"gpt-5-mini",    O, C, T::none, false, minimal_to_high, "medium", S::refused, "", "2026-12-11", "gpt-6.1-terra"},
        {"gpt-5-nano",    O, C, T::none, false, minimal_to_high, "medium", S::refused, "", "2026-12-11", "gpt-6-luna"},
    };
    // clang-format on
    return families;
}

// "", "-latest", "-20251001" or "-2025-08-07": the same model, named by a snapshot.
bool is_snapshot_suffix(const std::string& rest) {
    if (rest.empty() || rest == "-latest") return true;
    static const std::regex date(R"(-(\d{8}|\d{4}-\d{2}-\d{2}))");
    return std::regex_match(rest, date);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace

const std::vector<model_family>& model_families() {
    return table();
}

std::optional<model_family> find_model_family(llm_provider provider, const std::string& model) {
    const model_family* best = nullptr;
    for (const model_family& f : table())
        if (f.provider == provider && model.rfind(f.prefix, 0) == 0 &&
            is_snapshot_suffix(model.substr(f.prefix.size())))
            best = &f;
    if (!best) return std::nullopt;
    return *best;
}

bool is_provider_host(llm_provider provider, const std::string& base_url) {
    std::string url = lower(base_url);
    const std::string scheme = "https://";
    if (url.rfind(scheme, 0) != 0) return false;
    url = url.substr(scheme.size());
    const std::string authority = url.substr(0, url.find_first_of("/?#"));
    if (authority.find('@') != std::string::npos) return false;  // credentials: not plain
    std::string host = authority;
    if (const std::size_t colon = authority.rfind(':'); colon != std::string::npos) {
        if (authority.substr(colon + 1) != "443") return false;
        host = authority.substr(0, colon);
    }
    while (!host.empty() && host.back() == '.') host.pop_back();
    const std::string path = url.substr(authority.size());
    if (path != "" && path != "/" && path != "/v1" && path != "/v1/") return false;
    if (provider == llm_provider::anthropic) return host == "api.anthropic.com";
    // OpenAI's data-residency hosts are its own too (developers.openai.com/api/docs/guides/
    // data-residency; "ae" from the Node SDK's data-residency.ts).
    static const char* const regions[] = {"", "us.", "eu.", "au.", "in.", "jp.", "ae."};
    for (const char* region : regions)
        if (host == std::string(region) + "api.openai.com") return true;
    return false;
}

std::string word_list(const std::vector<std::string>& words, const char* last_joint) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i)
        out += (i == 0 ? "" : i + 1 == words.size() ? last_joint : ", ") + words[i];
    return out;
}

}  // namespace cuopt
