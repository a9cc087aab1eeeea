#pragma once
/// --nvidia-research: the model may read NVIDIA's documentation through one tool,
/// nvidia_docs({"url": ...} or {"query": ...}). Pages come only from an allow-list of hosts,
/// over https on port 443 unless an entry names its scheme and port (every redirect and the
/// URL the exchange ended at are checked too); each page is reduced once to its
/// sections of readable text (gumbo's HTML5 parse: scripts, styles and navigation dropped,
/// headings kept with their anchors) and cached on disk by URL. A url returns that page (or
/// the section its #anchor names) and the page's table of contents; a query ranks the
/// sections of the guide pages (BM25) and returns the best. What comes back is capped; network
/// fetches per run are budgeted; every lookup is recorded by the caller's recorder.

#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/model/http_client.hpp"

namespace cuopt {

/// NVIDIA's documentation host: the allow-list's default (its subdomains too).
inline constexpr const char* k_nvidia_docs_host = "docs.nvidia.com";

struct docs_settings {
    std::vector<std::string> allowed_hosts{k_nvidia_docs_host};  // see url_allowed
    std::vector<std::string> guide_pages;                        // what a query searches
    std::filesystem::path cache_dir;                             // "" = no disk cache
    std::size_t max_result_chars = 8000;                         // per tool answer
    std::size_t max_page_bytes = 48u << 20;                      // the PTX ISA page is ~10 MB
    int max_fetches = 20;                                        // network fetches per run
    std::chrono::milliseconds timeout{60000};                    // per fetch
};

/// The guide pages a query searches on a device of this compute capability ("9.0"): the CUDA
/// C++ Programming Guide, the Best Practices Guide, the PTX ISA, and the tuning guide of the
/// device's architecture where NVIDIA publishes one.
std::vector<std::string> default_guide_pages(const std::string& compute_capability);

/// Where pages are cached when no folder is given: $XDG_CACHE_HOME/cuda-optimizer/docs, else
/// ~/.cache/cuda-optimizer/docs.
std::filesystem::path default_docs_cache();

struct doc_section {
    std::string title;
    std::string anchor;  // the heading's (or its section's) id; "" for text before any heading
    std::string text;
};

/// An HTML page as sections of readable text, in document order.
std::vector<doc_section> html_sections(const std::string& html);

/// Whether `url` is allowed by the entries of --docs-hosts: a bare host ("docs.nvidia.com")
/// allows https on port 443 of it and its subdomains; "scheme://host[:port]"
/// ("http://127.0.0.1:8080") allows exactly that scheme, host and port. On false, `why` says
/// in one line what is wrong and what was expected (the tool's error puts the URL before it).
/// User names, passwords and other schemes are refused.
bool url_allowed(const std::string& url, const std::vector<std::string>& allowed_hosts,
                 std::string& why);

/// What is wrong with one --docs-hosts entry (a path, a user, another scheme); "" when fine.
std::string docs_host_problem(const std::string& entry);

/// A lookup the tool refuses or cannot do: the model gets it as a tool error.
class docs_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// One lookup for the record: what was asked, which pages were read (and whether from the
/// cache), what went back.
struct docs_exchange {
    std::string request_json;   // the tool's arguments
    std::string response_json;  // {"pages": [{"url", "source", "status", ...}], "chars", "error"}
};
using docs_recorder = std::function<void(const docs_exchange&)>;

class docs_library {
  public:
    docs_library(docs_settings settings, http_transport& transport, docs_recorder record = {});

    /// The tool's answer to {"url": ...} or {"query": ...}; throws docs_error.
    std::string answer(const rapidjson::Value& args);

    int fetches() const { return m_fetches; }
    /// Resuming a run: the pages it already fetched count toward --docs-max-fetches.
    void restore_fetches(int fetched) { m_fetches = fetched; }
    const docs_settings& settings() const { return m_settings; }

  private:
    struct page {
        std::string url;
        std::vector<doc_section> sections;
    };
    const page& load(const std::string& url, std::vector<std::string>& log);
    page fetch(const std::string& url, std::vector<std::string>& log);
    std::string by_url(const std::string& url, std::vector<std::string>& log);
    std::string by_query(const std::string& query, std::vector<std::string>& log);

    docs_settings m_settings;
    http_transport& m_transport;
    docs_recorder m_record;
    std::vector<page> m_pages;  // read this run
    int m_fetches = 0;
};

}  // namespace cuopt
