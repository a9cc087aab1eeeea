// libFuzzer target: the OpenAI (Chat Completions and Responses) and Anthropic reply decoders,
// on whatever a server sends.
#include <string>

#include "orchestrator/model/llm_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    for (const auto provider : {cuopt::llm_provider::openai, cuopt::llm_provider::anthropic}) {
        try {
            cuopt::parse_model_reply(provider, body);
        } catch (const cuopt::model_protocol_error&) {
        }
    }
    try {
        cuopt::parse_responses_reply(body);
    } catch (const cuopt::model_protocol_error&) {
    }
    return 0;
}
