#include "harness/cubin_cache.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "test_support.hpp"

using namespace cuopt;
namespace fs = std::filesystem;

namespace {

kernel_spec saxpy() {
    kernel_spec k;
    k.source =
        "extern \"C\" __global__ void saxpy(float a, const float* x, float* y) { y[threadIdx.x] += "
        "a * x[threadIdx.x]; }";
    k.source_name = "s.cu";
    k.entry = "saxpy";
    return k;
}

}  // namespace

TEST_CASE("a second compile of the same kernel is a cache hit with the same cubin and log") {
    test::scratch_folder dir;
    const cubin_cache cache(dir / "cache");
    const compile_result first = compile_cached(saxpy(), "sm_90", &cache);
    REQUIRE(first.ok);
    CHECK_FALSE(first.cache_hit);
    const compile_result second = compile_cached(saxpy(), "sm_90", &cache);
    CHECK(second.cache_hit);
    CHECK(second.cubin_sha256 == first.cubin_sha256);
    CHECK(second.log == first.log);
    CHECK(second.lowered_name == "saxpy");
    CHECK(second.ptxas.registers == first.ptxas.registers);
}

TEST_CASE("the cache key changes with the source - a define - an option and the arch") {
    const std::string base = cubin_cache::key_for(saxpy(), "sm_90");
    kernel_spec k = saxpy();
    k.source += " ";
    CHECK(cubin_cache::key_for(k, "sm_90") != base);
    k = saxpy();
    k.defines = {{"X", "1"}};
    CHECK(cubin_cache::key_for(k, "sm_90") != base);
    k = saxpy();
    k.compile_options = {"--use_fast_math"};
    CHECK(cubin_cache::key_for(k, "sm_90") != base);
    CHECK(cubin_cache::key_for(saxpy(), "sm_80") != base);
    CHECK(cubin_cache::key_for(saxpy(), "sm_90") == base);
}

TEST_CASE("a corrupted cache entry is a miss that recompiles") {
    test::scratch_folder dir;
    const cubin_cache cache(dir / "cache");
    const compile_result first = compile_cached(saxpy(), "sm_90", &cache);
    std::ofstream(dir / "cache" / (first.cache_key + ".cubin"), std::ios::binary | std::ios::trunc)
        << "garbage";
    const compile_result again = compile_cached(saxpy(), "sm_90", &cache);
    CHECK_FALSE(again.cache_hit);
    CHECK(again.cubin_sha256 == first.cubin_sha256);
}

TEST_CASE("failed compiles and kernels with include-path options are never cached") {
    test::scratch_folder dir;
    const cubin_cache cache(dir / "cache");
    kernel_spec bad = saxpy();
    bad.source += " oops";
    CHECK_FALSE(compile_cached(bad, "sm_90", &cache).ok);
    CHECK_FALSE(compile_cached(bad, "sm_90", &cache).cache_hit);
    kernel_spec with_include = saxpy();
    with_include.compile_options = {"-I" + dir.path().string()};
    CHECK_FALSE(cubin_cache::cacheable(with_include));
    compile_cached(with_include, "sm_90", &cache);
    CHECK_FALSE(compile_cached(with_include, "sm_90", &cache).cache_hit);
}

TEST_CASE(
    "with no cache folder configured the cache is a private folder of ours in TMPDIR, and "
    "one another user could have planted is not used",
    "[security]") {
    test::scratch_folder dir;
    const test::scoped_env no_dir("CUDA_HARNESS_CACHE_DIR", nullptr),
        no_xdg("XDG_CACHE_HOME", nullptr), no_home("HOME", nullptr),
        tmpdir("TMPDIR", dir.path().c_str());
    const fs::path expected = dir / ("cuda-harness-cache-" + std::to_string(::geteuid()));
    CHECK(cubin_cache::default_folder() == expected);  // made now, 0700
    CHECK((fs::status(expected).permissions() & fs::perms::all) == fs::perms::owner_all);
    CHECK(cubin_cache::default_folder() == expected);  // ours already: used again

    fs::permissions(expected, fs::perms::all);  // anyone may write there: a cubin could be planted
    CHECK(cubin_cache::default_folder().empty());
    fs::remove(expected);
    fs::create_directories(dir / "elsewhere");
    fs::create_directory_symlink(dir / "elsewhere", expected);  // a link: refused
    CHECK(cubin_cache::default_folder().empty());
    fs::remove(expected);
    if (::geteuid() == 0) {  // a folder of another user's, made before us
        fs::create_directory(expected);
        fs::permissions(expected, fs::perms::owner_all);
        REQUIRE(::chown(expected.c_str(), 65534, 65534) == 0);
        CHECK(cubin_cache::default_folder().empty());
    }

    const cubin_cache none{fs::path()};  // no folder: a cache that finds and stores nothing
    compile_result r;
    r.ok = true;
    r.cache_key = "k";
    none.store(r);
    CHECK_FALSE(none.find("k"));
    CHECK_FALSE(fs::exists("k.json"));
    CHECK_FALSE(fs::exists("k.cubin"));
}

TEST_CASE("a source that includes a header beside it is never cached, toolkit headers are") {
    kernel_spec k = saxpy();
    CHECK(cubin_cache::cacheable(k));
    for (const char* line : {"#include \"params.h\"\n", "  #  include \"params.h\"\n",
                             "#define P \"params.h\"\n#include P\n", "#include_next \"a.h\"\n"}) {
        INFO(line);
        k.source = std::string(line) + saxpy().source;
        CHECK_FALSE(cubin_cache::cacheable(k));
    }
    k.source = "#include <cuda_fp16.h>\n" + saxpy().source;
    CHECK(cubin_cache::cacheable(k));
}

TEST_CASE(
    "an include the preprocessor would see through splices, comments, digraphs, trigraphs, "
    "literals or __has_include keeps a source out of the cache, a plain toolkit include does "
    "not",
    "[security]") {
    const std::string body = saxpy().source;
    // Each of these reads p.h beside the kernel under NVRTC or GCC (the differential fuzzing of
    // this check found most of them in an earlier, tokenizing version).
    for (const char* head : {"#\\\ninclude \"p.h\"\n",
                             "#/**/include \"p.h\"\n",
                             "%:include \"p.h\"\n",
                             "\f#include \"p.h\"\n",
                             "\v # include\f\"p.h\"\n",
                             "?\?=include \"p.h\"\n",
                             "/* two\nlines */ #include \"p.h\"\n",
                             "#inc\\\nlude \"p.h\"\n",
                             "#inc\\\r\nlude \"p.h\"\n",
                             "// c \\ \n#include \"p.h\"\n",
                             "#inc?\?/\nlude \"p.h\"\n",
                             "#if __has_include(\"p.h\")\n#endif\n",
                             "#if __has_include(P)\n#endif\n",
                             "#define H __has_include\n#if H(\"p.h\")\n#endif\n",
                             "#include P\n",
                             "#include\n",
                             "#include </abs/folder/p.h>\n",
                             "#include <../../../../abs/folder/p.h>\n",
                             "#if __has_include(</*>)\n#endif\n",
                             "const char* s = R\"x(a\"/*)x\";\n#include \"p.h\"\n// */\n",
                             "#define X 1'/*'\n#include \"p.h\"\n// */\n",
                             "#define X \"a\"R\"x(\"\n#include \"p.h\"\n",
                             "#define X '\\\\\n\n#include \"p.h\"\n",
                             "#import \"p.h\"\n",
                             "#embed \"p.bin\"\n",
                             "int n = 1'000; \n#include \"p.h\"\n"}) {
        INFO(head);
        CHECK(names_outside_files(std::string(head) + body));
    }
    for (const char* head :
         {"#include <cuda_fp16.h>\n", "  #  include\t<cuda/std/cmath>  // fp16 maths\r\n",
          "#define TWICE(x) \\\n  ((x) + (x))\n", ""}) {
        INFO(head);
        CHECK_FALSE(names_outside_files(std::string(head) + body));
    }
    // The -D values are source too; precompiled headers are files on disk.
    kernel_spec k = saxpy();
    CHECK(cubin_cache::cacheable(k));
    k.defines = {{"H", "__has_include(\"p.h\")"}};
    CHECK_FALSE(cubin_cache::cacheable(k));
    k.defines = {{"N", "4"}};
    CHECK(cubin_cache::cacheable(k));
    k.compile_options = {"--use-pch"};
    CHECK_FALSE(cubin_cache::cacheable(k));
    // Long runs of blanks or quotes are a pass over the text, never a recursion or a rescan.
    const std::string blanks = "#" + std::string(1 << 20, ' ') + "include <cuda_fp16.h>\n";
    CHECK_FALSE(names_outside_files(blanks));
    std::string quotes;
    for (int i = 0; i < 200000; ++i) quotes += "R\"\";\n 1\"\"";
    CHECK_FALSE(names_outside_files(quotes));
}

TEST_CASE(
    "a cache folder named by the environment is used only when it is ours alone, as the "
    "TMPDIR one",
    "[security]") {
    test::scratch_folder dir;
    const fs::path mine = dir / "made" / "cache";
    {
        const test::scoped_env env("CUDA_HARNESS_CACHE_DIR", mine.c_str());
        CHECK(cubin_cache::default_folder() == mine);  // made now, 0700
        CHECK((fs::status(mine).permissions() & fs::perms::all) == fs::perms::owner_all);
        fs::permissions(mine, fs::perms::all);  // another user could plant a cubin
        CHECK(cubin_cache::default_folder().empty());
        fs::permissions(mine, fs::perms::owner_all);
        const test::scoped_env xdg("CUDA_HARNESS_CACHE_DIR", nullptr);
        const test::scoped_env link("XDG_CACHE_HOME", (dir / "xdg").c_str());
        fs::create_directories(dir / "xdg");
        fs::create_directory_symlink(mine, dir / "xdg" / "cuda-harness");
        CHECK(cubin_cache::default_folder().empty());  // a link: not followed
    }
    // Inside a folder others may write (not sticky), ours could be renamed away and replaced.
    fs::create_directories(dir / "open" / "c");
    fs::permissions(dir / "open" / "c", fs::perms::owner_all);
    fs::permissions(dir / "open", fs::perms::all);
    {
        const test::scoped_env env("CUDA_HARNESS_CACHE_DIR", (dir / "open" / "c").c_str());
        CHECK(cubin_cache::default_folder().empty());
    }
    if (::geteuid() == 0) {  // another user's folder, as root would be handed it
        fs::create_directories(dir / "theirs");
        fs::permissions(dir / "theirs", fs::perms::owner_all);
        REQUIRE(::chown((dir / "theirs").c_str(), 65534, 65534) == 0);
        const test::scoped_env env("CUDA_HARNESS_CACHE_DIR", (dir / "theirs").c_str());
        CHECK(cubin_cache::default_folder().empty());
    }
}
