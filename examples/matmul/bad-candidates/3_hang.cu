// Never finishes: the optimizer kills the harness at --timeout and records timeout.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    volatile int spin = 1;
    while (spin) {
    }
}
