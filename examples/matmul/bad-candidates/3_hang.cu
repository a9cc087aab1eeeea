// Never finishes (the sleep is a side effect, so the compiler must keep the loop): the
// optimizer kills the harness at --timeout and records timeout.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    for (;;) __nanosleep(1000);
}
