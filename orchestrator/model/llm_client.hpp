#pragma once
/// One conversation partner: sends a conversation to the configured model API through
/// the retry policy, enforces the run's budget (model calls, total tokens) before each
/// call, keeps usage totals, and writes every exchange as model-NNN.json with every
/// credential removed. Failures are typed so the search can stop cleanly on them.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/model/llm_protocol.hpp"
#include "orchestrator/model/retry_policy.hpp"

namespace cuopt {

struct llm_budget {
    int max_calls = 0;               // 0: no cap
    long long max_tokens_total = 0;  // prompt + completion over the run; 0: no cap
};

struct llm_totals {
    int calls = 0;
    token_usage usage;
    long long reply_bytes = 0;  // the replies' bodies as received, over the run
};

/// What one model reply may hold, and all of a run's together: a longer body is cut there (one
/// line ends the search: llm_api_error; the run's total: llm_budget_exhausted), never held in
/// memory or recorded whole. A reply of the largest output a model family allows is a few MiB.
constexpr std::size_t k_max_reply_bytes = std::size_t{16} << 20;
constexpr long long k_max_run_reply_bytes = 256LL << 20;

/// The run's budget is spent: stop reason budget_exhausted.
class llm_budget_exhausted : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The API refused for good (a 4xx other than 429) or stayed unreachable after retries.
/// The API's own error message from an error body ({"error": {"message": ...}}), else its start.
std::string api_message(const std::string& body);

/// A 4xx that says the model does not exist (a 404 that mentions the model, model_not_found,
/// not_found_error about a model) or that `model` was retired; a bare 404 is a wrong endpoint
/// instead.
bool model_missing(const http_response& r, const std::string& model = "");

class llm_api_error : public std::runtime_error {
  public:
    llm_api_error(long status, const std::string& message)
        : std::runtime_error(message), m_status(status) {}
    long status() const { return m_status; }

  private:
    long m_status;
};

/// Per-model prices in US dollars per million tokens, from the config's price table.
struct model_price {
    double input_per_mtok = 0;
    double output_per_mtok = 0;
    std::optional<double> cached_input_per_mtok;  // absent: cached tokens at the input price
    /// Prompt-cache writes (Anthropic's cache_creation_input_tokens); absent: 1.25x the input
    /// price, Anthropic's rate for its five-minute cache (the only one this tool writes).
    std::optional<double> cache_write_per_mtok;
};
using price_table = std::map<std::string, model_price>;

/// Estimated cost of the totals; nullopt ("unknown", never 0) for a model not in the table.
/// Cached prompt tokens at the cached price, cache writes at the cache-write price, the rest of
/// the prompt at the input price, every completion token (thinking included) at the output price.
std::optional<double> estimate_cost(const price_table& prices, const std::string& model,
                                    const llm_totals& totals);

/// What the exchanges already recorded in a run folder (model-NNN.json) spent: resuming a run,
/// its budgets count from the run's start, not the resume's.
struct recorded_spending {
    llm_totals totals;     // model calls (answered or not) and the tokens of their replies
    int exchanges = 0;     // the highest NNN: numbering goes on after it
    int docs_fetches = 0;  // documentation pages fetched over the network (nvidia_docs)
};

/// Reads every model-NNN.json in `folder`; a file that does not parse is skipped.
recorded_spending read_recorded_spending(const std::filesystem::path& folder);

class llm_client {
  public:
    llm_client(llm_settings settings, std::string api_key, http_transport& transport,
               retry_settings retries, llm_budget budget, std::filesystem::path record_folder,
               sleeper sleep = {});

    /// One exchange. Throws llm_budget_exhausted (nothing sent), llm_api_error, or
    /// model_protocol_error (the reply was recorded but is not what the API documents).
    /// `max_output_tokens` > 0 replaces the settings' limit for this call (a retry of a cut
    /// reply).
    model_reply send(const std::string& system, const std::vector<chat_turn>& turns,
                     const std::vector<tool_spec>& tools, int max_output_tokens = 0);

    /// A tool's own exchange (the documentation tool's lookups), numbered with the model's in
    /// model-NNN.json and marked with `kind`.
    void record_tool_exchange(const std::string& tool, const std::string& request_json,
                              const std::string& response_json);

    /// The search iteration the next exchanges serve, recorded in their model-NNN.json.
    void set_iteration(int iteration) { m_iteration = iteration; }

    /// Resuming a run: its recorded exchanges count toward the budget, and new ones are
    /// numbered after them.
    void restore(const recorded_spending& spent) {
        m_totals = spent.totals;
        m_exchanges = spent.exchanges;
    }

    const llm_totals& totals() const { return m_totals; }
    const llm_settings& settings() const { return m_settings; }

  private:
    void record(const http_request& request, const exchange_result& result,
                const std::optional<model_reply>& reply, const std::string& error);

    llm_settings m_settings;
    std::string m_key;
    http_transport& m_transport;
    retry_settings m_retries;
    llm_budget m_budget;
    std::filesystem::path m_folder;
    sleeper m_sleep;
    void write_exchange(const std::string& json) const;

    llm_totals m_totals;
    int m_exchanges = 0;   // model calls and tool exchanges: the NNN of model-NNN.json
    int m_iteration = -1;  // the search iteration being proposed; -1 before the first
};

}  // namespace cuopt
