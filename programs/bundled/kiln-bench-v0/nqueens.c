// N-queens solution counting by array backtracking and by bitmask search, with symmetry reduction.
#include <stdint.h>
#include <stdio.h>

#define MAX_N 12

/* Input 0 is the default (n = 1 to 12); the alternatives move the costly array searches to other
 * board sizes (n = 3 to 12 with backtracking to 9 and half-turns to 10; n = 1 to 11 with
 * backtracking on all) or leave the small boards out (n = 8 to 12). */
struct input {
  int first_n, last_n;
  int backtrack_max; /* largest n also counted by array backtracking */
  int half_turn_max; /* largest n whose half-turn symmetric solutions are counted */
};

static const struct input inputs[4] = {
    {1, 12, 10, 9},
    {3, 12, 9, 10},
    {1, 11, 11, 9},
    {8, 12, 8, 8},
};

static int safe(const int* queens, int row, int col) {
  for (int r = 0; r < row; ++r) {
    int c = queens[r];
    if (c == col || c - col == r - row || c - col == row - r) return 0;
  }
  return 1;
}

static uint64_t backtrack(int* queens, int row, int n) {
  if (row == n) return 1;
  uint64_t count = 0;
  for (int col = 0; col < n; ++col) {
    if (safe(queens, row, col)) {
      queens[row] = col;
      count += backtrack(queens, row + 1, n);
    }
  }
  return count;
}

static uint64_t bitmask_search(uint32_t cols, uint32_t diag1, uint32_t diag2, uint32_t full) {
  if (cols == full) return 1;
  uint64_t count = 0;
  uint32_t free_cells = full & ~(cols | diag1 | diag2);
  while (free_cells) {
    uint32_t bit = free_cells & (0u - free_cells);
    free_cells ^= bit;
    count += bitmask_search(cols | bit, ((diag1 | bit) << 1) & full, (diag2 | bit) >> 1, full);
  }
  return count;
}

/* Placing the first queen only in the left half and doubling halves the work. */
static uint64_t bitmask_symmetric(int n) {
  uint32_t full = (1u << n) - 1u;
  uint64_t count = 0;
  for (int col = 0; col < n / 2; ++col) {
    uint32_t bit = 1u << col;
    count += bitmask_search(bit, (bit << 1) & full, bit >> 1, full);
  }
  count *= 2;
  if (n % 2 == 1) {
    uint32_t bit = 1u << (n / 2);
    count += bitmask_search(bit, (bit << 1) & full, bit >> 1, full);
  }
  return count;
}

/* First solution in lexicographic order, encoded as a number. */
static int first_solution(int* queens, int row, int n) {
  if (row == n) return 1;
  for (int col = 0; col < n; ++col) {
    if (safe(queens, row, col)) {
      queens[row] = col;
      if (first_solution(queens, row + 1, n)) return 1;
    }
  }
  return 0;
}

static uint64_t encode(const int* queens, int n) {
  uint64_t code = 0;
  for (int r = 0; r < n; ++r) code = code * (uint64_t)n + (uint64_t)queens[r];
  return code;
}

static int verify(const int* queens, int n) {
  for (int r = 0; r < n; ++r)
    if (!safe(queens, r, queens[r])) return 0;
  return 1;
}

/* Solutions unchanged by a half-turn of the board: queens[n-1-r] == n-1-queens[r]. */
static uint64_t count_half_turn_symmetric(int* queens, int row, int n) {
  if (row == n) {
    for (int r = 0; r < n; ++r)
      if (queens[n - 1 - r] != n - 1 - queens[r]) return 0;
    return 1;
  }
  uint64_t count = 0;
  for (int col = 0; col < n; ++col) {
    if (safe(queens, row, col)) {
      queens[row] = col;
      count += count_half_turn_symmetric(queens, row + 1, n);
    }
  }
  return count;
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
    fprintf(stderr, "usage: nqueens [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  static const uint64_t known[MAX_N + 1] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200};
  int queens[MAX_N];
  uint64_t checksum = 0;
  for (int n = in->first_n; n <= in->last_n; ++n) {
    uint64_t fast = bitmask_symmetric(n);
    uint64_t plain = n <= in->backtrack_max ? backtrack(queens, 0, n) : fast;
    uint64_t full = bitmask_search(0, 0, 0, (1u << n) - 1u);
    if (fast != known[n] || plain != known[n] || full != known[n]) {
      printf("nqueens wrong count for n=%d: %llu\n", n, (unsigned long long)fast);
      return 1;
    }
    if (first_solution(queens, 0, n)) {
      if (!verify(queens, n)) return 1;
      checksum = checksum * 131u + encode(queens, n);
    }
    checksum += fast;
    if (n <= in->half_turn_max) checksum ^= count_half_turn_symmetric(queens, 0, n) << (2 * n);
  }
  printf("nqueens checksum 0x%016llx\n", (unsigned long long)checksum);
  return 0;
}
