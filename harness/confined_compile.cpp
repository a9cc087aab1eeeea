#include "harness/confined_compile.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <stdexcept>

#include "common/child_process.hpp"
#include "common/landlock.hpp"
#include "harness/harness_sandbox.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

// The child's result on the pipe: length-prefixed fields in a fixed order.
class wire_out {
  public:
    void put(std::int64_t v) { m_bytes.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void put(const std::string& s) {
        put(static_cast<std::int64_t>(s.size()));
        m_bytes += s;
    }
    void put(const std::vector<std::string>& v) {
        put(static_cast<std::int64_t>(v.size()));
        for (const auto& s : v) put(s);
    }
    const std::string& bytes() const { return m_bytes; }

  private:
    std::string m_bytes;
};

class wire_in {
  public:
    explicit wire_in(std::string bytes) : m_bytes(std::move(bytes)) {}
    std::int64_t number() {
        std::int64_t v = 0;
        need(sizeof v);
        std::memcpy(&v, m_bytes.data() + m_at, sizeof v);
        m_at += sizeof v;
        return v;
    }
    std::string text() {
        const std::int64_t n = number();
        if (n < 0) throw std::runtime_error("a negative length");
        need(static_cast<std::size_t>(n));
        std::string s = m_bytes.substr(m_at, static_cast<std::size_t>(n));
        m_at += static_cast<std::size_t>(n);
        return s;
    }
    std::vector<std::string> texts() {
        std::vector<std::string> v(static_cast<std::size_t>(std::max<std::int64_t>(number(), 0)));
        for (auto& s : v) s = text();
        return v;
    }

  private:
    void need(std::size_t n) const {
        if (m_bytes.size() - m_at < n) throw std::runtime_error("a truncated result");
    }
    std::string m_bytes;
    std::size_t m_at = 0;
};

std::string encode(const compile_result& r, const std::string& failure) {
    wire_out w;
    w.put(failure);
    w.put(static_cast<std::int64_t>(r.ok) | static_cast<std::int64_t>(r.entry_missing) << 1);
    for (const std::string* s : {&r.problem, &r.log, &r.arch, &r.lowered_name, &r.cubin_sha256})
        w.put(*s);
    w.put(r.options);
    w.put(std::string(r.cubin.begin(), r.cubin.end()));
    for (long long v : {static_cast<long long>(r.ptxas.registers), r.ptxas.stack_frame_bytes,
                        r.ptxas.spill_store_bytes, r.ptxas.spill_load_bytes,
                        r.ptxas.static_shared_bytes, r.ptxas.constant_bytes})
        w.put(static_cast<std::int64_t>(v));
    return w.bytes();
}

compile_result decode(std::string bytes) {
    wire_in in(std::move(bytes));
    const std::string failure = in.text();
    if (!failure.empty()) throw nvrtc_error(failure);
    compile_result r;
    const std::int64_t flags = in.number();
    r.ok = flags & 1;
    r.entry_missing = flags & 2;
    for (std::string* s : {&r.problem, &r.log, &r.arch, &r.lowered_name, &r.cubin_sha256})
        *s = in.text();
    r.options = in.texts();
    const std::string cubin = in.text();
    r.cubin.assign(cubin.begin(), cubin.end());
    r.ptxas.registers = static_cast<int>(in.number());
    for (long long* v :
         {&r.ptxas.stack_frame_bytes, &r.ptxas.spill_store_bytes, &r.ptxas.spill_load_bytes,
          &r.ptxas.static_shared_bytes, &r.ptxas.constant_bytes})
        *v = in.number();
    return r;
}

void write_all(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

std::string read_all(int fd) {
    std::string bytes;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return bytes;
        bytes.append(buf, static_cast<std::size_t>(n));
    }
}

std::string encode_job(const kernel_spec& k, const std::string& arch, const fs::path& folder) {
    wire_out w;
    for (const std::string* s :
         {&arch, &folder.native(), &k.source, &k.source_name, &k.display_name, &k.entry})
        w.put(*s);
    w.put(k.compile_options);
    w.put(static_cast<std::int64_t>(k.defines.size()));
    for (const auto& [name, value] : k.defines) {
        w.put(name);
        w.put(value);
    }
    return w.bytes();
}

std::string describe_end(int status) {
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    return "exit " + std::to_string(WEXITSTATUS(status));
}

// Both ends of the two pipes to a compile child; whatever is still open closes with it.
struct child_pipes {
    int to_child[2] = {-1, -1};
    int from_child[2] = {-1, -1};
    int errors[2] = {-1, -1};  // the child's stderr
    ~child_pipes() {
        for (int fd :
             {to_child[0], to_child[1], from_child[0], from_child[1], errors[0], errors[1]})
            if (fd >= 0) ::close(fd);
    }
    static void close_end(int& fd) {
        ::close(fd);
        fd = -1;
    }
};

// Starts this very binary as `cuda-harness --compile-child` with an empty environment (no
// LD_PRELOAD, no profiler injection, no secret: only where the toolkit is), its stdin and stdout on
// the pipes. A fresh process, not a fork: a fork of a process that started the CUDA driver may not
// use it, and NVRTC calls into libcuda when it can load it (the child cannot: see compile_rules).
pid_t start_child(child_pipes& p) {
    if (::pipe2(p.to_child, O_CLOEXEC) != 0 || ::pipe2(p.from_child, O_CLOEXEC) != 0 ||
        ::pipe2(p.errors, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot make pipes for the compile (") +
                                 std::strerror(errno) + ")");
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, p.to_child[0], STDIN_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, p.from_child[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, p.errors[1], STDERR_FILENO);
    // Nothing else crosses: an inherited descriptor (a memfd, a pipe) could be reopened through
    // /proc/self/fd/N, which Landlock does not check for objects outside the file tree.
    ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    const std::string exe = harness_executable().string();
    char arg0[] = "cuda-harness", arg1[] = "--compile-child";
    char* argv[] = {arg0, arg1, nullptr};
    // Only where the toolkit is (toolkit_include_dir reads these) and a sanitized build's
    // settings: nothing else crosses.
    std::vector<std::string> env;
    for (const char* name : {"CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT", "ASAN_OPTIONS",
                             "UBSAN_OPTIONS", "LSAN_OPTIONS"})
        if (const char* v = std::getenv(name)) env.push_back(std::string(name) + "=" + v);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int failed = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    if (failed != 0)
        throw std::runtime_error("cannot start " + exe + " --compile-child (" +
                                 std::strerror(failed) + ")");
    child_pipes::close_end(p.to_child[0]);
    child_pipes::close_end(p.from_child[1]);
    child_pipes::close_end(p.errors[1]);
    return pid;
}

kernel_spec read_job(wire_in& in, std::string& arch, fs::path& folder) {
    arch = in.text();
    folder = in.text();
    kernel_spec k;
    for (std::string* s : {&k.source, &k.source_name, &k.display_name, &k.entry}) *s = in.text();
    k.compile_options = in.texts();
    for (std::int64_t n = in.number(); n > 0; --n) {
        std::string name = in.text();
        k.defines.emplace_back(std::move(name), in.text());
    }
    return k;
}

}  // namespace

compile_result compile_confined(const kernel_spec& kernel, const std::string& arch,
                                const fs::path& request_folder) {
    child_pipes pipes;
    const pid_t pid = start_child(pipes);
    // The child reads the whole job before it writes anything, so this cannot deadlock.
    write_all(pipes.to_child[1], encode_job(kernel, arch, request_folder));
    child_pipes::close_end(pipes.to_child[1]);
    // Its stderr is read beside its result (a sanitized build's warnings there; a dying NVRTC's
    // last words), kept only to explain a death.
    std::string bytes, errors;
    read_pipes_to_end(pipes.from_child[0], bytes, pipes.errors[0], errors);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !bytes.empty()) {
        try {
            return decode(std::move(bytes));
        } catch (const nvrtc_error&) {
            throw;
        } catch (const std::exception& e) {
            throw nvrtc_error(std::string("the confined compile sent ") + e.what());
        }
    }
    compile_result r;
    r.arch = arch;
    r.options = nvrtc_options(kernel, arch);
    r.problem = "NVRTC died compiling " + kernel.shown_name() + " for " + arch + " (" +
                describe_end(status) + "); the source may be what crashes it";
    if (!errors.empty()) r.problem += ": " + errors.substr(0, 2000);
    return r;
}

int serve_compile_child() {
    std::string failure;
    compile_result r;
    try {
        wire_in in(read_all(STDIN_FILENO));
        std::string arch;
        fs::path folder;
        const kernel_spec k = read_job(in, arch, folder);
        if (::chdir(folder.c_str()) != 0)
            throw std::runtime_error("cannot enter " + folder.string() + " (" +
                                     std::strerror(errno) + ")");
        const confinement c = restrict_self(compile_rules(folder), true);
        if (!c.confined()) throw std::runtime_error("cannot confine the compile: " + c.reason);
        r = compile_kernel(k, arch);
        if (!r.ok && !r.entry_missing) r.log = explain_refused_includes(r.log);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    write_all(STDOUT_FILENO, encode(r, failure));
    return 0;
}

std::string explain_refused_includes(const std::string& log) {
    // Every include NVRTC could not open gets the same words, whether the file is missing or
    // Landlock refused it: a kernel learns nothing about what exists outside its folder.
    static const std::regex missing(R"re(cannot open source file "([^"\n]*)"[^\n]*)re");
    std::string out;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string::npos) end = log.size();
        const std::string line = log.substr(start, end - start);
        std::smatch m;
        if (std::regex_search(line, m, missing))
            out += m.prefix().str() + "cannot open source file \"" + m[1].str() +
                   "\": not in the request's folder or the CUDA toolkit's headers (cuda-harness "
                   "compiles confined to them)" +
                   m.suffix().str();
        else
            out += line;
        if (end < log.size()) out += "\n";
        start = end + 1;
    }
    return out;
}

}  // namespace cuopt
