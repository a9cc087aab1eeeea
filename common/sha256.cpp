#include "sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

namespace cuopt {

namespace {

struct md_ctx_deleter {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

class sha256_stream {
  public:
    sha256_stream() : m_ctx(EVP_MD_CTX_new()) {
        if (!m_ctx || EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr) != 1)
            throw std::runtime_error("OpenSSL: EVP_DigestInit_ex(sha256) failed");
    }
    void update(const void* data, std::size_t size) {
        if (EVP_DigestUpdate(m_ctx.get(), data, size) != 1)
            throw std::runtime_error("OpenSSL: EVP_DigestUpdate failed");
    }
    std::string hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_DigestFinal_ex(m_ctx.get(), digest, &len) != 1)
            throw std::runtime_error("OpenSSL: EVP_DigestFinal_ex failed");
        static const char* k_hex = "0123456789abcdef";
        std::string out;
        for (unsigned int i = 0; i < len; ++i) {
            out += k_hex[digest[i] >> 4];
            out += k_hex[digest[i] & 15];
        }
        return out;
    }

  private:
    std::unique_ptr<EVP_MD_CTX, md_ctx_deleter> m_ctx;
};

}  // namespace

std::string sha256_hex(const void* data, std::size_t size) {
    sha256_stream s;
    s.update(data, size);
    return s.hex();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": cannot open for sha256");
    sha256_stream s;
    std::vector<char> chunk(1 << 20);
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        s.update(chunk.data(), static_cast<std::size_t>(in.gcount()));
    }
    return s.hex();
}

}  // namespace cuopt
