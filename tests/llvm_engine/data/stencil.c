/* Floating point kernels: a 1-D stencil, dot product, saxpy, a small
   polynomial evaluation and a Newton iteration, with a struct of arrays. */
#define LEN 512

struct Grid {
  float in[LEN];
  float out[LEN];
  float weights[3];
};

static struct Grid grid;

static void stencil(struct Grid* g, int steps) {
  for (int s = 0; s < steps; ++s) {
    for (int i = 1; i < LEN - 1; ++i)
      g->out[i] = g->weights[0] * g->in[i - 1] + g->weights[1] * g->in[i] +
                  g->weights[2] * g->in[i + 1];
    for (int i = 1; i < LEN - 1; ++i) g->in[i] = g->out[i];
  }
}

static float dot(const float* x, const float* y, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += x[i] * y[i];
  return acc;
}

static void saxpy(float a, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

static double poly(double x) {
  static const double c[6] = {1.0, -2.5, 3.25, 0.5, -0.125, 0.0625};
  double r = 0.0;
  for (int i = 5; i >= 0; --i) r = r * x + c[i];
  return r;
}

static double newton_sqrt(double v) {
  if (v <= 0.0) return 0.0;
  double x = v > 1.0 ? v / 2.0 : 1.0;
  for (int i = 0; i < 20; ++i) x = 0.5 * (x + v / x);
  return x;
}

int main(int argc, char** argv) {
  grid.weights[0] = 0.25f;
  grid.weights[1] = 0.5f;
  grid.weights[2] = 0.25f;
  for (int i = 0; i < LEN; ++i) grid.in[i] = (float)(i % 17) * (float)argc;
  stencil(&grid, 4);
  saxpy(2.0f, grid.in, grid.out, LEN);
  float d = dot(grid.in, grid.out, LEN);
  double p = poly((double)argc) + newton_sqrt((double)d);
  return (int)p & 0x7F;
}
