// The documentation allow-list: which URLs --docs-hosts lets the nvidia_docs tool read, and
// what is wrong with an entry that allows nothing.
#include <algorithm>
#include <cctype>
#include <optional>

#include "common/message_text.hpp"
#include "orchestrator/model/docs_library.hpp"

namespace cuopt {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// One --docs-hosts entry: a bare host is https on 443 and its subdomains; "scheme://host:port"
// is exactly that origin (the port the scheme implies when none is written).
struct host_rule {
    std::string scheme, host, port;
    bool subdomains = false;
};

std::optional<host_rule> rule_of(const std::string& entry, std::string& why) {
    const std::size_t authority = entry.find("://");
    if (authority == std::string::npos) {
        if (entry.empty() || entry.find_first_of("/:@?#") != std::string::npos) {
            why = quote_value(entry) + " is neither a host nor http(s)://host[:port]";
            return std::nullopt;
        }
        return host_rule{"https", lower(entry), "443", true};
    }
    const std::size_t rest = entry.find_first_of("/?#", authority + 3);
    const auto p = parse_url(entry);
    if (!p || (p->scheme != "http" && p->scheme != "https") || !p->user.empty() ||
        !p->password.empty() || p->host.empty() || p->port.empty() ||
        (rest != std::string::npos && entry.substr(rest) != "/")) {
        why =
            quote_value(entry) + " is neither a host nor http(s)://host[:port] (no path, no user)";
        return std::nullopt;
    }
    return host_rule{p->scheme, p->host, p->port, false};
}

bool host_matches(const host_rule& r, const std::string& h) {
    const std::string& e = r.host;
    return h == e ||
           (r.subdomains && h.size() > e.size() &&
            h.compare(h.size() - e.size(), e.size(), e) == 0 && h[h.size() - e.size() - 1] == '.');
}

}  // namespace

std::string docs_host_problem(const std::string& entry) {
    std::string why;
    return rule_of(entry, why) ? "" : why;
}

bool url_allowed(const std::string& url, const std::vector<std::string>& allowed_hosts,
                 std::string& why) {
    const auto parts = parse_url(url);
    if (!parts) {
        why = quote_value(url) + " is not a URL";
        return false;
    }
    if (parts->scheme != "http" && parts->scheme != "https") {
        why = "only http and https pages are read, not " + parts->scheme;
        return false;
    }
    if (!parts->user.empty() || !parts->password.empty()) {
        why = "a URL with a user name or password is refused";
        return false;
    }
    std::string expected;  // the origins allowed for this host, when the host is known
    for (const std::string& entry : allowed_hosts) {
        std::string ignored;
        const auto rule = rule_of(entry, ignored);
        if (!rule || !host_matches(*rule, parts->host)) continue;
        if (rule->scheme == parts->scheme && rule->port == parts->port) return true;
        expected += (expected.empty() ? "" : " or ") + rule->scheme + " on port " + rule->port;
    }
    if (!expected.empty()) {
        why = parts->host + " is read over " + expected + " only, not " + parts->scheme +
              " on port " + parts->port + " (--docs-hosts " + parts->scheme + "://" + parts->host +
              ":" + parts->port + " would allow it)";
        return false;
    }
    why = "the host " + parts->host + " is not on the documentation allow-list (";
    for (std::size_t i = 0; i < allowed_hosts.size(); ++i)
        why += (i ? ", " : "") + allowed_hosts[i];
    why += ")";
    return false;
}

}  // namespace cuopt
