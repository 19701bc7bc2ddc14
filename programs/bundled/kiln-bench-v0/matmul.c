// Dense integer and floating-point matrix multiply: naive, transposed and cache-blocked,
// cross-checked.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 160
#define BLOCK 32

/* Input 0 is the default; the alternatives change the seed and the size to one that is not a
 * multiple of BLOCK, so the blocked product has partial blocks. */
struct input {
  uint32_t seed;
  int n;
};

static const struct input inputs[4] = {
    {31337u, N},
    {4242u, 150},
    {8675309u, 175},
    {1001u, 137},
};

static uint32_t seed;

static int32_t small_random(void) {
  seed = seed * 1103515245u + 12345u;
  return (int32_t)((seed >> 16) % 19) - 9;
}

static void fill(int32_t* m, int n) {
  for (int i = 0; i < n * n; ++i) m[i] = small_random();
}

static void matmul_naive(const int32_t* a, const int32_t* b, int32_t* c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

static void transpose(const int32_t* m, int32_t* t, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) t[j * n + i] = m[i * n + j];
}

static int32_t dot(const int32_t* x, const int32_t* y, int n) {
  int32_t sum = 0;
  for (int k = 0; k < n; ++k) sum += x[k] * y[k];
  return sum;
}

static void matmul_transposed(const int32_t* a, const int32_t* b, int32_t* c, int n, int32_t* bt) {
  transpose(b, bt, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) c[i * n + j] = dot(a + i * n, bt + j * n, n);
}

static void matmul_blocked(const int32_t* a, const int32_t* b, int32_t* c, int n) {
  memset(c, 0, sizeof(int32_t) * n * n);
  for (int ii = 0; ii < n; ii += BLOCK)
    for (int kk = 0; kk < n; kk += BLOCK)
      for (int jj = 0; jj < n; jj += BLOCK)
        for (int i = ii; i < ii + BLOCK && i < n; ++i)
          for (int k = kk; k < kk + BLOCK && k < n; ++k) {
            int32_t aik = a[i * n + k];
            for (int j = jj; j < jj + BLOCK && j < n; ++j) c[i * n + j] += aik * b[k * n + j];
          }
}

static void matmul_double(const double* a, const double* b, double* c, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) c[i * n + j] = 0.0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      double aik = a[i * n + k];
      for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
}

static int64_t trace(const int32_t* m, int n) {
  int64_t t = 0;
  for (int i = 0; i < n; ++i) t += m[i * n + i];
  return t;
}

static uint32_t digest(const int32_t* m, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n * n; ++i) h = (h ^ (uint32_t)m[i]) * 16777619u;
  return h;
}

/* No argument selects input 0, "1" to "3" an alternative; anything else gives -1. */
static int parse_input(int argc, char** argv) {
  if (argc == 1) return 0;
  if (argc != 2 || argv[1][0] < '1' || argv[1][0] > '3' || argv[1][1] != '\0') return -1;
  return argv[1][0] - '0';
}

int main(int argc, char** argv) {
  int input = parse_input(argc, argv);
  if (input < 0) {
    fprintf(stderr, "usage: matmul [1|2|3]\n");
    return 2;
  }
  seed = inputs[input].seed;
  int n = inputs[input].n;
  size_t bytes = sizeof(int32_t) * n * n;
  int32_t *a = malloc(bytes), *b = malloc(bytes), *c1 = malloc(bytes), *c2 = malloc(bytes);
  int32_t *c3 = malloc(bytes), *bt = malloc(bytes);
  double *da = malloc(sizeof(double) * n * n), *db = malloc(sizeof(double) * n * n);
  double* dc = malloc(sizeof(double) * n * n);
  if (!a || !b || !c1 || !c2 || !c3 || !bt || !da || !db || !dc) return 2;
  fill(a, n);
  fill(b, n);
  matmul_naive(a, b, c1, n);
  matmul_transposed(a, b, c2, n, bt);
  matmul_blocked(a, b, c3, n);
  if (memcmp(c1, c2, bytes) != 0 || memcmp(c1, c3, bytes) != 0) {
    printf("matmul variants disagree\n");
    return 1;
  }
  /* Small integers are exact in double, so the float product must match too. */
  for (int i = 0; i < n * n; ++i) {
    da[i] = a[i];
    db[i] = b[i];
  }
  matmul_double(da, db, dc, n);
  for (int i = 0; i < n * n; ++i) {
    if (dc[i] != (double)c1[i]) {
      printf("double matmul mismatch at %d\n", i);
      return 1;
    }
  }
  /* (AB)B: a second product reuses the first. */
  matmul_blocked(c1, b, c2, n);
  printf("matmul trace %lld trace2 %lld checksum 0x%08x\n", (long long)trace(c1, n),
         (long long)trace(c2, n), digest(c2, n));
  free(a);
  free(b);
  free(c1);
  free(c2);
  free(c3);
  free(bt);
  free(da);
  free(db);
  free(dc);
  return 0;
}
