#pragma once
/// The dashboard's token file (serve --token-file, default SPOOL/dashboard.token), held to the
/// rules OpenSSH holds a private key to: a regular file owned by serve's user, mode 0600, holding
/// 128 bits at least. serve makes a missing one itself.

#include <filesystem>
#include <string>

namespace cuopt {

/// The token from `file` when it is there and passes the rules; else a new one written there.
/// Throws std::runtime_error("FILE: what is wrong").
std::string dashboard_token(const std::filesystem::path& file);

/// Where the token lives without --token-file: in the spool, which is serve's own.
std::filesystem::path default_token_file(const std::filesystem::path& spool_dir);

}  // namespace cuopt
