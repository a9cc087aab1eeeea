#include "orchestrator/service/multipart.hpp"

#include <cctype>
#include <map>

#include "common/message_text.hpp"

namespace cuopt {

namespace {

constexpr std::size_t k_max_header_bytes = 16 * 1024;  // one part's header block

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// A header value of the form `type; key=value; key="quoted value"`: the type (lower case) and
// the parameters (lower-case keys). Quoted values are taken verbatim up to the next quote:
// browsers percent-encode quotes in file names and never backslash-escape.
struct header_value {
    std::string type;
    std::map<std::string, std::string> params;
};

std::string read_param_value(std::string_view v, std::size_t& i, const char* what) {
    if (i < v.size() && v[i] == '"') {
        const std::size_t close = v.find('"', i + 1);
        if (close == std::string_view::npos)
            throw multipart_error(std::string(what) + ": an unterminated quoted value");
        std::string out(v.substr(i + 1, close - i - 1));
        i = close + 1;
        return out;
    }
    const std::size_t end = std::min(v.find(';', i), v.size());
    std::string out(trim(v.substr(i, end - i)));
    i = end;
    return out;
}

header_value parse_header_value(std::string_view v, const char* what) {
    header_value out;
    std::size_t i = std::min(v.find(';'), v.size());
    out.type = lower(trim(v.substr(0, i)));
    while (i < v.size()) {
        while (i < v.size() && (v[i] == ';' || v[i] == ' ' || v[i] == '\t')) ++i;
        if (i >= v.size()) break;
        const std::size_t eq = v.find('=', i);
        if (eq == std::string_view::npos)
            throw multipart_error(std::string(what) + ": a parameter without '=' in '" +
                                  std::string(v.substr(0, 120)) + "'");
        const std::string key = lower(trim(v.substr(i, eq - i)));
        i = eq + 1;
        while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
        out.params[key] = read_param_value(v, i, what);
        while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
        if (i < v.size() && v[i] != ';')
            throw multipart_error(std::string(what) + ": text after a quoted value");
    }
    return out;
}

bool boundary_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// Fills the part's name, filename and type from its header block ("A: b\r\nC: d").
void read_part_headers(std::string_view block, multipart_part& part, std::size_t index) {
    const std::string where = "part " + std::to_string(index + 1);
    bool disposition = false;
    for (std::size_t i = 0; i < block.size();) {
        const std::size_t end = std::min(block.find("\r\n", i), block.size());
        const std::string_view line = block.substr(i, end - i);
        i = end + 2;
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' ||
            line.front() == '\t')
            throw multipart_error(where + ": a malformed header line");
        const std::string name = lower(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        if (name == "content-type") part.content_type = std::string(value);
        if (name != "content-disposition") continue;
        const header_value d = parse_header_value(value, where.c_str());
        if (d.type != "form-data" || !d.params.count("name"))
            throw multipart_error(where + ": Content-Disposition is not form-data with a name");
        part.name = d.params.at("name");
        if (auto f = d.params.find("filename"); f != d.params.end()) part.filename = f->second;
        disposition = true;
    }
    if (!disposition) throw multipart_error(where + ": no Content-Disposition header");
}

// Where the first boundary line starts: at the body's start or after a preamble's CRLF.
std::size_t first_delimiter(std::string_view body, const std::string& delimiter) {
    if (body.substr(0, delimiter.size()) == delimiter) return 0;
    const std::size_t at = body.find("\r\n" + delimiter);
    if (at == std::string_view::npos)
        throw multipart_error("the body does not contain its boundary");
    return at + 2;
}

// After a boundary: optional transport padding, then CRLF; returns where the headers start.
std::size_t after_boundary_line(std::string_view body, std::size_t pos) {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (body.substr(pos, 2) != "\r\n")
        throw multipart_error("a boundary line is not followed by CRLF");
    return pos + 2;
}

}  // namespace

std::string multipart_boundary(std::string_view content_type) {
    const header_value v = parse_header_value(content_type, "Content-Type");
    if (v.type != "multipart/form-data")
        throw multipart_error("Content-Type is " + quote_value(v.type) +
                              ", not multipart/form-data");
    const auto b = v.params.find("boundary");
    if (b == v.params.end() || b->second.empty())
        throw multipart_error("Content-Type names no boundary");
    const std::string& boundary = b->second;
    if (boundary.size() > 70 || boundary.back() == ' ')
        throw multipart_error("the boundary is longer than 70 characters or ends in a space");
    for (char c : boundary)
        if (!boundary_char(c))
            throw multipart_error("the boundary holds a character RFC 2046 forbids");
    return boundary;
}

std::vector<multipart_part> parse_multipart(std::string_view body, std::string_view boundary,
                                            std::size_t max_parts) {
    if (boundary.empty()) throw multipart_error("an empty boundary");
    const std::string delimiter = "--" + std::string(boundary);
    const std::string next_delimiter = "\r\n" + delimiter;
    std::vector<multipart_part> parts;
    std::size_t pos = first_delimiter(body, delimiter);
    for (;;) {
        pos += delimiter.size();
        if (body.substr(pos, 2) == "--") return parts;  // the closing boundary; epilogue ignored
        pos = after_boundary_line(body, pos);
        if (parts.size() == max_parts)
            throw multipart_error("more than " + std::to_string(max_parts) + " parts");
        const std::size_t headers_end =
            body.substr(pos, 2) == "\r\n" ? pos : body.find("\r\n\r\n", pos);
        if (headers_end == std::string_view::npos || headers_end - pos > k_max_header_bytes)
            throw multipart_error("part " + std::to_string(parts.size() + 1) +
                                  ": its headers do not end (or exceed 16 KiB)");
        multipart_part part;
        read_part_headers(body.substr(pos, headers_end - pos), part, parts.size());
        const std::size_t data_start = headers_end + (headers_end == pos ? 2 : 4);
        const std::size_t data_end = body.find(next_delimiter, data_start);
        if (data_end == std::string_view::npos)
            throw multipart_error("the body ends before its closing boundary");
        part.data = std::string(body.substr(data_start, data_end - data_start));
        parts.push_back(std::move(part));
        pos = data_end + 2;
    }
}

}  // namespace cuopt
