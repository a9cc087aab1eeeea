// The persistent harness worker: its protocol (the real cuda-harness --worker without a GPU,
// and fake-harness --worker through the real worker loop), its isolation (crash, hang and
// sticky-error respawn; the reference apart from candidates) and verdicts identical to a
// process per run, through the real cuda-optimizer binary.
#include "orchestrator/evaluation/harness_workers.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

using test::optimizer_fixture;

const std::string k_fake = CUOPT_FAKE_HARNESS_BINARY;

// The "PID worker REQUEST" lines of CUOPT_FAKE_WORKER_LOG, in order (one-shot runs left out).
std::vector<std::pair<std::string, std::string>> served_log(const fs::path& log) {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in(test::read_text(log));
    std::string pid, mode, request;
    while (in >> pid >> mode >> request)
        if (mode == "worker") out.emplace_back(pid, request);
    return out;
}

// label -> "verdict | reason | medians" for every attempt in history.json.
std::map<std::string, std::string> outcomes(const fs::path& run) {
    const auto history = test::read_checked_json(run / "history.json", "history");
    std::map<std::string, std::string> out;
    for (const auto& a : history["attempts"].GetArray()) {
        std::string reason = a["reason"].IsString() ? a["reason"].GetString() : "";
        if (reason.rfind("cuda-harness timed out after ", 0) == 0)  // its ms differ by a few
            reason = "cuda-harness timed out";
        // Each run keys its inputs with its own secret: the values a reason quotes differ,
        // its words and indices must not.
        reason = std::regex_replace(reason, std::regex("-?[0-9]+\\.[0-9]+(e[-+]?[0-9]+)?"), "#");
        // An error of exactly 1 (an element off by one whose neighbours round alike) prints as
        // "1" in one run and "1.0000002" in the next: a figure after "error" is masked whole.
        reason = std::regex_replace(reason, std::regex("error -?[0-9]+"), "error #");
        std::string line = std::string(a["verdict"].GetString()) + " | " + reason + " |";
        for (const auto& c : a["cases"].GetArray())
            if (c.HasMember("median_ms") && c["median_ms"].IsNumber())
                line += " " + std::to_string(c["median_ms"].GetDouble());
        out[a["label"].GetString()] = line;
    }
    return out;
}

void write_bad_candidates(optimizer_fixture& f) {
    f.dir.write("cands/a_fast.cu", f.kernel("FAKE_MS=1"));
    f.dir.write("cands/b_crash.cu", f.kernel("FAKE_CRASH"));
    f.dir.write("cands/c_after_crash.cu", f.kernel("FAKE_MS=1.5"));
    f.dir.write("cands/d_hang.cu", f.kernel("FAKE_HANG"));
    f.dir.write("cands/e_illegal.cu", f.kernel("FAKE_ILLEGAL_ADDRESS"));
    f.dir.write("cands/f_wrong.cu", f.kernel("FAKE_WRONG FAKE_MS=0.1"));
    f.dir.write("cands/g_compile_error.cu", f.kernel("FAKE_COMPILE_ERROR"));
    f.dir.write("cands/h_faster.cu", f.kernel("FAKE_MS=0.5"));
    f.dir.write("cands/i_printf.cu", f.kernel("FAKE_MS=0.6 FAKE_STDOUT_NOISE"));
}

std::vector<std::string> files_run(const optimizer_fixture& f, const char* isolation) {
    return f.args({"--proposer", "files", "--candidates", (f.dir / "cands").string(),
                   "--max-iterations", "10", "--timeout", "2", "--isolation", isolation,
                   "--no-evidence"});
}

}  // namespace

TEST_CASE("worker and process isolation give every candidate the same verdict, reason and medians",
          "[integration][worker]") {
    std::map<std::string, std::string> by_mode[2];
    const char* modes[] = {"worker", "process"};
    for (int m = 0; m < 2; ++m) {
        optimizer_fixture f;
        write_bad_candidates(f);
        const auto r = test::run_optimizer(files_run(f, modes[m]));
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        by_mode[m] = outcomes(f.run());
        const auto run = test::read_checked_json(f.run() / "run.json", "run");
        CHECK(std::string(run["harness_processes"]["isolation"].GetString()) == modes[m]);
        CHECK(std::string(run["settings"]["isolation"].GetString()) == modes[m]);
        if (m == 0) {  // the crash, the hang and the sticky error each cost a worker
            CHECK(run["harness_processes"]["workers_replaced"].GetInt() == 3);
            CHECK(run["harness_processes"]["workers_started"].GetInt() >= 4);
        }
    }
    REQUIRE(by_mode[0].size() == 10);
    for (const auto& [label, outcome] : by_mode[0]) {
        INFO(label);
        CHECK(outcome == by_mode[1][label]);
    }
    CHECK_THAT(by_mode[0]["b_crash.cu"],
               Catch::StartsWith("crash | cuda-harness killed by signal 11"));
    CHECK_THAT(by_mode[0]["d_hang.cu"], Catch::StartsWith("timeout | cuda-harness timed out"));
    CHECK_THAT(by_mode[0]["e_illegal.cu"], Catch::StartsWith("cuda_error"));
    CHECK_THAT(by_mode[0]["c_after_crash.cu"], Catch::StartsWith("valid"));
    // A forged reply on the kernel's stdout is never read as one: the run's own reply counts.
    CHECK_THAT(by_mode[0]["i_printf.cu"], Catch::StartsWith("valid"));
}

TEST_CASE(
    "a worker serves many runs, the reference never shares a process with a candidate, and "
    "a crashed worker is replaced",
    "[integration][worker]") {
    optimizer_fixture f;
    write_bad_candidates(f);
    const fs::path log = f.dir / "served.log";
    const test::scoped_env env("CUOPT_FAKE_WORKER_LOG", log.c_str());
    const auto r = test::run_optimizer(files_run(f, "worker"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    std::set<std::string> reference_pids, candidate_pids;
    std::map<std::string, std::string> pid_of;  // attempt folder name -> pid
    for (const auto& [pid, request] : served_log(log)) {
        const bool candidate = request.find("/candidates/") != std::string::npos;
        (candidate ? candidate_pids : reference_pids).insert(pid);
        const fs::path folder = fs::path(request).parent_path();
        pid_of[folder.parent_path().filename().string() + "/" + folder.filename().string()] = pid;
    }
    REQUIRE(!reference_pids.empty());
    for (const std::string& pid : reference_pids) CHECK(candidate_pids.count(pid) == 0);
    // The initial kernel and the first candidates share a worker until the crash (iteration
    // 2) ends it; the hang (4) is killed; the sticky error (5) ends its worker after the reply.
    CHECK(pid_of["iter-00/attempt-0"] == pid_of["iter-01/attempt-0"]);
    CHECK(pid_of["iter-02/attempt-0"] == pid_of["iter-01/attempt-0"]);
    CHECK(pid_of["iter-03/attempt-0"] != pid_of["iter-02/attempt-0"]);
    CHECK(pid_of["iter-04/attempt-0"] == pid_of["iter-03/attempt-0"]);
    CHECK(pid_of["iter-05/attempt-0"] != pid_of["iter-04/attempt-0"]);
    CHECK(pid_of["iter-06/attempt-0"] != pid_of["iter-05/attempt-0"]);
    CHECK(pid_of["iter-08/attempt-0"] == pid_of["iter-06/attempt-0"]);
    CHECK(pid_of["iter-09/attempt-0"] == pid_of["iter-08/attempt-0"]);
    CHECK(candidate_pids.size() == 4);
}

TEST_CASE(
    "cuda-harness --worker answers each stdin line with one JSON line, refuses a bad line "
    "and goes on, and exits after a request it cannot trust the process for",
    "[integration][worker]") {
    test::scratch_folder dir;
    fs::copy(fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul", dir / "matmul");
    const fs::path request = dir / "matmul/request.json";  // inside the worker's --root
    dir.write("lines.txt", "{\"request\": 5}\n\n" + std::string("{\"request\": \"") +
                               request.string() + "\", \"response\": \"" +
                               (dir / "r.json").string() + "\"}\n" + request.string() + "\n");
    const auto r = test::run_program(
        "/bin/sh",
        {"-c", std::string(CUOPT_HARNESS_BINARY) + " --worker --quiet --root " +
                   dir.path().string() + " < " + (dir / "lines.txt").string() + "; echo exit=$?"});
    INFO(r.output);
    std::istringstream out(r.output);
    std::string first, second;
    std::getline(out, first);
    std::getline(out, second);
    const auto a = parse_json(first, "first reply");
    CHECK(a["exit_code"].GetInt() == 64);
    CHECK_THAT(a["messages"].GetString(),
               Catch::Contains("stdin line 1") && Catch::Contains("expected {\"request\": PATH"));
    const auto b = parse_json(second, "second reply");
    CHECK(std::string(b["request"].GetString()) == request.string());
    CHECK(std::string(b["response"].GetString()) == (dir / "r.json").string());
    CHECK(fs::exists(dir / "r.json"));
    CHECK(b["served"].GetInt() == 1);
    if (test::gpu_unavailable_reason().empty()) {
        CHECK(b["exit_code"].GetInt() == 0);  // a GPU: the third line is served too
        CHECK_THAT(r.output, Catch::Contains("\"served\":2") && Catch::Contains("exit=0"));
    } else {  // no driver: the worker says so once and leaves; the third line is never read
        CHECK(b["exit_code"].GetInt() == 14);
        CHECK_THAT(r.output, !Catch::Contains("\"served\":2") && Catch::Contains("exit=14"));
    }
    const auto bad = test::run_harness({"--worker", "x.json"});
    CHECK(bad.exit_code == 64);
    CHECK_THAT(bad.output, Catch::Contains("--worker reads its requests from stdin"));
}

namespace {

// With scavenge = 0 fills its output with a marker; with 1 copies what lies just past its own
// output's end (a range an earlier, larger output held) into that output.
const char* k_scrub_kernel = R"(
extern "C" __global__ void plant_or_scavenge(float* y, int n, int scavenge) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = scavenge ? y[n + i] : 12345.0f;
}
)";

std::string scrub_case(const std::string& name, int count, int scavenge) {
    const std::string n = std::to_string(count);
    return R"({ "name": ")" + name + R"(", "measure": false,
      "launch": { "grid": [132], "block": [256] },
      "args": [ { "name": "y", "dtype": "f32", "count": )" +
           n + R"(, "output_file": ")" + name +
           R"(.bin" }, { "name": "n", "dtype": "i32", "value": )" + n +
           R"( }, { "name": "scavenge", "dtype": "i32", "value": )" + std::to_string(scavenge) +
           " } ] }";
}

std::string scrub_request(const std::string& cases) {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "plant_or_scavenge" },
      "cases": [ )" +
           cases + " ] }";
}

long markers_in(const fs::path& file) {
    long found = 0;
    for (const float v : test::read_values<float>(file)) found += v == 12345.0f;
    return found;
}

// The control: one one-shot harness (which never zeroes what it frees) runs plant then
// scavenge as two cases of one request; nullopt when scavenge could not run (the range past
// its output was unmapped).
std::optional<long> markers_found_one_shot(const test::scratch_folder& dir) {
    const auto r =
        test::run_harness({(dir / "c/req.json").string(), "--cache-dir", test::test_cache_dir()});
    INFO(r.output);
    if (r.exit_code == 13) return std::nullopt;
    REQUIRE(r.exit_code == 0);
    return markers_in(dir / "c/scavenge.bin");
}

// A worker serves plant, then scavenge, as two requests: how many markers scavenge found.
long markers_found_in_worker(const test::scratch_folder& dir) {
    const auto r = test::run_program(
        "/bin/sh", {"-c", "printf '%s\\n%s\\n' " + (dir / "p/req.json").string() + " " +
                              (dir / "s/req.json").string() + " | " + CUOPT_HARNESS_BINARY +
                              " --worker --root " + dir.path().string() + " --cache-dir " +
                              test::test_cache_dir()});
    INFO(r.output);
    REQUIRE_THAT(r.output, Catch::Contains("\"served\":1") && Catch::Contains("\"served\":2,"));
    REQUIRE_THAT(r.output, !Catch::Contains("\"exit_code\":13") && !Catch::Contains("retired"));
    return markers_in(dir / "s/scavenge.bin");
}

}  // namespace

TEST_CASE(
    "a worker zeroes what a request freed: the next kernel finds no earlier outputs past its own "
    "buffer, where a process that does not zero hands them from one case to the next",
    "[gpu][worker]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    for (const char* sub : {"p", "s", "c"}) {
        fs::create_directories(dir / sub);
        dir.write(std::string(sub) + "/k.cu", k_scrub_kernel);
    }
    // Sizes (floats) where the allocator may hand plant's freed range to scavenge: small
    // allocations come from pools that stay mapped.
    std::string tried;
    for (const auto& [planted, scavenged] : std::vector<std::pair<int, int>>{
             {1 << 16, 1 << 14}, {1 << 18, 1 << 16}, {1 << 20, 1 << 18}}) {
        dir.write("c/req.json", scrub_request(scrub_case("plant", planted, 0) + ", " +
                                              scrub_case("scavenge", scavenged, 1)));
        const std::optional<long> control = markers_found_one_shot(dir);
        tried += " " + std::to_string(planted) + "/" + std::to_string(scavenged) + ": " +
                 (control ? std::to_string(*control) : std::string("faulted")) + ";";
        if (!control || *control == 0) continue;
        INFO("markers found by the one-shot control, per size:" << tried);
        dir.write("p/req.json", scrub_request(scrub_case("plant", planted, 0)));
        dir.write("s/req.json", scrub_request(scrub_case("scavenge", scavenged, 1)));
        CHECK(markers_found_in_worker(dir) == 0);  // the control found them; the worker none
        return;
    }
    WARN(
        "skipped: the allocator never handed plant's freed range to scavenge here, so "
        "scrubbing cannot be told apart (markers found by the one-shot control, per size:"
        << tried << ")");
}

namespace {

// plant (mode 0) mallocs a block of n floats, fills it with a marker, never frees it and writes
// the block's address to its output; peek (mode 1) mallocs one block of the same size (so the
// context has a heap), then counts the markers at the address it is given and says whether its
// own block landed there.
const char* k_heap_kernel = R"(
extern "C" __global__ void heap_probe(unsigned* y, int n, int mode, unsigned low, unsigned high) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    float* own = static_cast<float*>(malloc(n * sizeof(float)));
    if (mode == 0) {
        const unsigned long long at = reinterpret_cast<unsigned long long>(own);
        y[0] = static_cast<unsigned>(at);
        y[1] = static_cast<unsigned>(at >> 32);
        if (own)
            for (int i = 0; i < n; ++i) own[i] = 12345.0f;
        return;
    }
    const float* p =
        reinterpret_cast<const float*>(static_cast<unsigned long long>(high) << 32 | low);
    unsigned found = 0;
    for (int i = 0; i < n; ++i) found += p[i] == 12345.0f;
    y[0] = found;
    y[1] = own == p;
}
)";

constexpr unsigned k_heap_floats = 4096;

// One case: plant, or peek at `address` (low and high 32 bits).
std::string heap_case(const std::string& name, int mode, const std::vector<unsigned>& address) {
    auto scalar = [](const char* arg, const char* dtype, unsigned long long v) {
        return std::string(R"(, { "name": ")") + arg + R"(", "dtype": ")" + dtype +
               R"(", "value": )" + std::to_string(v) + " }";
    };
    return R"({ "name": ")" + name +
           R"(", "measure": false, "launch": { "grid": [1], "block": [32] }, "args": [ )" +
           R"({ "name": "y", "dtype": "u32", "count": 2, "output_file": ")" + name + R"(.bin" })" +
           scalar("n", "i32", k_heap_floats) + scalar("mode", "i32", mode) +
           scalar("low", "u32", address[0]) + scalar("high", "u32", address[1]) + " ] }";
}

std::string heap_request(const std::string& cases) {
    return R"({ "schema_version": 1, "kernel": { "source_file": "k.cu", "entry": "heap_probe" },
      "cases": [ )" +
           cases + " ] }";
}

process_result run_in_pool(harness_workers& pool, const fs::path& request) {
    return pool.run(
        {CUOPT_HARNESS_BINARY, request.string(), "--quiet", "--cache-dir", test::test_cache_dir()},
        std::chrono::seconds(60));
}

}  // namespace

TEST_CASE(
    "a request whose kernel mallocs retires its worker: the next request, in a fresh worker, "
    "finds nothing where the first left a block on the device heap, where a second case in the "
    "same process finds the block whole",
    "[gpu][worker]") {
    REQUIRE_GPU_OR_SKIP();
    test::scratch_folder dir;
    for (const char* sub : {"p", "s", "c"}) {
        fs::create_directories(dir / sub);
        dir.write(std::string(sub) + "/k.cu", k_heap_kernel);
    }
    const auto pool = harness_workers::make(CUOPT_HARNESS_BINARY, make_child_process_runner());
    pool->serve_under(dir.path());
    dir.write("p/req.json", heap_request(heap_case("plant", 0, {0, 0})));
    const process_result planted = run_in_pool(*pool, dir / "p/req.json");
    INFO(planted.stdout_text << planted.stderr_text);
    REQUIRE(planted.exit_code == 0);
    CHECK_THAT(planted.stdout_text,
               Catch::Contains("\"retired\":\"its kernel uses the device heap (malloc)"));
    const std::vector<unsigned> address = test::read_values<unsigned>(dir / "p/plant.bin");
    REQUIRE((address[0] | address[1]) != 0);  // malloc gave a block

    dir.write("s/req.json", heap_request(heap_case("peek", 1, address)));
    const process_result peeked = run_in_pool(*pool, dir / "s/req.json");
    INFO(peeked.stdout_text << peeked.stderr_text);
    const worker_stats stats = pool->stats();
    CHECK(stats.started == 2);  // the retired worker was not asked again
    CHECK(stats.retired >= 1);
    CHECK(stats.replaced == 0);
    // A fresh context's heap either does not cover the address (a fault) or is new memory there.
    REQUIRE((peeked.exit_code == 0 || peeked.exit_code == 13));
    if (peeked.exit_code == 0) CHECK(test::read_values<unsigned>(dir / "s/peek.bin")[0] == 0);

    // The control: plant and peek as two cases of one request, in one process and context.
    dir.write("c/req.json",
              heap_request(heap_case("plant", 0, {0, 0}) + ", " + heap_case("peek", 1, address)));
    const auto control =
        test::run_harness({(dir / "c/req.json").string(), "--cache-dir", test::test_cache_dir()});
    INFO(control.output);
    REQUIRE(control.exit_code == 0);
    if (test::read_values<unsigned>(dir / "c/plant.bin") != address) {
        WARN(
            "skipped: the control's block landed elsewhere (heap addresses are not "
            "deterministic here), so it cannot show what the fresh worker would have seen");
        return;
    }
    CHECK(test::read_values<unsigned>(dir / "c/peek.bin")[0] == k_heap_floats);
}

TEST_CASE(
    "a worker retires cleanly after a kernel that mallocs: its run keeps its verdict, the next "
    "run gets a fresh worker, and run.json counts it retired, not replaced",
    "[integration][worker]") {
    optimizer_fixture f;
    f.dir.write("cands/a_fast.cu", f.kernel("FAKE_MS=1"));
    f.dir.write("cands/b_heap.cu", f.kernel("FAKE_MS=0.9 FAKE_DEVICE_HEAP"));
    f.dir.write("cands/c_after_heap.cu", f.kernel("FAKE_MS=0.8"));
    f.dir.write("cands/d_same_worker.cu", f.kernel("FAKE_MS=0.7"));
    const fs::path log = f.dir / "served.log";
    const test::scoped_env env("CUOPT_FAKE_WORKER_LOG", log.c_str());
    const auto r = test::run_optimizer(files_run(f, "worker"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto by_label = outcomes(f.run());
    for (const char* label : {"a_fast.cu", "b_heap.cu", "c_after_heap.cu", "d_same_worker.cu"})
        CHECK_THAT(by_label.at(label), Catch::StartsWith("valid"));
    std::map<std::string, std::string> pid_of;  // iteration folder -> pid
    for (const auto& [pid, request] : served_log(log))
        if (request.find("/candidates/") != std::string::npos)
            pid_of[fs::path(request).parent_path().parent_path().filename().string()] = pid;
    CHECK(pid_of["iter-00"] == pid_of["iter-01"]);
    CHECK(pid_of["iter-01"] == pid_of["iter-02"]);  // a_fast's worker went on to b_heap
    CHECK(pid_of["iter-03"] != pid_of["iter-02"]);  // b_heap retired its worker
    CHECK(pid_of["iter-04"] == pid_of["iter-03"]);
    const auto run = test::read_checked_json(f.run() / "run.json", "run");
    CHECK(run["harness_processes"]["workers_retired"].GetInt() == 1);
    CHECK(run["harness_processes"]["workers_replaced"].GetInt() == 0);
}

TEST_CASE(
    "on a GPU the pilot gives the same verdicts with workers as with a process per run, "
    "and the same label's medians within a few percent",
    "[gpu][worker]") {
    REQUIRE_GPU_OR_SKIP();
    std::map<std::string, std::pair<std::string, double>> by_mode[2];
    const char* modes[] = {"worker", "process"};
    for (int m = 0; m < 2; ++m) {
        optimizer_fixture f;  // the pilot; the fake's marker comment means nothing on a GPU
        const auto r = test::run_optimizer(
            test::joined(test::optimize_args(f.dir.path(), CUOPT_HARNESS_BINARY),
                         {"--max-iterations", "2", "--no-evidence", "--isolation", modes[m],
                          "--seed", "3", "--min-gain", "1"}));  // the best never moves: same path
        INFO(r.output);
        REQUIRE(r.exit_code == 0);
        const auto history = test::read_checked_json(f.run() / "history.json", "history");
        for (const auto& a : history["attempts"].GetArray())
            by_mode[m][a["label"].GetString()] = {
                a["verdict"].GetString(),
                a["geomean_ms"].IsNumber() ? a["geomean_ms"].GetDouble() : 0.0};
    }
    REQUIRE(by_mode[0].size() == by_mode[1].size());
    for (const auto& [label, outcome] : by_mode[0]) {
        INFO(label);
        REQUIRE(by_mode[1].count(label));
        CHECK(outcome.first == by_mode[1][label].first);
        if (outcome.second > 0)
            CHECK(outcome.second == Approx(by_mode[1][label].second).epsilon(0.05));
    }
}

TEST_CASE(
    "a worker line whose path holds a NUL byte is refused: the file opened would not be "
    "the one checked against --root",
    "[integration][worker]") {
    test::scratch_folder root, outside;
    fs::copy(fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul", root / "matmul");
    // Read whole, the response path climbs out of `escape.json` and back into the root; cut at
    // the NUL, as open(2) would read it, it is `escape.json` outside the root.
    const fs::path escape = outside / "escape.json";
    std::string climb;
    for (auto it = std::next(escape.begin()); it != escape.end(); ++it) climb += "/..";
    const std::string line = "{\"request\": \"" + (root / "matmul/request.json").string() +
                             "\", \"response\": \"" + escape.string() + "\\u0000" + climb +
                             (root / "r.json").string() + "\"}\n";
    root.write("lines.txt",
               line + (root / "matmul/request.json").string() + std::string(1, '\0') + "x\n");
    const auto r = test::run_program(
        "/bin/sh", {"-c", std::string(CUOPT_HARNESS_BINARY) + " --worker --quiet --root " +
                              root.path().string() + " < " + (root / "lines.txt").string()});
    INFO(r.output);
    std::istringstream out(r.output);
    for (int i = 1; i <= 2; ++i) {  // the lines are numbered as read
        std::string reply;
        REQUIRE(std::getline(out, reply));
        const auto doc = parse_json(reply, "reply");
        CHECK(doc["exit_code"].GetInt() == 64);
        // Line 1's NUL is escaped (\u0000), which the JSON reader refuses; line 2's is a raw
        // byte in a plain path line.
        CHECK_THAT(doc["messages"].GetString(),
                   Catch::Contains("stdin line " + std::to_string(i)) &&
                       Catch::Contains(i == 1 ? "holds U+0000 (NUL)" : "a path holds a NUL byte"));
    }
    CHECK(!fs::exists(escape));
    CHECK(!fs::exists(root / "r.json"));
}

TEST_CASE(
    "a worker refuses, line by line, a response that is a folder or one of the request's own "
    "files and a request linked in from elsewhere, echoes a long line only in part, and appends "
    "its replies to a >> log",
    "[integration][worker]") {
    test::scratch_folder root, elsewhere;
    fs::copy(fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul", root / "matmul");
    fs::copy(fs::path(CUOPT_SOURCE_DIR) / "examples/harness/matmul", elsewhere / "matmul");
    const fs::path request = root / "matmul/request.json";
    const std::string source_before = test::read_text(root / "matmul/matmul_f32.cu");
    fs::create_directories(root / "taken.json");
    fs::create_symlink(elsewhere / "matmul/request.json", root / "linked.json");
    auto line = [&](const fs::path& response) {
        return "{\"request\": \"" + request.string() + "\", \"response\": \"" + response.string() +
               "\"}\n";
    };
    root.write("lines.txt",
               line(root / "taken.json") + line(request) + line(root / "matmul/matmul_f32.cu") +
                   (root / "linked.json").string() + "\n" + std::string(1 << 20, 'x') + "\n");
    root.write("log.txt", "kept\n");
    const auto r = test::run_program(
        "/bin/sh", {"-c", std::string(CUOPT_HARNESS_BINARY) + " --worker --quiet --root " +
                              root.path().string() + " < " + (root / "lines.txt").string() +
                              " >> " + (root / "log.txt").string() + "; echo exit=$?"});
    INFO(r.output);
    CHECK_THAT(r.output, Catch::Contains("exit=0"));
    const std::string log = test::read_text(root / "log.txt");
    REQUIRE(log.rfind("kept\n", 0) == 0);  // appended, not truncated
    CHECK(log.size() < 64 * 1024);         // the 1 MiB line is not handed back
    std::istringstream out(log.substr(5));
    const std::vector<std::string> expected = {
        "taken.json': is a directory; expected a file path", "is the request itself",
        "exists and is not an earlier cuda-harness response", "linked.json' leads to",
        "1048576 bytes; expected a request path"};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        std::string reply;
        REQUIRE(std::getline(out, reply));
        const auto doc = parse_json(reply, "reply");
        CHECK(doc["exit_code"].GetInt() == 64);
        CHECK_THAT(
            doc["messages"].GetString(),
            Catch::Contains("stdin line " + std::to_string(i + 1)) && Catch::Contains(expected[i]));
    }
    CHECK(test::read_text(root / "matmul/matmul_f32.cu") == source_before);
    CHECK(fs::is_directory(root / "taken.json"));
    CHECK_THAT(test::read_text(request), Catch::Contains("\"kernel\""));
}
