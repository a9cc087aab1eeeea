#pragma once
/// Which model the run talks to, with which key and at which prices: the --provider,
/// --model and --base-url flags, the environment and ./.env (the environment wins),
/// and the config's price table. Also the model block that summary.json and run.json
/// carry at the end (usage and estimated cost; never the key).

#include <string>
#include <vector>

#include "orchestrator/commands/optimizer_options.hpp"
#include "orchestrator/model/llm_client.hpp"

namespace cuopt {

struct model_config {
    llm_settings settings;
    std::string api_key;      // from the environment or ./.env; never written anywhere
    std::string key_name;     // OPENAI_API_KEY or ANTHROPIC_API_KEY
    bool configured = false;  // a key or a base URL is set: --proposer auto picks the model
    price_table prices;
    std::vector<std::string> notes;  // one-line warnings for the start of a model run
};

/// "responses", "chat" or "messages": the API a run's requests go to.
std::string api_name(const llm_settings& s);

/// The endpoint the requests go to, any credential in it redacted.
std::string api_url(const llm_settings& s);

/// The limit a cut reply is retried with once: `flag` < 0 is auto (twice the limit, at most
/// 64000, on the provider's own host; never for another server), 0 never, else more than the
/// limit (run_failure(usage) otherwise).
int retry_output_tokens(int flag, int max_output_tokens, bool other_server);

/// Reads the model settings (provider, model, key, base URL) and checks the model flags against
/// the table of model families (model_families.hpp): a flag the model refuses is a
/// run_failure(usage) naming the flag and what the model takes. The prices stay empty.
model_config read_model_config(const optimizer_options& o);

/// The config's price table; throws run_failure(usage) when it is malformed.
price_table read_price_table(const optimizer_options& o);

/// {"provider", "model", "calls", "*_tokens", "estimated_cost_usd"} as JSON text.
std::string model_usage_json(const llm_client& client, const price_table& prices);

}  // namespace cuopt
