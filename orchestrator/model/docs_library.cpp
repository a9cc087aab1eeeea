// The nvidia_docs tool's lookups: pages loaded (this run's, the disk cache's or fetched under
// the allow-list and the fetch budget), a page or section by URL, the guides ranked by BM25.
#include "orchestrator/model/docs_library.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "common/file_io.hpp"
#include "common/json_builder.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"

namespace cuopt {

namespace fs = std::filesystem;

std::vector<std::string> default_guide_pages(const std::string& cc) {
    const std::string base = std::string("https://") + k_nvidia_docs_host + "/cuda/";
    std::vector<std::string> pages = {base + "cuda-c-programming-guide/index.html",
                                      base + "cuda-c-best-practices-guide/index.html",
                                      base + "parallel-thread-execution/index.html"};
    const int major = std::atoi(cc.c_str());
    const char* tuning = major >= 10   ? "blackwell-tuning-guide"
                         : major == 9  ? "hopper-tuning-guide"
                         : cc == "8.9" ? "ada-tuning-guide"
                         : major == 8  ? "ampere-tuning-guide"
                         : cc == "7.5" ? "turing-tuning-guide"
                         : major == 7  ? "volta-tuning-guide"
                                       : nullptr;
    if (tuning) pages.push_back(base + tuning + "/index.html");
    return pages;
}

fs::path default_docs_cache() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return fs::path(x) / "cuda-optimizer" / "docs";
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : ".") / ".cache" / "cuda-optimizer" / "docs";
}

namespace {

// At most `n` bytes of `s`, never cutting a UTF-8 sequence.
std::string prefix(const std::string& s, std::size_t n) {
    if (s.size() <= n) return s;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return s.substr(0, n);
}

std::vector<std::string> words(const std::string& text) {
    static const std::set<std::string> k_stop = {"the",  "and", "for", "with", "how", "what",
                                                 "does", "are", "is",  "of",   "to",  "in",
                                                 "on",   "a",   "an",  "do",   "use", "can"};
    std::vector<std::string> out;
    std::string w;
    for (const char c : text + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
            w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            continue;
        }
        while (!w.empty() && w.back() == '.') w.pop_back();
        if (w.size() >= 2 && !k_stop.count(w)) out.push_back(w);
        w.clear();
    }
    return out;
}

}  // namespace

docs_library::docs_library(docs_settings settings, http_transport& transport, docs_recorder record)
    : m_settings(std::move(settings)), m_transport(transport), m_record(std::move(record)) {}

namespace {

std::string without_fragment(const std::string& url) {
    return url.substr(0, url.find('#'));
}

std::string sections_json(const std::string& url, const std::vector<doc_section>& sections) {
    rapidjson::Document d(rapidjson::kObjectType);
    json_array list(d.GetAllocator());
    for (const doc_section& s : sections) {
        json_object v(d.GetAllocator());
        v.add("title", s.title).add("anchor", s.anchor).add("text", s.text);
        list.push(v);
    }
    json_object(d).add("url", url).add("sections", list);
    return to_compact_json(d);
}

// A cached page, or nothing when there is none or it does not read back.
std::optional<std::vector<doc_section>> read_cached(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    rapidjson::Document d;
    if (!try_parse_json(d, read_text_file(file)).empty()) return std::nullopt;
    std::vector<doc_section> out;
    try {
        for (const json_field& v : json_field(d, file.string())["sections"].items())
            out.push_back({v.text("title"), v.text("anchor"), v.text("text")});
    } catch (const json_error&) {
        return std::nullopt;
    }
    return out;
}

}  // namespace

const docs_library::page& docs_library::load(const std::string& url,
                                             std::vector<std::string>& log) {
    const std::string key = without_fragment(url);
    for (const page& p : m_pages)
        if (p.url == key) return p;
    const fs::path cached = m_settings.cache_dir.empty()
                                ? fs::path()
                                : m_settings.cache_dir / (sha256_hex(key) + ".json");
    if (!cached.empty())
        if (auto sections = read_cached(cached)) {
            log.push_back("cache " + key);
            m_pages.push_back({key, std::move(*sections)});
            return m_pages.back();
        }
    page p = fetch(key, log);
    if (!cached.empty()) {
        std::error_code ec;
        fs::create_directories(m_settings.cache_dir, ec);
        if (!ec) write_file_atomic(cached, sections_json(key, p.sections));
    }
    m_pages.push_back(std::move(p));
    return m_pages.back();
}

docs_library::page docs_library::fetch(const std::string& url, std::vector<std::string>& log) {
    std::string at = url;
    for (int hop = 0; hop <= 5; ++hop) {
        std::string why;
        if (!url_allowed(at, m_settings.allowed_hosts, why))
            throw docs_error((hop == 0 ? "" : "a redirect to ") + at + " is refused: " + why);
        if (m_fetches >= m_settings.max_fetches)
            throw docs_error("the run's budget of " + std::to_string(m_settings.max_fetches) +
                             " documentation fetches is spent (--docs-max-fetches); use what "
                             "you have read");
        ++m_fetches;
        http_request req;
        req.url = at;
        req.get = true;
        req.timeout = m_settings.timeout;
        req.max_body_bytes = m_settings.max_page_bytes;
        req.protocols = parse_url(at)->scheme;  // the one url_allowed checked, nothing else
        req.headers = {{"Accept", "text/html, text/plain"},
                       {"User-Agent", "cuda-optimizer (--nvidia-research)"}};
        const http_response r = m_transport.perform(req);
        log.push_back(
            "fetch " + at + " -> " +
            (r.transport_error.empty() ? "HTTP " + std::to_string(r.status) : r.transport_error));
        if (!r.transport_error.empty())
            throw docs_error("could not read " + at + ": " + r.transport_error);
        // What the exchange ended at, checked again (no redirect is followed by the transport).
        if (!r.effective_url.empty() &&
            !url_allowed(r.effective_url, m_settings.allowed_hosts, why))
            throw docs_error("reading " + at + " ended at " + r.effective_url +
                             ", which is refused: " + why);
        const auto location = r.headers.find("location");
        if (r.status >= 300 && r.status < 400 && location != r.headers.end()) {
            at = resolve_url(at, location->second);
            continue;
        }
        if (r.status < 200 || r.status >= 300)
            throw docs_error("could not read " + at + ": HTTP " + std::to_string(r.status));
        const auto type = r.headers.find("content-type");
        const bool plain =
            type != r.headers.end() && type->second.find("text/plain") != std::string::npos;
        return {url, plain ? std::vector<doc_section>{{"", "", r.body}} : html_sections(r.body)};
    }
    throw docs_error("too many redirects from " + url);
}

std::string docs_library::by_url(const std::string& url, std::vector<std::string>& log) {
    const page& p = load(url, log);
    const std::string anchor =
        url.find('#') == std::string::npos ? "" : url.substr(url.find('#') + 1);
    std::string body;
    bool found = anchor.empty();
    for (const doc_section& s : p.sections) {
        if (!anchor.empty() && s.anchor != anchor) continue;
        found = true;
        body += (s.title.empty() ? "" : "## " + s.title + "\n") + s.text + "\n\n";
        if (!anchor.empty()) break;
    }
    if (!found) throw docs_error("no section with the anchor #" + anchor + " in " + p.url);
    std::string contents = "\nSections of " + p.url + " (ask for one with url#anchor):\n";
    for (const doc_section& s : p.sections)
        if (!s.anchor.empty() && !s.title.empty())
            contents += "- " + s.title + " #" + s.anchor + "\n";
    const std::size_t cap = m_settings.max_result_chars;
    const std::size_t toc = std::min(contents.size(), cap / 4);
    std::string out = prefix(body, cap - toc);
    if (out.size() < body.size())
        out += "\n[... " + std::to_string(body.size() - out.size()) + " more characters]\n";
    return out + prefix(contents, toc);
}

std::string docs_library::by_query(const std::string& query, std::vector<std::string>& log) {
    const std::vector<std::string> terms = words(query);
    if (terms.empty()) throw docs_error("the query has no words to search for");
    struct hit {
        const page* p;
        const doc_section* s;
        double score;
    };
    std::vector<std::pair<const page*, const doc_section*>> all;
    std::vector<std::map<std::string, int>> counts;
    std::vector<double> lengths;
    std::map<std::string, int> docs_with;
    double total_len = 0;
    for (const std::string& url : m_settings.guide_pages) {
        const page& p = load(url, log);
        for (const doc_section& s : p.sections) {
            std::map<std::string, int> tf;
            const auto ws = words(s.title + " " + s.title + " " + s.text);  // titles weigh twice
            for (const std::string& w : ws) ++tf[w];
            for (const std::string& t : std::set<std::string>(terms.begin(), terms.end()))
                if (tf.count(t)) ++docs_with[t];
            lengths.push_back(static_cast<double>(ws.size()));
            total_len += lengths.back();
            all.emplace_back(&p, &s);
            counts.push_back(std::move(tf));
        }
    }
    const double n = static_cast<double>(all.size());
    const double avg = n > 0 ? total_len / n : 1;
    std::vector<hit> hits;
    for (std::size_t i = 0; i < all.size(); ++i) {
        double score = 0;  // BM25, k1 = 1.2, b = 0.75
        const double len = lengths[i];
        for (const std::string& t : terms) {
            const auto f = counts[i].find(t);
            if (f == counts[i].end()) continue;
            const double idf = std::log(1 + (n - docs_with[t] + 0.5) / (docs_with[t] + 0.5));
            score += idf * f->second * 2.2 / (f->second + 1.2 * (0.25 + 0.75 * len / avg));
        }
        if (score > 0) hits.push_back({all[i].first, all[i].second, score});
    }
    if (hits.empty()) throw docs_error("nothing in the guides matches " + quote_value(query));
    std::stable_sort(hits.begin(), hits.end(),
                     [](const hit& a, const hit& b) { return a.score > b.score; });
    const std::size_t cap = m_settings.max_result_chars, each = std::max<std::size_t>(cap / 3, 400);
    std::string out;
    for (const hit& h : hits) {
        std::string block = "## " + h.s->title + "\n" + h.p->url +
                            (h.s->anchor.empty() ? "" : "#" + h.s->anchor) + "\n" +
                            prefix(h.s->text, each) + "\n\n";
        if (out.size() + block.size() > cap) break;
        out += block;
    }
    return out.empty() ? prefix(hits[0].s->text, cap) : out;
}

std::string docs_library::answer(const rapidjson::Value& args) {
    std::vector<std::string> log;
    std::string out, error;
    try {
        const json_field f(args, "nvidia_docs arguments");
        const auto url = f.optional_text("url"), query = f.optional_text("query");
        if (url.has_value() == query.has_value())
            throw docs_error("give exactly one of url (a page) or query (words to search for)");
        out = url ? by_url(*url, log) : by_query(*query, log);
    } catch (const docs_error& e) {
        error = e.what();
    } catch (const json_error& e) {  // a url or query that is no string
        error = e.what();
    }
    if (m_record) {
        rapidjson::Document d(rapidjson::kObjectType);
        json_object(d)
            .add("pages", log)
            .add("chars", out.size())
            .add("text", out)
            .add("error", error.empty() ? std::nullopt : std::optional<std::string>(error));
        m_record({to_compact_json(args), to_compact_json(d)});
    }
    if (!error.empty()) throw docs_error(error);
    return out;
}

}  // namespace cuopt