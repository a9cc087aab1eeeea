#pragma once
/// How a message shows a value that came from outside (a name, a path, a field's text): in
/// quotes, on one line, and never whole when long. A 1 MiB kernel name gives a 1 MiB error
/// line otherwise, and a response.json of several MB. Also the one test of text every reader
/// applies: no U+0000 (a C string stops there, so "perf-\u0000x" would become "perf-"
/// downstream) and valid UTF-8 (no lone surrogate such as \udfff).

#include <cstddef>
#include <string>
#include <string_view>

namespace cuopt {

/// The most characters of a value a message shows.
inline constexpr std::size_t k_quote_limit = 200;

/// 'value' as a message shows it: control characters escaped (\n, \t, \x01), bytes that are
/// no UTF-8 as \xNN; a value longer than `limit` characters is cut at a character's boundary
/// and followed by "… (N bytes)", N being the whole value's size.
std::string quote_value(std::string_view value, std::size_t limit = k_quote_limit);

/// `text` itself when at most `limit` characters, else its first `limit` characters (cut at a
/// character's boundary) and "… (N bytes)": for text that is already escaped (compact JSON).
std::string shortened(std::string_view text, std::size_t limit = k_quote_limit);

/// The longest name a define, tunable or param may have.
inline constexpr std::size_t k_max_identifier = 128;

/// Why `name` cannot name a define, a tunable or a param: "" when it is a C identifier of at
/// most k_max_identifier characters, else "expected a C identifier of at most 128
/// characters, got 'A-B'".
std::string identifier_problem(std::string_view name);

/// The last line of a child's stderr that says something (trailing blank lines and spaces
/// dropped): what a program said on its way out.
std::string last_line(std::string_view text);

/// Text that stays on one line of a generated // comment: control characters (line breaks
/// among them) become spaces, and a backslash, which could splice the next line of code into
/// the comment, becomes '/'.
std::string comment_line(std::string text);

/// The length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when none starts
/// there: a stray continuation byte, an overlong form, a surrogate (U+D800 to U+DFFF, which
/// RapidJSON writes for an escaped lone "\udfff") or past U+10FFFF.
std::size_t utf8_sequence(std::string_view s, std::size_t i);

/// Why `s` cannot be text from an input: "holds U+0000 (NUL) at byte 5" or "is not valid
/// UTF-8 at byte 5 (a lone surrogate such as \udfff, or a stray byte)"; "" when it can.
std::string text_problem(std::string_view s);

}  // namespace cuopt
