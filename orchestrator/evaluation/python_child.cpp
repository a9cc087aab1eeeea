#include "orchestrator/evaluation/python_child.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/landlock.hpp"
#include "common/message_text.hpp"
#include "common/sandbox_rules.hpp"

extern const unsigned char pytorch_side_py[];
extern const std::size_t pytorch_side_py_size;

namespace cuopt {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t k_max_answer_bytes = std::uintmax_t(64) << 20;

// What the interpreter is and reads; one JSON line on stdout.
const char* k_probe =
    "import json, os, sys, torch\n"
    "paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(torch.__file__)]\n"
    "paths += [p for p in sys.path if p]\n"
    "print(json.dumps({'torch': torch.__version__, 'python': sys.version.split()[0],\n"
    "                  'paths': paths, 'cuda': bool(torch.cuda.is_available())}))\n";

std::string on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string list = path ? path : "";
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t end = list.find(':', start);
        if (end == std::string::npos) end = list.size();
        const fs::path candidate = fs::path(list.substr(start, end - start)) / name;
        if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        start = end + 1;
    }
    return "";
}

// The last line of a child's output, printable (no escape sequence reaches a terminal), for a
// one-line error.
std::string tail_of(const std::string& text) {
    std::string t = text.size() > 600 ? text.substr(text.size() - 600) : text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const std::size_t line = t.rfind('\n');
    return printable(line == std::string::npos ? t : t.substr(line + 1));
}

// At most the last `bytes` of a file the child wrote (it may have made it any size).
std::string file_tail(const fs::path& file, std::size_t bytes) {
    std::ifstream in(file, std::ios::binary);
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size <= 0) return "";
    const std::streamoff from = size > std::streamoff(bytes) ? size - std::streamoff(bytes) : 0;
    in.seekg(from);
    std::string out(static_cast<std::size_t>(size - from), '\0');
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    return out;
}

// "" when `python` imports torch (filling `found`), else why not.
std::string probe(const std::string& python, process_runner& runner, python_interpreter& found) {
    const process_result r = runner.run({python, "-I", "-c", k_probe}, std::chrono::seconds(120));
    if (r.failed_to_start) return python + " does not start";
    if (r.timed_out || r.signal || r.exit_code != 0)
        return python + " cannot import torch (" +
               (r.exit_code == 1 ? tail_of(r.stderr_text) : r.describe()) + ")";
    try {
        const rapidjson::Document d = parse_json(tail_of(r.stdout_text), python + "'s probe");
        const json_field root(d, python + "'s probe");
        found.path = python;
        found.torch_version = root.text("torch");
        found.python_version = root.text("python");
        found.cuda = root.boolean("cuda");
        // The system prefixes are not roots of their own: the library folders under them are
        // (library_rules), and /usr as a whole holds more than an interpreter needs.
        for (const std::string& p : root.texts("paths"))
            if (fs::is_directory(p) && p != "/" && p != "/usr" && p != "/usr/local")
                found.roots.emplace_back(p);
    } catch (const std::exception& e) {
        return python + " answers the probe oddly: " + e.what();
    }
    return "";
}

void set_child_environment(const fs::path& folder) {
    for (const char* sub : {"home", "tmp", "cache"}) fs::create_directories(folder / sub);
    ::setenv("HOME", (folder / "home").c_str(), 1);
    ::setenv("TMPDIR", (folder / "tmp").c_str(), 1);
    ::setenv("XDG_CACHE_HOME", (folder / "cache").c_str(), 1);
    ::setenv("TORCHINDUCTOR_CACHE_DIR", (folder / "cache" / "inductor").c_str(), 1);
    ::setenv("TRITON_CACHE_DIR", (folder / "cache" / "triton").c_str(), 1);
    ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    // The driver's JIT cache of its own, never one a later harness run reads.
    ::setenv("CUDA_CACHE_PATH", (folder / "cache" / "nv").c_str(), 1);
    // getpass.getuser() (Inductor's and Triton's cache names) reads these before /etc/passwd.
    ::setenv("USER", "cuda-optimizer", 1);
    ::setenv("LOGNAME", "cuda-optimizer", 1);
    ::setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 1);  // no worker pool (its /dev/shm semaphores)
}

std::vector<landlock_rule> python_rules(const fs::path& folder, const fs::path& python, bool gpu,
                                        const std::vector<fs::path>& readable) {
    std::vector<landlock_rule> rules{{folder, landlock_access::read_write},
                                     {"/etc/ld.so.cache", landlock_access::read},
                                     {"/dev/null", landlock_access::device},
                                     {"/dev/urandom", landlock_access::read},
                                     {"/proc/cpuinfo", landlock_access::read},
                                     {"/proc/self/maps", landlock_access::read},
                                     {"/sys/devices/system/cpu", landlock_access::read}};
    for (const auto& more : {library_rules(), program_rules(fs::canonical(python)),
                             gpu ? driver_rules() : std::vector<landlock_rule>{}})
        rules.insert(rules.end(), more.begin(), more.end());
    for (const fs::path& p : readable) {
        rules.push_back({p, landlock_access::read});
        if (fs::is_directory(p)) rules.push_back({p, landlock_access::execute});  // Triton's ptxas
    }
    // torch.compile's tool chain: Triton runs its own ptxas (under the interpreter's roots) and
    // the C compiler for its launcher. Starting them reaches no file beyond these rules, and no
    // network.
    for (const char* tools : {"/usr/bin", "/usr/lib/gcc", "/usr/libexec", "/usr/local/cuda/bin"})
        rules.push_back({tools, landlock_access::execute});
    // The launcher's C source includes the C library's and Python's headers.
    for (const char* headers : {"/usr/include", "/usr/local/cuda/include"})
        if (fs::exists(headers)) rules.push_back({headers, landlock_access::read});
    // Inductor asks `ldconfig -p` where libcuda is (Ubuntu's /sbin/ldconfig is a script that
    // starts ldconfig.real); it reads /etc/ld.so.cache, allowed above.
    for (const char* ldconfig : {"/usr/sbin/ldconfig", "/usr/sbin/ldconfig.real"})
        if (fs::exists(ldconfig)) rules.push_back({ldconfig, landlock_access::execute});
    return rules;
}

}  // namespace

python_interpreter find_python(const std::string& setting, process_runner& runner) {
    std::vector<std::string> tried;
    std::vector<std::string> candidates;
    if (!setting.empty()) {
        candidates.push_back(fs::absolute(setting).string());
    } else {
        if (const std::string p = on_path("python3"); !p.empty()) candidates.push_back(p);
        candidates.push_back("/usr/bin/python3");
    }
    for (const std::string& c : candidates) {
        python_interpreter found;
        const std::string why = probe(c, runner, found);
        if (why.empty()) return found;
        tried.push_back(why);
    }
    std::string line = "no Python with torch for this imported problem: ";
    for (std::size_t i = 0; i < tried.size(); ++i) line += (i ? "; " : "") + tried[i];
    throw python_error(line + (setting.empty()
                                   ? "; give one with --python (Debian: apt-get install "
                                     "python3-torch)"
                                   : ""));
}

std::string run_pytorch_side(const python_interpreter& python, const python_job& job,
                             process_runner& runner) {
    write_file_atomic(job.folder / "pytorch_side.py", pytorch_side_py, pytorch_side_py_size);
    fs::remove(job.folder / "out.json");
    std::vector<std::string> argv{fs::read_symlink("/proc/self/exe").string(),
                                  "__confined-python",
                                  fs::absolute(job.folder).string(),
                                  job.gpu ? "gpu" : "cpu",
                                  python.path,
                                  job.mode};
    for (const fs::path& p : python.roots) argv.push_back(p.string());
    for (const fs::path& p : job.readable) argv.push_back(fs::absolute(p).string());
    const process_result r = runner.run(argv, job.timeout);
    const fs::path log = job.folder / "python.log";
    const std::string said = fs::is_regular_file(log) ? tail_of(file_tail(log, 4096)) : "";
    if (r.timed_out)
        throw python_error("the PyTorch child ran past " +
                           std::to_string(job.timeout.count() / 1000) + " s and was stopped");
    if (!fs::is_regular_file(job.folder / "out.json"))
        throw python_error("the PyTorch child ended (" + r.describe() + ") with no answer" +
                           (said.empty()
                                ? r.stderr_text.empty() ? "" : ": " + tail_of(r.stderr_text)
                                : ": " + said));
    // The child's own folder: checked and read in one open, so no link can be swapped in.
    untrusted_read answer = read_untrusted_file(job.folder / "out.json", k_max_answer_bytes);
    if (answer.refused != untrusted_read::refusal::none)
        throw python_error("the PyTorch child's answer is not a file of at most 64 MiB");
    return std::move(answer.text);
}

std::string printable(std::string text) {
    for (char& c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return text;
}

int serve_confined_python(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "cuda-optimizer __confined-python: started by cuda-optimizer only\n");
        return 64;
    }
    const fs::path folder = argv[2];
    const bool gpu = std::strcmp(argv[3], "gpu") == 0;
    const std::string python = argv[4];
    std::vector<fs::path> readable(argv + 6, argv + argc);
    try {
        set_child_environment(folder);
        const int log = ::open((folder / "python.log").c_str(),
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (log < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0) {
            std::perror("cuda-optimizer __confined-python: python.log");
            return 26;
        }
        // What the problem's code may write in all: its outputs and its log (a runaway print
        // or a file-filling loop stops here).
        const rlimit size{rlim_t(64) << 30, rlim_t(64) << 30};
        ::setrlimit(RLIMIT_FSIZE, &size);
        const rlimit core{0, 0};
        ::setrlimit(RLIMIT_CORE, &core);
        const rlimit processes{4096, 4096};  // a fork bomb stops here (root is not held to it)
        ::setrlimit(RLIMIT_NPROC, &processes);
        const confinement c = restrict_self(python_rules(folder, python, gpu, readable), true);
        if (!c.confined()) {
            std::fprintf(stderr, "cannot confine the PyTorch child: %s\n", c.reason.c_str());
            return 29;
        }
        if (::chdir(folder.c_str()) != 0) return 26;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cannot confine the PyTorch child: %s\n", e.what());
        return 29;
    }
    const std::string mode = argv[5];
    std::vector<const char*> args{
        python.c_str(), "-I", "pytorch_side.py", mode.c_str(), "job.json", "out.json", nullptr};
    ::execv(python.c_str(), const_cast<char* const*>(args.data()));
    std::perror(("cuda-optimizer __confined-python: " + python).c_str());
    return 20;
}

}  // namespace cuopt
