#include "orchestrator/model/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace cuopt {

namespace {

// curl_global_init once per process, before the first handle.
void init_curl_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct curl_handle {
    CURL* h = curl_easy_init();
    ~curl_handle() {
        if (h) curl_easy_cleanup(h);
    }
};

struct header_list {
    curl_slist* list = nullptr;
    ~header_list() { curl_slist_free_all(list); }
};

struct body_sink {
    std::string* body;
    std::size_t limit;  // 0: none
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    const auto* sink = static_cast<body_sink*>(user);
    if (sink->limit > 0 && sink->body->size() + size * n > sink->limit)
        return 0;  // curl reports a write error: the body is over the limit
    sink->body->append(data, size * n);
    return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    const std::string line(data, size * n);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        value.erase(value.find_last_not_of(" \t\r\n") + 1);
        (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
    }
    return size * n;
}

class curl_transport final : public http_transport {
  public:
    http_response perform(const http_request& req) override {
        init_curl_once();
        http_response r;
        curl_handle c;
        if (!c.h) {
            r.transport_error = "curl_easy_init failed";
            return r;
        }
        header_list headers;
        for (const auto& [name, value] : req.headers)
            headers.list = curl_slist_append(headers.list, (name + ": " + value).c_str());
        headers.list = curl_slist_append(headers.list, "Expect:");  // no 100-continue round trip
        curl_easy_setopt(c.h, CURLOPT_URL, req.url.c_str());
        // Never another scheme, not even through a redirect (none is followed here: callers
        // that follow one check each hop themselves).
        curl_easy_setopt(c.h, CURLOPT_PROTOCOLS_STR, req.protocols.c_str());
        curl_easy_setopt(c.h, CURLOPT_REDIR_PROTOCOLS_STR, req.protocols.c_str());
        curl_easy_setopt(c.h, CURLOPT_FOLLOWLOCATION, 0L);
        if (req.get) {
            curl_easy_setopt(c.h, CURLOPT_HTTPGET, 1L);
        } else {
            curl_easy_setopt(c.h, CURLOPT_POST, 1L);
            curl_easy_setopt(c.h, CURLOPT_POSTFIELDS, req.body.data());
            curl_easy_setopt(c.h, CURLOPT_POSTFIELDSIZE_LARGE,
                             static_cast<curl_off_t>(req.body.size()));
        }
        curl_easy_setopt(c.h, CURLOPT_HTTPHEADER, headers.list);
        curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
        curl_easy_setopt(c.h, CURLOPT_CONNECTTIMEOUT_MS,
                         static_cast<long>(std::min<long long>(req.timeout.count(), 30000)));
        curl_easy_setopt(c.h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c.h, CURLOPT_WRITEFUNCTION, on_body);
        body_sink sink{&r.body, req.max_body_bytes};
        curl_easy_setopt(c.h, CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(c.h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c.h, CURLOPT_HEADERDATA, &r.headers);
        char error[CURL_ERROR_SIZE] = {};
        curl_easy_setopt(c.h, CURLOPT_ERRORBUFFER, error);
        const auto start = std::chrono::steady_clock::now();
        const CURLcode rc = curl_easy_perform(c.h);
        r.latency_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        curl_easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &r.status);
        const char* effective = nullptr;
        if (curl_easy_getinfo(c.h, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective)
            r.effective_url = effective;
        if (rc != CURLE_OK) {
            r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
            r.over_limit = rc == CURLE_WRITE_ERROR && req.max_body_bytes > 0;
            r.transport_error =
                rc == CURLE_WRITE_ERROR && req.max_body_bytes > 0
                    ? "the body is over " + std::to_string(req.max_body_bytes) + " bytes"
                    : std::string(curl_easy_strerror(rc)) +
                          (error[0] ? std::string(": ") + error : "");
        }
        return r;
    }
};

struct url_handle {
    CURLU* h = curl_url();
    ~url_handle() { curl_url_cleanup(h); }
    std::string part(CURLUPart which, unsigned flags = 0) const {
        char* text = nullptr;
        if (curl_url_get(h, which, &text, flags) != CURLUE_OK || !text) return "";
        std::string out(text);
        curl_free(text);
        return out;
    }
};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

}  // namespace

std::optional<url_parts> parse_url(const std::string& url) {
    url_handle u;
    if (!u.h || curl_url_set(u.h, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return std::nullopt;
    return url_parts{lower(u.part(CURLUPART_SCHEME)),
                     lower(u.part(CURLUPART_HOST)),
                     u.part(CURLUPART_PORT, CURLU_DEFAULT_PORT),
                     u.part(CURLUPART_USER),
                     u.part(CURLUPART_PASSWORD),
                     u.part(CURLUPART_FRAGMENT)};
}

std::string resolve_url(const std::string& base, const std::string& ref) {
    url_handle u;
    if (!u.h || curl_url_set(u.h, CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
        curl_url_set(u.h, CURLUPART_URL, ref.c_str(), 0) != CURLUE_OK)
        return "";
    return u.part(CURLUPART_URL);
}

std::unique_ptr<http_transport> make_curl_transport() {
    return std::make_unique<curl_transport>();
}

}  // namespace cuopt
