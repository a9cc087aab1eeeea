#pragma once
/// A real HTTP/1.1 server on 127.0.0.1 for tests (Boost.Beast), answering each request
/// with the next scripted reply (the last one repeats): a status, headers, a body, an
/// optional delay (a hang) and an optional truncation (a Content-Length it never meets).
/// It records every request it received.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cuopt::test {

struct scripted_reply {
    int status = 200;
    std::map<std::string, std::string> headers;
    std::string body = "{}";
    std::chrono::milliseconds delay{0};
    bool truncate = false;
};

struct recorded_request {
    std::string target;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
};

class loopback_http_server {
  public:
    explicit loopback_http_server(std::vector<scripted_reply> script);
    ~loopback_http_server();
    loopback_http_server(const loopback_http_server&) = delete;
    loopback_http_server& operator=(const loopback_http_server&) = delete;

    std::string url(const std::string& path = "/") const;
    std::vector<recorded_request> requests() const;

  private:
    void serve();

    std::vector<scripted_reply> m_script;
    std::atomic<bool> m_stop{false};
    unsigned short m_port = 0;
    mutable std::mutex m_mutex;
    std::vector<recorded_request> m_requests;
    struct impl;
    impl* m_impl;
    std::thread m_thread;
};

}  // namespace cuopt::test
