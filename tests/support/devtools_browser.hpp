#pragma once
/// Headless chromium driven through the Chrome DevTools Protocol over --remote-debugging-pipe
/// (fd 3: commands in, fd 4: replies and events out, each message NUL-terminated JSON), for the
/// tests that use the dashboard as a person would: open a page, choose files for an
/// <input type=file>, click, wait for what the page shows, take screenshots.

#include <rapidjson/document.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuopt::test {

class devtools_browser {
  public:
    /// Starts chromium (chromium_binary()) with a fresh profile under `scratch` and a page of
    /// `width` x `height` CSS pixels. Throws std::runtime_error when it cannot.
    devtools_browser(const std::filesystem::path& scratch, int width = 1280, int height = 900);
    ~devtools_browser();
    devtools_browser(const devtools_browser&) = delete;
    devtools_browser& operator=(const devtools_browser&) = delete;

    /// One command to the page's session (or the browser, when `browser`); its `result`.
    /// Throws std::runtime_error with the protocol's error message, or on a timeout.
    rapidjson::Document call(const std::string& method, const std::string& params_json = "{}",
                             bool browser = false,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30));

    /// Loads `url` and waits for its load event (redirects followed).
    void navigate(const std::string& url);
    /// Runs a script expression in the page (promises awaited); its value as compact JSON.
    std::string evaluate(const std::string& expression);
    /// Polls `expression` until it is true; false after `timeout`.
    bool wait_for(const std::string& expression, std::chrono::milliseconds timeout);
    /// Clicks the element `selector` names and waits for the page it leads to to load.
    void click_and_wait(const std::string& selector,
                        std::chrono::milliseconds timeout = std::chrono::seconds(60));
    /// Chooses files for the <input type=file> `selector` names.
    void set_input_files(const std::string& selector,
                         const std::vector<std::filesystem::path>& files);
    /// The page as a PNG.
    void screenshot(const std::filesystem::path& png);
    /// Console messages and uncaught exceptions seen so far, one a line.
    const std::string& console() const { return m_console; }

  private:
    void start(const std::filesystem::path& scratch, int width, int height);
    void send(const std::string& message);
    void read_messages(std::chrono::steady_clock::time_point deadline);
    void on_event(const rapidjson::Document& message);
    void wait_for_load(int loads_before, std::chrono::milliseconds timeout);

    pid_t m_pid = -1;
    int m_to = -1;    // our end of chromium's fd 3
    int m_from = -1;  // our end of chromium's fd 4
    std::string m_buffer;
    std::vector<std::string> m_replies;  // replies read while waiting for another
    int m_next_id = 1;
    std::string m_session;
    int m_loads = 0;  // Page.loadEventFired events seen
    std::string m_console;
};

/// The bytes of RFC 4648 base64 text (for Page.captureScreenshot).
std::string decode_base64(const std::string& text);

/// `s` as a JSON string literal, for building protocol messages.
std::string json_quoted(const std::string& s);

}  // namespace cuopt::test
