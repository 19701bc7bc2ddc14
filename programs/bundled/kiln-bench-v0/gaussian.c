// Gaussian elimination with partial pivoting, LU decomposition and solve on generated linear
// systems.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 120
#define SYSTEMS 6

/* Input 0 is the default; the alternatives change the seed and the weight added to the diagonal:
 * a light one (rows get swapped by the pivoting), a heavy one, and none (plain random matrices,
 * whose determinants take both signs). */
struct input {
  uint64_t seed;
  double diagonal; /* a[i][i] gets diagonal * n added */
};

static const struct input inputs[4] = {
    {0x2545f4914f6cdd1dull, 0.25},
    {0x9e3779b97f4a7c15ull, 0.05},
    {0xd1b54a32d192ed03ull, 1.0},
    {0x8cb92ba72f3d8dd7ull, 0.0},
};

static uint64_t state;

static double uniform(void) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (double)((state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static double absolute(double x) { return x < 0 ? -x : x; }

/* Diagonally weighted (unless diagonal is 0) so the systems are well conditioned. */
static void generate(double* a, double* b, int n, double diagonal) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a[i * n + j] = uniform() * 2.0 - 1.0;
    a[i * n + i] += (double)n * diagonal;
    b[i] = uniform() * 10.0;
  }
}

static int pivot_row(const double* a, int n, int column) {
  int best = column;
  for (int r = column + 1; r < n; ++r)
    if (absolute(a[r * n + column]) > absolute(a[best * n + column])) best = r;
  return best;
}

static void swap_rows(double* a, int n, int r1, int r2) {
  for (int j = 0; j < n; ++j) {
    double t = a[r1 * n + j];
    a[r1 * n + j] = a[r2 * n + j];
    a[r2 * n + j] = t;
  }
}

/* In-place LU with row permutation `perm`; returns 0 if singular. */
static int lu_decompose(double* a, int* perm, int n) {
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int k = 0; k < n; ++k) {
    int p = pivot_row(a, n, k);
    if (absolute(a[p * n + k]) < 1e-12) return 0;
    if (p != k) {
      swap_rows(a, n, p, k);
      int t = perm[p];
      perm[p] = perm[k];
      perm[k] = t;
    }
    for (int i = k + 1; i < n; ++i) {
      double factor = a[i * n + k] / a[k * n + k];
      a[i * n + k] = factor;
      for (int j = k + 1; j < n; ++j) a[i * n + j] -= factor * a[k * n + j];
    }
  }
  return 1;
}

static void lu_solve(const double* lu, const int* perm, const double* b, double* x, int n) {
  for (int i = 0; i < n; ++i) {
    double sum = b[perm[i]];
    for (int j = 0; j < i; ++j) sum -= lu[i * n + j] * x[j];
    x[i] = sum;
  }
  for (int i = n - 1; i >= 0; --i) {
    double sum = x[i];
    for (int j = i + 1; j < n; ++j) sum -= lu[i * n + j] * x[j];
    x[i] = sum / lu[i * n + i];
  }
}

static double determinant(const double* lu, const int* perm, int n) {
  double det = 1.0;
  for (int i = 0; i < n; ++i) det *= lu[i * n + i];
  /* Each cycle of length L in the permutation contributes (L-1) transpositions. */
  int* seen = calloc((size_t)n, sizeof(int));
  int swaps = 0;
  for (int i = 0; i < n && seen; ++i) {
    if (seen[i]) continue;
    int length = 0;
    for (int j = i; !seen[j]; j = perm[j]) {
      seen[j] = 1;
      ++length;
    }
    swaps += length - 1;
  }
  free(seen);
  return (swaps % 2) ? -det : det;
}

static double residual(const double* a, const double* x, const double* b, int n) {
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += a[i * n + j] * x[j];
    double r = absolute(sum - b[i]);
    if (r > worst) worst = r;
  }
  return worst;
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
    fprintf(stderr, "usage: gaussian [1|2|3]\n");
    return 2;
  }
  state = inputs[input].seed;
  double *a = malloc(sizeof(double) * N * N), *lu = malloc(sizeof(double) * N * N);
  double *b = malloc(sizeof(double) * N), *x = malloc(sizeof(double) * N);
  int* perm = malloc(sizeof(int) * N);
  if (!a || !lu || !b || !x || !perm) return 2;
  double total = 0.0, log_det = 0.0;
  for (int s = 0; s < SYSTEMS; ++s) {
    generate(a, b, N, inputs[input].diagonal);
    for (int i = 0; i < N * N; ++i) lu[i] = a[i];
    if (!lu_decompose(lu, perm, N)) {
      printf("singular system %d\n", s);
      return 1;
    }
    lu_solve(lu, perm, b, x, N);
    if (residual(a, x, b, N) > 1e-8) {
      printf("residual too large in system %d\n", s);
      return 1;
    }
    for (int i = 0; i < N; ++i) total += x[i] * (double)(i + 1);
    double det = determinant(lu, perm, N);
    log_det += det > 0 ? 1.0 : -1.0;
  }
  /* Rounded so that reassociation by the optimizer cannot change the printed value. */
  printf("gaussian checksum %.4f signs %.0f\n", total, log_det);
  free(a);
  free(lu);
  free(b);
  free(x);
  free(perm);
  return 0;
}
