#pragma once
/// The dashboard's one credential, its token: where a request may carry it (an
/// `Authorization: Bearer` header, the `cuopt_token` cookie, or `?token=` in the URL, which the
/// dashboard turns into the cookie), compared in constant time; and the URL pieces that needs.

#include <string>
#include <string_view>

namespace cuopt {

/// How a request showed the token.
enum class token_source { none, header, cookie, query };

/// Where `token` appears in the request's Authorization header, Cookie header or target's
/// query (checked in that order); none when nowhere, or only a wrong token.
token_source find_token(std::string_view authorization, std::string_view cookie,
                        std::string_view target, const std::string& token);

/// Equal strings, in time that depends on their lengths only.
bool tokens_equal(std::string_view a, std::string_view b);

/// The target with every `token` query parameter removed ("/x?token=a&b=1" -> "/x?b=1").
std::string target_without_token(std::string_view target);

/// The Set-Cookie value that carries the token: HttpOnly, SameSite=Strict, Path=/.
std::string token_cookie(const std::string& token);

/// Percent-decoding ("%2e" -> "."; '+' as a space when `plus_is_space`). Bad escapes are kept
/// as they are.
std::string url_decode(std::string_view s, bool plus_is_space);

/// The decoded value of query parameter `name` in target ("" when absent).
std::string query_value(std::string_view target, std::string_view name);

/// The target's path (before '?'), percent-decoded.
std::string target_path(std::string_view target);

}  // namespace cuopt
