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
    std::vector<int> seen;  // by value: "0" and "00" are one GPU
    for (const std::string& item : comma_items(text)) {
        const bool digits =
            !item.empty() && item.size() <= 4 && std::all_of(item.begin(), item.end(), [](char ch) {
                return std::isdigit(static_cast<unsigned char>(ch));
            });
        if (!digits)
            return "expected GPU indices separated by commas (0,1), got " + quote_value(text);
        const int index = std::stoi(item);
        if (index > k_max_device_index)  // as --device
            return "GPU " + item + ": expected an index from 0 to " +
                   std::to_string(k_max_device_index);
        if (std::find(seen.begin(), seen.end(), index) != seen.end())
            return "GPU " + std::to_string(index) + " is named twice in " + quote_value(text);
        seen.push_back(index);
    }
    return "";
}

std::vector<int> parse_device_list(const std::string& text) {
    std::vector<int> out;
    for (const std::string& item : comma_items(text)) out.push_back(std::stoi(item));
    return out;
}

}  // namespace cuopt
