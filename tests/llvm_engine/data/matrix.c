/* Loops over arrays: matrix multiply, transpose, insertion sort, prefix sums.
   Gives loop passes (licm, unroll, vectorize, indvars, interchange) work. */
#define N 24

static double a[N][N], b[N][N], c[N][N];
static int data[256];

static void init(unsigned seed) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      seed = seed * 1103515245u + 12345u;
      a[i][j] = (double)(seed % 100) / 10.0;
      b[i][j] = (double)((seed >> 8) % 100) / 10.0;
      c[i][j] = 0.0;
    }
  for (int i = 0; i < 256; ++i) {
    seed = seed * 1103515245u + 12345u;
    data[i] = (int)(seed % 1000);
  }
}

static void matmul(void) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0.0;
      for (int k = 0; k < N; ++k) sum += a[i][k] * b[k][j];
      c[i][j] = sum;
    }
}

static void transpose(double m[N][N]) {
  for (int i = 0; i < N; ++i)
    for (int j = i + 1; j < N; ++j) {
      double t = m[i][j];
      m[i][j] = m[j][i];
      m[j][i] = t;
    }
}

static void insertion_sort(int* v, int n) {
  for (int i = 1; i < n; ++i) {
    int key = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > key) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = key;
  }
}

static long prefix_sum(const int* v, long* out, int n) {
  long acc = 0;
  for (int i = 0; i < n; ++i) {
    acc += v[i];
    out[i] = acc;
  }
  return acc;
}

int main(int argc, char** argv) {
  static long sums[256];
  init((unsigned)argc * 7u);
  matmul();
  transpose(c);
  insertion_sort(data, 256);
  long total = prefix_sum(data, sums, 256);
  double trace = 0.0;
  for (int i = 0; i < N; ++i) trace += c[i][i];
  return (int)(total % 256) + (trace > 1000.0 ? 1 : 0);
}
