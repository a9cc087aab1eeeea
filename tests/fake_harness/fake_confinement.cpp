// The fake's process: its command line, its Landlock confinement as the real harness's
// (harness/harness_sandbox), and --worker serving through the real harness's loop.
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/file_io.hpp"
#include "common/landlock.hpp"
#include "fake_harness.hpp"
#include "harness/cubin_cache.hpp"
#include "harness/harness_sandbox.hpp"
#include "harness/worker_loop.hpp"

namespace cuopt::fake {

bool g_worker = false;
std::string g_retire_reason;
std::string g_cubin_out;
confinement g_confinement;
std::filesystem::path g_read_root;

namespace {

std::filesystem::path g_root;  // the tree it is confined to; empty when it is not

// What the fake may touch once confined: its root, the response's folder where that lies
// outside it, the cubin cache (compile markers), the folders of the files CUOPT_FAKE_TRACE and
// CUOPT_FAKE_WORKER_LOG name (read-write); the toolkit and the library folders (read-only).
std::vector<landlock_rule> fake_rules(const fake_options& o, const std::filesystem::path& root) {
    std::vector<landlock_rule> rules{{root, landlock_access::read_write}};
    if (!o.worker && !lies_within(o.response, root))
        rules.push_back({resolved_path(o.response).parent_path(), landlock_access::read_write});
    for (const char* file : {"CUOPT_FAKE_TRACE", "CUOPT_FAKE_WORKER_LOG"})
        if (const char* v = std::getenv(file); v && *v)
            rules.push_back({resolved_path(v).parent_path(), landlock_access::read_write});
    std::error_code ec;
    const std::filesystem::path cache = cubin_cache::default_folder();
    std::filesystem::create_directories(cache, ec);
    rules.push_back({cache, landlock_access::read_write});
    for (const auto& more : {toolkit_rules(), library_rules()})
        rules.insert(rules.end(), more.begin(), more.end());
    return rules;
}

// A worker's request or response outside its root, in the real worker's words; "" when inside
// (or the process is not confined).
std::string outside_root(const std::string& path, const char* what) {
    if (g_root.empty() || lies_within(path, g_root)) return "";
    return std::string(what) + " " + path + " is outside " + g_root.string() +
           ", the folder this harness is confined to (--root)";
}

}  // namespace

// The flags the fake needs (--arch and --cache-dir read and ignored); the response beside the
// request unless --response names it.
fake_options parse_fake_options(int argc, char** argv) {
    fake_options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--response" && has_value)
            o.response = argv[++i];
        else if (a == "--root" && has_value)
            o.root = argv[++i];
        else if (a == "--device" && has_value)
            o.device = std::atoi(argv[++i]);
        else if ((a == "--arch" || a == "--cache-dir") && has_value)
            ++i;
        else if (a == "--cubin-out" && has_value)
            g_cubin_out = argv[++i];
        else if (a.rfind("--", 0) != 0 && o.request.empty())
            o.request = a;
        o.worker |= a == "--worker";
        o.device_info |= a == "--device-info";
        o.measure |= a == "--measure" || a == "--remeasure";
        o.compile_only |= a == "--compile-only";
        o.unconfined |= a == "--unconfined";
        o.version |= a == "--version";
    }
    if (o.response.empty() && !o.request.empty())
        o.response =
            (std::filesystem::absolute(o.request).parent_path() / "response.json").string();
    return o;
}

// Confines this process before any request is read, as the real harness does; --unconfined
// and CUOPT_FAKE_UNCONFINED=<reason> (a kernel without Landlock) leave it unconfined, said in
// one line. False when the kernel refused the confinement itself.
std::filesystem::path fake_root(const fake_options& o) {
    return resolved_path(!o.root.empty() ? std::filesystem::path(o.root)
                         : o.worker      ? std::filesystem::current_path()
                                         : std::filesystem::absolute(o.request).parent_path());
}

bool confine_fake(const fake_options& o) {
    const char* pretend = std::getenv("CUOPT_FAKE_UNCONFINED");
    const std::filesystem::path root = fake_root(o);
    g_read_root = root;  // where a check's expected file may lie, confined or not
    if (o.unconfined || (pretend && *pretend)) {
        g_confinement.reason = o.unconfined ? "--unconfined was given" : pretend;
    } else {
        try {
            g_confinement = restrict_self(fake_rules(o, root), true);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fake-harness: cannot confine this process: %s\n", e.what());
            return false;
        }
        if (g_confinement.confined()) g_root = root;
    }
    if (!g_confinement.confined())
        std::fprintf(stderr,
                     "fake-harness: warning: not confined (%s): a kernel's #include can read any "
                     "file this user can\n",
                     g_confinement.reason.c_str());
    return true;
}

// --worker: the real harness's loop (harness/worker_loop), each request served by the fake;
// its replies on what was stdout (fd 1 pointed at stderr), confined as the real worker is.
int serve_as_worker(const fake_options& fo) {
    g_worker = true;
    harness_options o;
    o.quiet = true;
    const auto serve = [](const harness_options& one) {
        served_request s;
        std::string bad = outside_root(one.request, "request");
        if (bad.empty()) bad = outside_root(response_path(one).string(), "response");
        if (!bad.empty()) {
            s.code = exit_code::usage;
            s.status = "usage";
            s.messages = "fake-harness --worker: " + bad + "\n";
            return s;
        }
        s.code = static_cast<exit_code>(serve_one(one.request, response_path(one).string(), false));
        s.status = "fake";
        s.retire_reason = std::exchange(g_retire_reason, "");
        return s;
    };
    return serve_worker_on_stdio(o, serve, [&fo] { return confine_fake(fo); });
}

}  // namespace cuopt::fake
