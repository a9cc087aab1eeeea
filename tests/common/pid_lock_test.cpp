// pid_lock's file: a hard link planted at its name is refused, never truncated; a holder that
// removes the file as it lets go never lets two takers hold locks on two files of one name;
// and the file stays while a child the lock was handed down to still holds it.
#include "common/pid_lock.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "common/child_process.hpp"
#include "common/file_io.hpp"
#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

TEST_CASE(
    "a hard link planted at a lock file's name is refused and the file it names is not "
    "changed",
    "[pid_lock]") {
    test::scratch_folder dir;
    const fs::path victim = dir.write("elsewhere/victim.txt", "keep me\n");
    fs::create_directories(dir / "run");
    fs::create_hard_link(victim, dir / "run/.lock");
    std::string holder;
    CHECK_THROWS_WITH(pid_lock::try_take(dir / "run/.lock", 0644, holder),
                      (dir / "run/.lock").string() +
                          ": a hard link (2 names); expected a lock file of its own, not written");
    CHECK(read_text_file(victim) == "keep me\n");
    CHECK(fs::hard_link_count(victim) == 2);  // nothing removed either
}

TEST_CASE("threads that take a lock file and remove it as they let go never hold it two at once",
          "[pid_lock]") {
    test::scratch_folder dir;
    const fs::path file = dir / ".lock";
    std::atomic<int> holding{0}, most{0}, taken{0};
    const auto take_and_remove = [&] {
        for (int round = 0; round < 150; ++round) {
            std::optional<pid_lock> lock;
            while (!lock) {
                std::string holder;
                lock = pid_lock::try_take(file, 0644, holder);
                if (!lock) std::this_thread::yield();
            }
            const int now = ++holding;
            for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            --holding;
            ++taken;
            lock->release_removing();
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(take_and_remove);
    for (std::thread& t : threads) t.join();
    CHECK(taken == 600);
    CHECK(most == 1);
}

TEST_CASE(
    "a lock file stays while a child it was handed down to holds it, and goes once none "
    "does",
    "[pid_lock][integration]") {
    test::scratch_folder dir;
    const fs::path file = dir / ".lock";
    std::string holder;
    std::optional<pid_lock> lock = pid_lock::try_take(file, 0644, holder);
    REQUIRE(lock);
    CHECK(lock->created());
    hand_down_to_children(lock->fd());
    child_process child(std::vector<std::string>{"/bin/sleep", "0.5"}, child_streams{});
    hand_down_to_children(-1);
    CHECK_FALSE(lock->release_removing());
    CHECK(fs::exists(file));
    CHECK_FALSE(pid_lock::try_take(file, 0644, holder));  // the child holds it still
    child.wait();
    lock = pid_lock::try_take(file, 0644, holder);
    REQUIRE(lock);
    CHECK_FALSE(lock->created());
    CHECK(lock->release_removing());
    CHECK_FALSE(fs::exists(file));
}
