// An HTML page as sections of readable text: gumbo's HTML5 parse walked, scripts, styles and
// navigation dropped, a new section at every heading (with its anchor).
#include <gumbo.h>

#include <cctype>
#include <string_view>

#include "orchestrator/model/docs_library.hpp"

namespace cuopt {

namespace {

// Readable text out of a gumbo tree: whitespace collapsed outside <pre>, a line break at every
// block, a new section at every h1-h4.
class text_walker {
  public:
    std::vector<doc_section> sections{1};

    void walk(const GumboNode* node, int depth) {
        if (depth > 200) return;  // a pathological page: what is deeper is dropped
        if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA ||
            node->type == GUMBO_NODE_WHITESPACE) {
            add_text(node->v.text.text);
            return;
        }
        if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_DOCUMENT) return;
        const GumboVector& children = node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children
                                                                        : node->v.element.children;
        if (node->type == GUMBO_NODE_DOCUMENT) {
            for (unsigned i = 0; i < children.length; ++i)
                walk(static_cast<const GumboNode*>(children.data[i]), depth + 1);
            return;
        }
        element(node, children, depth);
    }

  private:
    void element(const GumboNode* node, const GumboVector& children, int depth) {
        const GumboTag tag = node->v.element.tag;
        switch (tag) {
            case GUMBO_TAG_SCRIPT:
            case GUMBO_TAG_STYLE:
            case GUMBO_TAG_NOSCRIPT:
            case GUMBO_TAG_NAV:
            case GUMBO_TAG_HEADER:
            case GUMBO_TAG_FOOTER:
            case GUMBO_TAG_HEAD:
            case GUMBO_TAG_TEMPLATE:
            case GUMBO_TAG_SVG:
            case GUMBO_TAG_BUTTON:
            case GUMBO_TAG_FORM:
            case GUMBO_TAG_IFRAME:
                return;  // not documentation text
            default:
                break;
        }
        const GumboAttribute* id = gumbo_get_attribute(&node->v.element.attributes, "id");
        if (id && (tag == GUMBO_TAG_SECTION || tag == GUMBO_TAG_DIV)) m_pending_anchor = id->value;
        const bool heading = tag == GUMBO_TAG_H1 || tag == GUMBO_TAG_H2 || tag == GUMBO_TAG_H3 ||
                             tag == GUMBO_TAG_H4;
        if (heading) {
            sections.push_back({"", id ? id->value : m_pending_anchor, ""});
            m_pending_anchor.clear();
            m_in_heading = true;
        }
        const bool block = heading || is_block(tag);
        if (block) line_break();
        if (tag == GUMBO_TAG_LI) sections.back().text += "- ";
        if (tag == GUMBO_TAG_PRE) ++m_in_pre;
        for (unsigned i = 0; i < children.length; ++i)
            walk(static_cast<const GumboNode*>(children.data[i]), depth + 1);
        if (tag == GUMBO_TAG_PRE) --m_in_pre;
        if (tag == GUMBO_TAG_TD || tag == GUMBO_TAG_TH) sections.back().text += " | ";
        if (block) line_break();
        if (heading) m_in_heading = false;
    }

    static bool is_block(GumboTag t) {
        switch (t) {
            case GUMBO_TAG_P:
            case GUMBO_TAG_DIV:
            case GUMBO_TAG_LI:
            case GUMBO_TAG_PRE:
            case GUMBO_TAG_TR:
            case GUMBO_TAG_BR:
            case GUMBO_TAG_SECTION:
            case GUMBO_TAG_TABLE:
            case GUMBO_TAG_DD:
            case GUMBO_TAG_DT:
            case GUMBO_TAG_UL:
            case GUMBO_TAG_OL:
            case GUMBO_TAG_BLOCKQUOTE:
            case GUMBO_TAG_H5:
            case GUMBO_TAG_H6:
            case GUMBO_TAG_CAPTION:
                return true;
            default:
                return false;
        }
    }

    void add_text(const char* raw) {
        std::string& out = m_in_heading ? sections.back().title : sections.back().text;
        for (const char* p = raw; *p; ++p) {
            const char c = *p;
            if (m_in_pre) {
                out += c;
            } else if (std::isspace(static_cast<unsigned char>(c))) {
                if (!out.empty() && out.back() != ' ' && out.back() != '\n') out += ' ';
            } else if (std::string_view(p).rfind("\xC2\xB6", 0) == 0) {
                ++p;  // the pilcrow of a Sphinx heading link
            } else {
                out += c;
            }
        }
    }

    void line_break() {
        std::string& out = m_in_heading ? sections.back().title : sections.back().text;
        while (!out.empty() && out.back() == ' ') out.pop_back();
        if (!out.empty() && out.back() != '\n') out += '\n';
    }

    std::string m_pending_anchor;
    bool m_in_heading = false;
    int m_in_pre = 0;
};

std::string trimmed(std::string s) {
    const auto first = s.find_first_not_of(" \n\t");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \n\t") - first + 1);
}

}  // namespace

std::vector<doc_section> html_sections(const std::string& html) {
    GumboOutput* parsed = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
    text_walker w;
    w.walk(parsed->document, 0);
    gumbo_destroy_output(&kGumboDefaultOptions, parsed);
    std::vector<doc_section> out;
    for (doc_section& s : w.sections) {
        s.title = trimmed(s.title);
        s.text = trimmed(s.text);
        for (std::size_t p; (p = s.text.find("\n\n\n")) != std::string::npos;) s.text.erase(p, 1);
        if (!s.title.empty() || !s.text.empty()) out.push_back(std::move(s));
    }
    return out;
}

}  // namespace cuopt
