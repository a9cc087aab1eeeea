// The planted-link attack of issue 22, through the real cuda-optimizer: another local user
// (uid 65534, through setpriv) plants, in a shared sticky TMPDIR, the folders and links the
// optimizer's files would have had under predictable names, pointing at the victim's
// authorized_keys; the victim (root) then runs `check`. Nothing of the victim's may change.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "common/file_io.hpp"
#include "common/sha256.hpp"
#include "test_support.hpp"

extern char** environ;

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

constexpr int k_attacker = 65534;  // nobody

// A child started but held before exec, so that the attacker can plant for its pid.
struct held_child {
    pid_t pid = -1;
    int gate = -1;  // write one byte to let it exec
};

held_child start_held(const std::vector<std::string>& argv, const std::string& tmpdir,
                      const fs::path& output) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_text = {"TMPDIR=" + tmpdir};
    for (char** e = environ; *e; ++e)
        if (std::string(*e).rfind("TMPDIR=", 0) != 0) env_text.emplace_back(*e);
    std::vector<char*> env;
    for (std::string& e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    int gate[2];
    REQUIRE(::pipe2(gate, O_CLOEXEC) == 0);
    const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(out >= 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // only async-signal-safe calls until exec
        ::close(gate[1]);
        char c;
        while (::read(gate[0], &c, 1) < 0 && errno == EINTR) {
        }
        ::dup2(out, STDOUT_FILENO);
        ::dup2(out, STDERR_FILENO);
        ::execve(args[0], args.data(), env.data());
        ::_exit(127);
    }
    ::close(gate[0]);
    ::close(out);
    return {pid, gate[1]};
}

int release_and_wait(held_child& c, std::chrono::seconds limit) {
    REQUIRE(::write(c.gate, "x", 1) == 1);
    ::close(c.gate);
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(c.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > end) {
            ::kill(c.pid, SIGKILL);
            ::waitpid(c.pid, &status, 0);
            FAIL("the victim's check did not end within " << limit.count() << " s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every entry under `root`: its type, owner and mode, and a regular file's size and sha256. A
// folder's own times are left out: one made and removed inside it changes them.
std::map<std::string, std::string> tree_of(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        struct stat st {};
        REQUIRE(::lstat(it->path().c_str(), &st) == 0);
        std::string what = std::to_string(st.st_uid) + " " + std::to_string(st.st_mode);
        if (S_ISREG(st.st_mode))
            what += " " + std::to_string(st.st_size) + " " + sha256_file_hex(it->path());
        if (S_ISLNK(st.st_mode)) what += " -> " + fs::read_symlink(it->path()).string();
        out[fs::relative(it->path(), root).string()] = what;
    }
    return out;
}

// What differs between two tree_of()s, one line per entry; "" when nothing does.
std::string changes(const std::map<std::string, std::string>& before,
                    const std::map<std::string, std::string>& after) {
    std::string out;
    for (const auto& [name, what] : after) {
        const auto it = before.find(name);
        if (it == before.end())
            out += "new: " + name + " (" + what + ")\n";
        else if (it->second != what)
            out += "changed: " + name + " (" + it->second + " -> " + what + ")\n";
    }
    for (const auto& [name, what] : before)
        if (!after.count(name)) out += "gone: " + name + " (" + what + ")\n";
    return out;
}

std::string why_no_attack() {
    if (::geteuid() != 0) return "not root: the attack needs a victim (root) and uid 65534";
    if (test::run_program("setpriv", {"--version"}).exit_code != 0) return "no setpriv here";
    return "";
}

}  // namespace

TEST_CASE(
    "links another user planted in a shared TMPDIR for the next pids do not let check "
    "overwrite the victim's files, nor write anything outside its own folders",
    "[integration][security]") {
    if (const std::string why = why_no_attack(); !why.empty()) {
        WARN("skipped: " << why);
        return;
    }
    test::optimizer_fixture f;
    test::scratch_folder logs;
    fs::permissions(f.dir.path(), fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
    const fs::path shared = f.dir / "shared-tmp";  // as /tmp: anyone writes, sticky
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
    const fs::path keys = f.dir / "root-home/.ssh/authorized_keys";
    const std::string key_text = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI victim@host\n";
    f.dir.write("root-home/.ssh/authorized_keys", key_text);
    fs::permissions(keys, fs::perms::owner_read | fs::perms::owner_write);
    fs::permissions(f.dir / "root-home", fs::perms::owner_all);

    std::vector<std::string> argv = f.args();
    argv[0] = "check";
    const char* other_build = std::getenv("CUOPT_OPTIMIZER_BINARY");  // to attack another build
    argv.insert(argv.begin(), other_build && *other_build ? other_build : CUOPT_OPTIMIZER_BINARY);
    held_child victim = start_held(argv, shared.string(), logs / "check.out");

    // The attacker plants for the next pids (the victim is held, so its pid is surely in range
    // on a busy machine): the preflight's folder and the temporary names of the files the
    // optimizer writes there, each a link to the victim's authorized_keys.
    const std::string plant = R"(cd "$1" || exit 1
for p in $(seq "$3" "$4"); do
  d=cuda-optimizer-preflight-$p
  mkdir -m 777 "$d" || exit 1
  for n in initial.cu reference.cu request.json response.json; do
    ln -s "$2" "$d/$n.tmp-$p" || exit 1
  done
done)";
    const auto attacker = test::run_program(
        "setpriv",
        {"--reuid=" + std::to_string(k_attacker), "--regid=" + std::to_string(k_attacker),
         "--clear-groups", "sh", "-c", plant, "plant", shared.string(), keys.string(),
         std::to_string(victim.pid - 8), std::to_string(victim.pid + 56)});
    INFO(attacker.output);
    REQUIRE(attacker.exit_code == 0);
    REQUIRE(fs::is_symlink(shared / ("cuda-optimizer-preflight-" + std::to_string(victim.pid)) /
                           ("initial.cu.tmp-" + std::to_string(victim.pid))));
    const auto before = tree_of(f.dir.path());

    const int exit_code = release_and_wait(victim, std::chrono::seconds(180));
    const std::string output = read_text_file(logs / "check.out");
    INFO("check exit " << exit_code << ":\n" << output);
    CHECK_THAT(output, Catch::Contains("ok    initial compiles"));  // the preflight's files
    CHECK(read_text_file(keys) == key_text);
    CHECK(changes(before, tree_of(f.dir.path())) == "");  // its temporary folder is gone too
}
