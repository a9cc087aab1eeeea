#include "devtools_browser.hpp"

#include <fcntl.h>
#include <poll.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "common/json_document.hpp"
#include "headless_chromium.hpp"

namespace cuopt::test {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

std::vector<std::string> chromium_args(const fs::path& scratch, int width, int height) {
    return {chromium_binary(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
            "--mute-audio",
            "--remote-debugging-pipe",
            "--user-data-dir=" + (scratch / "devtools-profile").string(),
            "--window-size=" + std::to_string(width) + "," + std::to_string(height),
            "about:blank"};
}

// After fork, before exec: only async-signal-safe calls. fd 3 reads commands, fd 4 writes
// replies; stdout and stderr go to `log`.
[[noreturn]] void exec_chromium(char* const* argv, int commands, int replies, const char* log) {
    ::setpgid(0, 0);
    const int in = ::fcntl(commands, F_DUPFD, 10), out = ::fcntl(replies, F_DUPFD, 10);
    ::dup2(in, 3);
    ::dup2(out, 4);
    const int log_fd = ::open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(argv[0], argv);
    ::_exit(127);
}

std::string text_of(const rapidjson::Value& v) {
    if (v.IsString()) return v.GetString();
    return to_compact_json(v);
}

// A console call's arguments as one line.
std::string console_line(const rapidjson::Value& params) {
    std::string line = params.HasMember("type") ? text_of(params["type"]) + ":" : "console:";
    if (params.HasMember("args") && params["args"].IsArray())
        for (const auto& a : params["args"].GetArray())
            line += " " + (a.HasMember("value")         ? text_of(a["value"])
                           : a.HasMember("description") ? text_of(a["description"])
                                                        : std::string("?"));
    return line;
}

}  // namespace

devtools_browser::devtools_browser(const fs::path& scratch, int width, int height) {
    if (chromium_binary().empty()) throw std::runtime_error("no chromium here");
    ::signal(SIGPIPE, SIG_IGN);  // a browser gone must be an error, not the end of the tests
    start(scratch, width, height);
    const auto target = call("Target.createTarget", R"({"url": "about:blank"})", true);
    const auto attached = call(
        "Target.attachToTarget",
        R"({"targetId": )" + json_quoted(target["targetId"].GetString()) + R"(, "flatten": true})",
        true);
    m_session = attached["sessionId"].GetString();
    for (const char* domain : {"Page.enable", "Runtime.enable", "Log.enable"}) call(domain);
    call("Emulation.setDeviceMetricsOverride", R"({"width": )" + std::to_string(width) +
                                                   R"(, "height": )" + std::to_string(height) +
                                                   R"(, "deviceScaleFactor": 1, "mobile": false})");
}

void devtools_browser::start(const fs::path& scratch, int width, int height) {
    fs::create_directories(scratch);
    const std::vector<std::string> args = chromium_args(scratch, width, height);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string log = (scratch / "chromium-devtools.log").string();
    int commands[2], replies[2];
    if (::pipe2(commands, O_CLOEXEC) != 0 || ::pipe2(replies, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    m_pid = ::fork();
    if (m_pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (m_pid == 0) exec_chromium(argv.data(), commands[0], replies[1], log.c_str());
    ::close(commands[0]);
    ::close(replies[1]);
    m_to = commands[1];
    m_from = replies[0];
}

devtools_browser::~devtools_browser() {
    try {
        if (m_to >= 0) call("Browser.close", "{}", true, std::chrono::seconds(5));
    } catch (const std::exception&) {  // gone already, or stuck: killed below
    }
    if (m_to >= 0) ::close(m_to);
    if (m_from >= 0) ::close(m_from);
    if (m_pid <= 0) return;
    int status = 0;
    const auto deadline = clock_type::now() + std::chrono::seconds(5);
    while (::waitpid(m_pid, &status, WNOHANG) == 0 && clock_type::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(-m_pid, SIGKILL);  // whatever of its process group is left
    ::waitpid(m_pid, &status, WNOHANG);
}

void devtools_browser::send(const std::string& message) {
    const std::string framed = message + '\0';
    for (std::size_t done = 0; done < framed.size();) {
        const ssize_t n = ::write(m_to, framed.data() + done, framed.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw std::runtime_error("chromium's command pipe: " +
                                     std::string(std::strerror(errno)));
        done += static_cast<std::size_t>(n);
    }
}

void devtools_browser::read_messages(clock_type::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    pollfd p{m_from, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (ready <= 0) return;  // nothing yet: the caller judges its deadline
    char chunk[65536];
    const ssize_t n = ::read(m_from, chunk, sizeof chunk);
    if (n <= 0)
        throw std::runtime_error("chromium closed its DevTools pipe (see chromium-devtools.log)");
    m_buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t end; (end = m_buffer.find('\0')) != std::string::npos;) {
        const std::string message = m_buffer.substr(0, end);
        m_buffer.erase(0, end + 1);
        rapidjson::Document d;
        if (!try_parse_json(d, message).empty() || !d.IsObject()) continue;
        if (d.HasMember("id"))
            m_replies.push_back(message);
        else
            on_event(d);
    }
}

void devtools_browser::on_event(const rapidjson::Document& m) {
    const std::string method = m.HasMember("method") ? text_of(m["method"]) : "";
    if (!m.HasMember("params")) return;
    const rapidjson::Value& params = m["params"];
    if (method == "Page.loadEventFired") ++m_loads;
    if (method == "Runtime.consoleAPICalled") m_console += console_line(params) + "\n";
    if (method == "Runtime.exceptionThrown" && params.HasMember("exceptionDetails"))
        m_console += "exception: " + to_compact_json(params["exceptionDetails"]) + "\n";
    if (method == "Log.entryAdded" && params.HasMember("entry") &&
        params["entry"].HasMember("text"))
        m_console += "log: " + text_of(params["entry"]["text"]) + "\n";
}

rapidjson::Document devtools_browser::call(const std::string& method, const std::string& params,
                                           bool browser, std::chrono::milliseconds timeout) {
    const int id = m_next_id++;
    send(R"({"id": )" + std::to_string(id) + R"(, "method": )" + json_quoted(method) +
         R"(, "params": )" + params +
         (browser || m_session.empty() ? "" : R"(, "sessionId": )" + json_quoted(m_session)) + "}");
    const auto deadline = clock_type::now() + timeout;
    for (;;) {
        for (auto it = m_replies.begin(); it != m_replies.end(); ++it) {
            rapidjson::Document d = parse_json(*it, "devtools reply");
            if (d["id"].GetInt() != id) continue;
            m_replies.erase(it);
            if (d.HasMember("error"))
                throw std::runtime_error(method + ": " + to_compact_json(d["error"]));
            rapidjson::Document result;
            result.CopyFrom(d["result"], result.GetAllocator());
            return result;
        }
        if (clock_type::now() >= deadline) throw std::runtime_error(method + ": no reply in time");
        read_messages(deadline);
    }
}

void devtools_browser::wait_for_load(int loads_before, std::chrono::milliseconds timeout) {
    const auto deadline = clock_type::now() + timeout;
    while (m_loads <= loads_before) {
        if (clock_type::now() >= deadline)
            throw std::runtime_error("the page did not load in time");
        read_messages(deadline);
    }
}

void devtools_browser::navigate(const std::string& url) {
    const int before = m_loads;
    const auto r = call("Page.navigate", R"({"url": )" + json_quoted(url) + "}");
    if (r.HasMember("errorText"))
        throw std::runtime_error("navigate to " + url + ": " + text_of(r["errorText"]));
    wait_for_load(before, std::chrono::seconds(30));
}

std::string devtools_browser::evaluate(const std::string& expression) {
    const auto r =
        call("Runtime.evaluate", R"({"expression": )" + json_quoted(expression) +
                                     R"(, "returnByValue": true, "awaitPromise": true})");
    if (r.HasMember("exceptionDetails"))
        throw std::runtime_error("script: " + to_compact_json(r["exceptionDetails"]));
    const rapidjson::Value& v = r["result"];
    return v.HasMember("value") ? to_compact_json(v["value"]) : "null";
}

bool devtools_browser::wait_for(const std::string& expression, std::chrono::milliseconds timeout) {
    const auto deadline = clock_type::now() + timeout;
    while (clock_type::now() < deadline) {
        try {
            if (evaluate("!!(" + expression + ")") == "true") return true;
        } catch (const std::runtime_error&) {  // between two pages: try again
        }
        read_messages(std::min(deadline, clock_type::now() + std::chrono::milliseconds(200)));
    }
    return false;
}

void devtools_browser::click_and_wait(const std::string& selector,
                                      std::chrono::milliseconds timeout) {
    const int before = m_loads;
    evaluate("document.querySelector(" + json_quoted(selector) + ").click()");
    wait_for_load(before, timeout);
}

void devtools_browser::set_input_files(const std::string& selector,
                                       const std::vector<fs::path>& files) {
    const auto doc = call("DOM.getDocument", R"({"depth": 0})");
    const int root = doc["root"]["nodeId"].GetInt();
    const auto found =
        call("DOM.querySelector", R"({"nodeId": )" + std::to_string(root) + R"(, "selector": )" +
                                      json_quoted(selector) + "}");
    const int node = found["nodeId"].GetInt();
    if (node == 0) throw std::runtime_error("no element " + selector);
    std::string list;
    for (const fs::path& f : files)
        list += (list.empty() ? "" : ", ") + json_quoted(fs::absolute(f).string());
    call("DOM.setFileInputFiles",
         R"({"files": [)" + list + R"(], "nodeId": )" + std::to_string(node) + "}");
}

void devtools_browser::screenshot(const fs::path& png) {
    const auto r = call("Page.captureScreenshot", R"({"format": "png"})");
    fs::create_directories(png.parent_path());
    std::ofstream(png, std::ios::binary) << decode_base64(r["data"].GetString());
}

std::string decode_base64(const std::string& text) {
    std::string out;
    unsigned value = 0;
    int bits = 0;
    for (char c : text) {
        int d = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                                       : -1;
        if (d < 0) continue;  // padding, line breaks
        value = (value << 6) | static_cast<unsigned>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((value >> bits) & 0xff);
        }
    }
    return out;
}

std::string json_quoted(const std::string& s) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    return b.GetString();
}

}  // namespace cuopt::test
