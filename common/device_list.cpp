#include "common/device_list.hpp"

#include <algorithm>
#include <cctype>

#include "common/message_text.hpp"

namespace cuopt {

std::vector<std::string> comma_items(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t end; start <= text.size(); start = end + 1) {
        end = std::min(text.find(',', start), text.size());
        std::string item = text.substr(start, end - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        out.push_back(item);
    }
    return out;
}

std::string device_list_problem(const std::string& text) {
    std::vector<std::string> seen;
    for (const std::string& item : comma_items(text)) {
        const bool digits =
            !item.empty() && item.size() <= 4 && std::all_of(item.begin(), item.end(), [](char ch) {
                return std::isdigit(static_cast<unsigned char>(ch));
            });
        if (!digits)
            return "expected GPU indices separated by commas (0,1), got " + quote_value(text);
        if (std::find(seen.begin(), seen.end(), item) != seen.end())
            return "GPU " + item + " is named twice in " + quote_value(text);
        seen.push_back(item);
    }
    return "";
}

std::vector<int> parse_device_list(const std::string& text) {
    std::vector<int> out;
    for (const std::string& item : comma_items(text)) out.push_back(std::stoi(item));
    return out;
}

}  // namespace cuopt
