#pragma once
/// SHA-256 of bytes and files as lowercase hex (OpenSSL's EVP interface), used
/// for the cubin cache key, the cubin fingerprint and every output's checksum.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace cuopt {

std::string sha256_hex(const void* data, std::size_t size);
inline std::string sha256_hex(std::string_view text) {
    return sha256_hex(text.data(), text.size());
}
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace cuopt
