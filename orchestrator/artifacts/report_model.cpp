// The report's model section: each iteration's conversation (the last exchange's request holds
// every earlier turn, its reply the last), collapsed, with every exchange listed.
#include <map>
#include <sstream>

#include "common/html_text.hpp"
#include "common/json_document.hpp"
#include "orchestrator/artifacts/model_conversation.hpp"
#include "orchestrator/artifacts/report_sections.hpp"

namespace cuopt::report {

using rapidjson::Value;

namespace {

// Iteration -> its exchanges. Exchanges written before model-NNN.json named the iteration are
// grouped into conversations instead: one starts where the request holds no more turns than the
// one before (numbered from 1 in the order they ran, shown as "conversation N").
std::map<int, std::vector<const model_exchange_file*>> by_iteration(const run_folder& f,
                                                                    bool& guessed) {
    std::map<int, std::vector<const model_exchange_file*>> out;
    int conversation = 0;
    std::size_t last_turns = 0;
    guessed = false;
    for (const model_exchange_file& m : f.model_exchanges) {
        const std::size_t turns =
            request_turns(object_or_empty(object_or_empty(m.doc, "request"), "body")).size();
        if (!m.iteration && (turns <= last_turns || conversation == 0) &&
            text_of(m.doc, "kind") == "model")
            ++conversation;
        if (text_of(m.doc, "kind") == "model") last_turns = turns;
        guessed = guessed || !m.iteration;
        out[m.iteration ? *m.iteration : std::max(conversation, 1)].push_back(&m);
    }
    return out;
}

std::string exchange_line(const model_exchange_file& m) {
    const Value& usage = object_or_empty(m.doc, "usage");
    const std::string kind = text_of(m.doc, "kind");
    std::ostringstream o;
    o << "<li><code>" << html_escape(m.name) << "</code> " << html_escape(kind);
    if (kind == "model") {
        o << " &middot; HTTP "
          << html_escape(text_of(object_or_empty(m.doc, "response"), "http_status")) << " &middot; "
          << fixed(number_of(m.doc, "latency_ms").value_or(0) / 1000, 1) << " s &middot; "
          << grouped(integer_of(usage, "prompt_tokens").value_or(0)) << " in / "
          << grouped(integer_of(usage, "completion_tokens").value_or(0)) << " out &middot; stop "
          << html_escape(text_of(m.doc, "stop_reason"));
        if (const std::string e = text_of(m.doc, "error"); !e.empty())
            o << " &middot; <span class=\"bad-text\">" << html_escape(e) << "</span>";
    } else {
        o << " &middot; <span class=\"muted\">"
          << html_escape(to_compact_json(object_or_empty(m.doc, "request")).substr(0, 300))
          << "</span>";
    }
    return o.str() + "</li>\n";
}

std::string turn_html(const conversation_turn& t) {
    return "<div class=\"turn " + html_escape(t.role) + "\"><div class=\"who\">" +
           html_escape(t.role) + (t.kind == "text" ? "" : " &middot; " + html_escape(t.kind)) +
           "</div><pre>" + html_escape(t.text) + "</pre></div>\n";
}

std::string conversation_html(const std::vector<const model_exchange_file*>& exchanges) {
    const model_exchange_file* last = nullptr;
    for (const model_exchange_file* m : exchanges)
        if (text_of(m->doc, "kind") == "model") last = m;
    if (!last) return "";
    const Value& body = object_or_empty(object_or_empty(last->doc, "request"), "body");
    std::string out;
    for (const conversation_turn& t : request_turns(body))
        out += t.role == "system" ? "<details class=\"system\"><summary>system prompt</summary>" +
                                        turn_html(t) + "</details>\n"
                                  : turn_html(t);
    const Value& reply = object_or_empty(object_or_empty(last->doc, "response"), "body");
    for (const conversation_turn& t : reply_turns(reply)) out += turn_html(t);
    return out;
}

}  // namespace

std::string model_section(const report_context& c) {
    const run_folder& f = c.folder;
    std::ostringstream o;
    o << "<section id=\"model\"><h2>The model's conversation</h2>\n";
    if (f.model_exchanges.empty())
        return o.str() + "<p class=\"note\">No model was used in this run (proposer " +
               html_escape(text_of(f.run, "proposer")) +
               "): no model-NNN.json files.</p></section>\n";
    bool guessed = false;
    const auto groups = by_iteration(f, guessed);
    o << "<p class=\"muted\">" << f.model_exchanges.size()
      << " exchanges recorded as model-NNN.json. Each iteration is one conversation: shown as its "
         "last request sent it, then the last reply.</p>\n";
    for (const auto& [iteration, exchanges] : groups) {
        o << "<details class=\"iteration\"><summary>" << (guessed ? "Conversation " : "Iteration ")
          << iteration << " <span class=\"muted\">&middot; " << exchanges.size() << " exchange"
          << (exchanges.size() == 1 ? "" : "s") << "</span></summary>\n<ul class=\"exchanges\">\n";
        for (const model_exchange_file* m : exchanges) o << exchange_line(*m);
        o << "</ul>\n" << conversation_html(exchanges) << "</details>\n";
    }
    return o.str() + "</section>\n";
}

}  // namespace cuopt::report
