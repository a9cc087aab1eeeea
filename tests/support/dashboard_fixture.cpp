#include "dashboard_fixture.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "common/file_io.hpp"
#include "common/json_document.hpp"

namespace cuopt::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;

const std::string k_dashboard_token =
    "5f0c1d2e3a4b5c6d7e8f90112233445566778899aabbccddeeff001122334455";

http_reply http_exchange(unsigned short port, const std::string& method, const std::string& target,
                         const header_list& headers, const std::string& body) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body() = body;
    req.prepare_payload();
    beast::error_code ec;
    http::write(socket, req, ec);  // a refused upload may be cut short; its reply still comes
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(socket, buffer, parser, ec);
    INFO(method << " " << target << ": " << ec.message());
    REQUIRE_FALSE(ec);
    http_reply r;
    r.status = parser.get().result_int();
    for (const auto& f : parser.get()) {
        std::string name(f.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = std::string(f.value());
    }
    r.body = parser.get().body();
    return r;
}

header_list bearer() {
    return {{"Authorization", "Bearer " + k_dashboard_token}};
}

std::string sign_in(unsigned short port) {
    const http_reply r = http_exchange(port, "POST", "/api/session", bearer());
    REQUIRE(r.status == 200);
    const rapidjson::Document j = parse_json(r.body, "/api/session");
    return j["session"].GetString();
}

header_list session_header(const std::string& session) {
    return {{"Authorization", "Session " + session}};
}

header_list browser_post(const std::string& session, const std::string& origin) {
    header_list h = {{"Authorization", "Session " + session},
                     {"Content-Type", "application/x-www-form-urlencoded"}};
    if (!origin.empty()) h.emplace_back("Origin", origin);
    return h;
}

std::string origin_of(unsigned short port) {
    return "http://127.0.0.1:" + std::to_string(port);
}

form_body& form_body::field(const std::string& name, const std::string& value) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" +
            value + "\r\n";
    return *this;
}

form_body& form_body::file(const std::string& field, const std::string& filename,
                           const std::string& data) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + field +
            "\"; filename=\"" + filename + "\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
            data + "\r\n";
    return *this;
}

const std::string& form_body::close() {
    body += "--" + boundary + "--\r\n";
    return body;
}

header_list form_body::headers() const {
    header_list h = bearer();
    h.emplace_back("Content-Type", "multipart/form-data; boundary=" + boundary);
    return h;
}

form_body matmul_upload() {
    const fs::path example = fs::path(CUOPT_SOURCE_DIR) / "examples" / "matmul";
    form_body f;
    for (const char* name :
         {"config.json", "initial.cu", "reference.cu", "input_cases.json", "holdout_cases.json"})
        f.file("files", name, read_text_file(example / name));
    return f;
}

dashboard_under_test::dashboard_under_test(std::size_t max_upload_bytes, std::size_t max_file_bytes)
    : dashboard_under_test([&] {
          dashboard_settings s;
          s.max_upload_bytes = max_upload_bytes;
          s.max_file_bytes = max_file_bytes;
          return s;
      }()) {}

dashboard_under_test::dashboard_under_test(dashboard_settings settings)
    : m_spool(m_dir.path() / "spool") {
    settings.token = k_dashboard_token;
    m_dashboard = std::make_unique<http_dashboard>(m_io, m_spool, settings, CUOPT_OPTIMIZER_BINARY,
                                                   CUOPT_FAKE_HARNESS_BINARY);
    m_loop = std::thread([this] { m_io.run(); });
}

dashboard_under_test::~dashboard_under_test() {
    asio::post(m_io, [this] {
        m_dashboard->stop();
        m_io.stop();
    });
    m_loop.join();
    m_dashboard.reset();
}

http_reply dashboard_under_test::get(const std::string& target, const header_list& headers) const {
    return http_exchange(port(), "GET", target, headers);
}

http_reply dashboard_under_test::post(const std::string& target, const header_list& headers,
                                      const std::string& body) const {
    return http_exchange(port(), "POST", target, headers, body);
}

std::string place_job(const spool& s, job_state state, const std::string& reason) {
    const fs::path stage = s.new_staging();
    write_file_atomic(stage / "files" / "config.json", "{}\n");
    job_spec spec;
    spec.config = "config.json";
    spec.submitted_by = "cli";
    spec.args = {"--max-iterations", "3"};
    const std::string id = s.commit(stage, spec);
    job_status st = s.read_status(id);
    st.state = state;
    st.reason = reason;
    st.iteration = 2;
    st.attempts = 7;
    st.best_speedup = 2.5;
    st.run_dir = "results/run-001";
    s.write_status(st);
    const fs::path run = s.job_dir(id) / st.run_dir;
    write_file_atomic(run / "report.html",
                      "<!DOCTYPE html><html><head><style>h1{color:red}</style></head><body>"
                      "<h1>report of " +
                          id + "</h1><script>document.title='ran'</script></body></html>\n");
    write_file_atomic(run / "best.cu", "__global__ void k() {}\n");
    write_file_atomic(s.job_dir(id) / "job.log", "starting\niteration 1\niteration 2 <b>\n");
    return id;
}

std::vector<fs::path> staged_files(const spool& s) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(s.staging_dir(), ec), end; !ec && it != end;
         it.increment(ec))
        if (it->is_regular_file(ec)) out.push_back(it->path());
    return out;
}

}  // namespace cuopt::test
