#include "orchestrator/proposers/llm_proposer.hpp"

#include <rapidjson/document.h>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "orchestrator/evaluation/compile_log.hpp"
#include "orchestrator/proposers/candidate_reader.hpp"

namespace cuopt {

namespace {

// The most a reply's text or one tool call's arguments may hold: each is sent back to the model
// with every later turn of the conversation, so a flood would be paid for again and again. A
// kernel's source is tens of KiB.
constexpr std::size_t k_max_echoed_bytes = std::size_t{256} << 10;

// A reply stopped by the output limit: Chat Completions' "length", Anthropic's "max_tokens",
// the Responses API's "incomplete: max_output_tokens". Any other reason a reply is incomplete
// (max_messages, steered, ...) is no cut that more output tokens would mend.
bool truncated(const model_reply& r) {
    return r.stop_reason == "length" || r.stop_reason == "max_tokens" ||
           r.stop_reason == "incomplete: max_output_tokens";
}

const char* k_system =
    "You are a CUDA performance engineer. You improve one kernel at a time for the GPU described. "
    "Keep the kernel's name and signature, compute the same function for every valid input "
    "(outputs are "
    "checked element by element against an independent oracle, on fresh random inputs, after "
    "poisoning), "
    "and make it faster. Use the compile tool to check a source before submitting; submit exactly "
    "one "
    "candidate per iteration with submit_candidate.";

const char* k_compile_schema =
    R"({"type": "object", "required": ["source"], "additionalProperties": false,
  "properties": {"source": {"type": "string"}, "defines": {"type": "object"},
                 "compile_options": {"type": "array", "items": {"type": "string"}}}})";

const char* k_docs_schema =
    R"({"type": "object", "additionalProperties": false,
  "properties": {"query": {"type": "string", "description": "words to search the guides for"},
                 "url": {"type": "string", "description": "a documentation page, or page#anchor"}}})";

const char* k_profile_schema =
    R"({"type": "object", "required": ["case"], "additionalProperties": false,
  "properties": {"case": {"type": "string"}}})";

std::string compile_report(const compile_summary& c, std::size_t budget) {
    std::string s = c.ok ? "compiled." : "did not compile.";
    if (c.registers) s += " registers " + std::to_string(*c.registers);
    if (c.static_shared_bytes)
        s += ", static shared " + std::to_string(*c.static_shared_bytes) + " B";
    if (c.spill_store_bytes) s += ", spill stores " + std::to_string(*c.spill_store_bytes) + " B";
    if (!c.log.empty()) s += "\nlog:\n" + trim_compile_log(c.log, budget);
    return s;
}

class llm_proposer final : public proposer {
  public:
    llm_proposer(const manifest& m, llm_client& client, const attempt_evaluator& evaluator,
                 llm_proposer_settings s, profile_function profile)
        : m_manifest(m),
          m_client(client),
          m_evaluator(evaluator),
          m_settings(std::move(s)),
          m_profile(std::move(profile)) {
        m_tools.push_back(
            {"compile",
             "Compile a source with NVRTC for the target GPU (no run): returns the log, registers, "
             "static shared memory and spills.",
             k_compile_schema});
        m_tools.push_back({"submit_candidate",
                           "Submit this iteration's candidate; ends the iteration.",
                           std::string(embedded_schema("candidate"))});
        if (m_profile)
            m_tools.push_back(
                {"profile",
                 "Profile the current best kernel on one case with Nsight Compute: duration, "
                 "occupancy, SM and DRAM throughput, L1/L2 hit rates, registers, stall reasons.",
                 k_profile_schema});
        if (m_settings.docs)
            m_tools.push_back(
                {"nvidia_docs",
                 "Read NVIDIA's CUDA documentation (the CUDA C++ Programming Guide, the Best "
                 "Practices Guide, the PTX ISA, the device's tuning guide). Give either query "
                 "(words; returns the best-matching sections with their URLs) or url (a page, or "
                 "page#anchor for one section). Only NVIDIA documentation hosts are read.",
                 k_docs_schema});
    }

    std::vector<candidate> propose(const search_state& s) override {
        m_client.set_iteration(s.iteration);
        std::vector<chat_turn> turns = {chat_turn::from_user(describe_for_model(s, m_settings))};
        int tool_calls = 0, corrections = 0;
        int output_limit = 0;  // 0: the settings' limit; a cut reply raises it once
        m_retry_note.clear();
        while (true) {
            std::optional<model_reply> answer = ask(turns, output_limit, corrections);
            if (!answer) {
                if (corrections > m_settings.max_corrections)
                    return {rejected(s, "unreadable reply: " + m_unreadable)};
                continue;
            }
            model_reply& reply = *answer;
            const int retry_limit = m_client.settings().retry_output_tokens;
            if (reply.calls.empty() && truncated(reply) && retry_limit > 0 && output_limit == 0) {
                output_limit = retry_limit;  // the same request once more, with room to finish
                m_retry_note =
                    " (a reply cut at " + std::to_string(m_client.settings().max_output_tokens) +
                    " output tokens was sent again with " + std::to_string(retry_limit) + ")";
                continue;
            }
            // What goes back to the model on every later turn: never more than a source's worth.
            if (const std::string why = oversized_reply(reply); !why.empty())
                return {rejected(s, why)};
            turns.push_back({chat_turn::role::assistant, reply.text, reply.calls, "", "",
                             reply.raw_items_json, false});
            if (reply.calls.empty()) {
                if (reply.stop_reason == "refusal")
                    return {rejected(s, "the model refused: " + reply.text)};
                // Anthropic: input and output no longer fit the context; a correction would
                // only make the conversation longer.
                if (reply.stop_reason == "model_context_window_exceeded")
                    return {rejected(s,
                                     "the conversation outgrew the model's context window "
                                     "(model_context_window_exceeded)")};
                const bool cut = truncated(reply);
                if (++corrections > m_settings.max_corrections)
                    return {rejected(
                        s, cut ? "replies cut at the output limit (" +
                                     std::to_string(output_limit > 0
                                                        ? output_limit
                                                        : m_client.settings().max_output_tokens) +
                                     " tokens, --max-output-tokens" +
                                     (output_limit > 0 ? "-retry" : "") + ") before a tool call"
                               : "no tool call after corrections")};
                turns.push_back(chat_turn::from_user(
                    cut ? "Your reply was cut at the output limit before any tool call. Be brief: "
                          "call compile or submit_candidate now, with the source and little else."
                        : "That was not a tool call. Call compile to check a source, or "
                          "submit_candidate to submit."));
                continue;
            }
            for (const tool_call& call : reply.calls) {
                if (++tool_calls > m_settings.max_tool_calls)
                    return {rejected(s, "no submission within " +
                                            std::to_string(m_settings.max_tool_calls) +
                                            " tool calls")};
                std::string result;
                std::optional<candidate> submitted;
                bool problem = handle(s, call, result, submitted);
                if (submitted) return {*submitted};
                if (problem && ++corrections > m_settings.max_corrections)
                    return {rejected(s, "after " + std::to_string(m_settings.max_corrections) +
                                            " corrections: " + result)};
                turns.push_back(
                    {chat_turn::role::tool_result, result, {}, call.id, call.name, "", problem});
            }
        }
    }

  private:
    // "" when the reply's text and each tool call's arguments fit k_max_echoed_bytes (they are
    // sent back with every later turn); else why not, in one line.
    static std::string oversized_reply(const model_reply& reply) {
        for (const tool_call& call : reply.calls)
            if (call.arguments_json.size() > k_max_echoed_bytes)
                return "a " + call.name.substr(0, 64) + " call's arguments were " +
                       std::to_string(call.arguments_json.size()) + " bytes, over the " +
                       std::to_string(k_max_echoed_bytes >> 10) + " KiB a call may carry";
        if (reply.text.size() > k_max_echoed_bytes)
            return "the reply's text was " + std::to_string(reply.text.size()) +
                   " bytes, over the " + std::to_string(k_max_echoed_bytes >> 10) +
                   " KiB a reply may carry";
        return "";
    }

    // One model call. A reply the client cannot read adds a correction turn (counted) and gives
    // nullopt; budget and API failures end the run.
    std::optional<model_reply> ask(std::vector<chat_turn>& turns, int output_limit,
                                   int& corrections) {
        try {
            return m_client.send(k_system, turns, m_tools, output_limit);
        } catch (const llm_budget_exhausted& e) {
            throw proposer_stop(stop_reason::budget_exhausted, e.what());
        } catch (const llm_api_error& e) {
            throw proposer_stop(stop_reason::error,
                                std::string("the model API failed: ") + e.what());
        } catch (const model_protocol_error& e) {
            ++corrections;
            m_unreadable = e.what();
            turns.push_back(
                chat_turn::from_user(std::string("Your last reply could not be read (") + e.what() +
                                     "). Reply with a tool call."));
            return std::nullopt;
        }
    }

    candidate rejected(const search_state& s, const std::string& why) const {
        candidate c = s.initial;
        c.proposer = proposer_kind::llm;
        c.label = "rejected submission";
        c.rejected = why + m_retry_note;
        return c;
    }

    // Returns true when the call was a problem that costs a correction; fills `submitted` on
    // success.
    bool handle(const search_state& s, const tool_call& call, std::string& result,
                std::optional<candidate>& submitted) {
        rapidjson::Document args;
        const std::string why = try_parse_json(args, call.arguments_json);
        if (!why.empty() || !args.IsObject()) {
            result = "error: the arguments of " + call.name + " are not a JSON object" +
                     (why.empty() ? "" : " (" + why + ")");
            return true;
        }
        if (call.name == "compile") {
            candidate c = candidate_from(s, args);
            const std::string bad =
                apply_candidate_json(c, args, m_manifest, k_compile_schema, "compile arguments");
            result = bad.empty() ? compile_report(m_evaluator.compile_only(c, scratch()),
                                                  m_settings.log_budget_chars)
                                 : "error: " + bad;
            return !bad.empty();
        }
        if (call.name == "profile" && m_profile) {
            result = m_profile(s, text_of(args, "case"));
            return false;
        }
        if (call.name == "nvidia_docs" && m_settings.docs) {
            try {
                result = m_settings.docs->answer(args);
                return false;
            } catch (const docs_error& e) {
                result = std::string("error: ") + e.what();
                return true;
            }
        }
        if (call.name != "submit_candidate") {
            result = "error: no tool named " + quote_value(call.name);
            return true;
        }
        candidate c = candidate_from(s, args);
        if (const std::string bad = apply_candidate_json(
                c, args, m_manifest, embedded_schema("candidate"), "submit_candidate arguments");
            !bad.empty()) {
            result = "error: " + bad;
            return true;
        }
        const compile_summary compiled = m_evaluator.compile_only(c, scratch());
        if (!compiled.ok) {
            result = "error: the submitted source " +
                     compile_report(compiled, m_settings.log_budget_chars);
            return true;
        }
        c.rationale += m_retry_note;
        submitted = c;
        return false;
    }

    // The current best, as the base a model's source and fields replace.
    candidate candidate_from(const search_state& s, const rapidjson::Value& args) const {
        candidate c = s.best ? s.history[*s.best].cand : s.initial;
        c.proposer = proposer_kind::llm;
        c.source = text_of(args, "source");
        c.parent_iteration =
            s.best ? std::optional<int>(s.history[*s.best].iteration) : std::nullopt;
        c.label = "iteration " + std::to_string(s.iteration);
        c.launch.reset();
        c.case_launch.clear();
        return c;
    }

    std::filesystem::path scratch() {
        return m_settings.work_folder / ("compile-" + std::to_string(++m_compiles));
    }

    const manifest& m_manifest;
    llm_client& m_client;
    const attempt_evaluator& m_evaluator;
    llm_proposer_settings m_settings;
    profile_function m_profile;
    std::vector<tool_spec> m_tools;
    int m_compiles = 0;
    std::string m_unreadable;  // why the last reply could not be read
    std::string m_retry_note;  // this iteration's cut-and-retried reply, for the rationale
};

}  // namespace

std::unique_ptr<proposer> make_llm_proposer(const manifest& m, llm_client& client,
                                            const attempt_evaluator& evaluator,
                                            llm_proposer_settings settings,
                                            profile_function profile) {
    return std::make_unique<llm_proposer>(m, client, evaluator, std::move(settings),
                                          std::move(profile));
}

}  // namespace cuopt
