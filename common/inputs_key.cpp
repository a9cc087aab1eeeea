#include "common/inputs_key.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/counter_rng.h"
#include "common/file_io.hpp"
#include "common/json_document.hpp"
#include "common/json_fields.hpp"
#include "common/message_text.hpp"
#include "common/sha256.hpp"

namespace cuopt {

namespace fs = std::filesystem;

namespace {

void fill_random(void* out, std::size_t size) {
    auto* bytes = static_cast<unsigned char*>(out);
    std::size_t got = 0;
    while (got < size) {
        const ssize_t n = ::getrandom(bytes + got, size - got, 0);
        if (n < 0 && errno != EINTR)
            throw std::runtime_error(std::string("no random bytes from getrandom: ") +
                                     std::strerror(errno));
        if (n > 0) got += static_cast<std::size_t>(n);
    }
}

std::array<unsigned char, 16> key_bytes(const inputs_key_words& key) {
    std::array<unsigned char, 16> out{};
    for (std::size_t w = 0; w < 4; ++w)
        for (std::size_t b = 0; b < 4; ++b) out[4 * w + b] = (key[w] >> (8 * b)) & 0xFF;
    return out;
}

std::string hex_of(const inputs_key_words& key) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (const unsigned char b : key_bytes(key)) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// The file's bytes: no link followed, a regular file, at most 4 KiB.
std::string read_key_text(const fs::path& file) {
    untrusted_read r = read_untrusted_file(file, 4096);
    using refusal = untrusted_read::refusal;
    if (r.refused == refusal::link || r.refused == refusal::cannot_open)
        throw std::runtime_error(
            file.string() + ": cannot open the inputs key (" + std::strerror(r.error) +
            (r.refused == refusal::link ? "; a symbolic link is never followed" : "") + ")");
    if (r.refused != refusal::none)
        throw std::runtime_error(file.string() +
                                 ": the inputs key is not a regular file of at most 4096 bytes");
    return std::move(r.text);
}

}  // namespace

inputs_key_words draw_inputs_key() {
    inputs_key_words key{};
    fill_random(key.data(), sizeof key);
    return key;
}

std::uint64_t draw_random_u64() {
    std::uint64_t v = 0;
    fill_random(&v, sizeof v);
    return v;
}

void write_inputs_key(const fs::path& file, const inputs_key_words& key) {
    const std::string text = "{\n  \"schema_version\": 1,\n  \"key\": \"" + hex_of(key) +
                             "\",\n  \"note\": \"the secret that keys this run's generated "
                             "inputs: keep it out of every folder a kernel's compile reads\"\n}\n";
    write_file_with(
        file,
        [&text](int fd) {
            return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        },
        true, 0600);
}

inputs_key_words read_inputs_key(const fs::path& file) {
    const std::string name = file.filename().string();
    const rapidjson::Document doc = parse_json(read_key_text(file), name);
    const json_field root(doc, name);
    root["schema_version"].integer_in(1, 1);
    const json_field k = root["key"];
    const std::string hex = k.text();
    inputs_key_words key{};
    if (hex.size() != 32) k.fail("32 lowercase hex digits (128 bits)", quote_value(hex));
    for (std::size_t i = 0; i < 16; ++i) {
        const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) k.fail("32 lowercase hex digits (128 bits)", quote_value(hex));
        key[i / 4] |= static_cast<std::uint32_t>(hi * 16 + lo) << (8 * (i % 4));
    }
    return key;
}

std::string inputs_key_id(const inputs_key_words& key) {
    const auto bytes = key_bytes(key);
    return sha256_hex(bytes.data(), bytes.size()).substr(0, 16);
}

int keyed_checked_position(const inputs_key_words& key, std::uint64_t round, int positions) {
    if (positions <= 1) return 0;
    const cuopt_rng::stream_key k = cuopt_rng::derive_stream_key(key.data(), round, 0, 2);
    return static_cast<int>(cuopt_rng::keyed_bits(k, 0, 0) % static_cast<std::uint64_t>(positions));
}

std::array<std::uint32_t, 8> stream_key_of(const inputs_key_words& key, std::uint64_t round,
                                           std::uint64_t seed, std::uint32_t domain) {
    const cuopt_rng::stream_key k = cuopt_rng::derive_stream_key(key.data(), round, seed, domain);
    std::array<std::uint32_t, 8> out{};
    for (std::size_t i = 0; i < 8; ++i) out[i] = k.words[i];
    return out;
}

}  // namespace cuopt
