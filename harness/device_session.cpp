#include "harness/device_session.hpp"

#include <map>
#include <memory>

namespace cuopt {

device_session::device_session(int index, const device_fingerprint& device)
    : m_context(get_device(index)), m_support(device.sm_count), m_flush_sink(sizeof(unsigned)) {}

device_session& device_session::on(int index, const device_fingerprint& device) {
    // Deliberately leaked: destroying a context costs tens of milliseconds and the process
    // is about to end whenever these would go.
    static auto* sessions = new std::map<int, std::unique_ptr<device_session>>();
    std::unique_ptr<device_session>& s = (*sessions)[index];
    if (!s)
        s.reset(new device_session(index, device));
    else
        CU_CALL(cuCtxSetCurrent(s->m_context.get()));
    return *s;
}

const device_buffer& device_session::l2_scratch(std::size_t bytes) {
    if (m_l2_scratch.bytes() < bytes) {
        m_l2_scratch = device_buffer();  // the old range goes before the larger one is asked for
        m_l2_scratch = device_buffer(bytes);
    }
    return m_l2_scratch;
}

}  // namespace cuopt
