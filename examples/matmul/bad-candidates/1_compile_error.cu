// A candidate that does not compile: the run must record compile_error and go on.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int m, int n, int k) {
    c[0] = undeclared_variable;
}
