#include "harness/library_loader.hpp"

#include <dlfcn.h>

namespace cuopt {

void* symbol_resolver::address(const char* symbol) const {
    return dlsym(m_library, symbol);
}

std::string load_first_library(const std::string& what, const std::vector<std::string>& sonames,
                               const std::function<void(symbol_resolver&)>& resolve) {
    std::string tried;
    for (const std::string& name : sonames) {
        if (!tried.empty()) tried += ", ";
        void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            tried += name + " (" + (why ? why : "cannot be opened") + ")";
            continue;
        }
        symbol_resolver symbols(lib);
        resolve(symbols);
        if (!symbols.missing().empty()) {
            tried += name + " (it has no " + symbols.missing() + ")";
            dlclose(lib);
            continue;
        }
        return name;  // never closed: the entry points stay valid for the life of the process
    }
    throw vendor_library_error(what + " not found: tried " + tried);
}

std::string describe_library_status(const char* name, const char* text, const std::string& what,
                                    int status) {
    return (name ? std::string(name) : what + " status " + std::to_string(status)) + " (" +
           (text ? text : "no description") + ")";
}

}  // namespace cuopt
