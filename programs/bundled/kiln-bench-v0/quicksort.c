// Quicksort (median-of-three, insertion-sort cutoff, three-way partition) on several key
// distributions.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 200000
#define CUTOFF 16

/* Input 0 is the default; the alternatives change the seed, how few the few distinct keys are and
 * how often the nearly sorted keys are disturbed: 2 keys and every 10th, 1000 keys and every
 * 1000th, 5 keys and every 3rd. */
struct input {
  uint32_t seed;
  uint32_t few_distinct;  /* distinct keys of distribution 3 */
  int nearly_sorted_step; /* distribution 4 has a random key every nearly_sorted_step-th place */
};

static const struct input inputs[4] = {
    {42u, 17, 100},
    {1013904223u, 2, 10},
    {22695477u, 1000, 1000},
    {134775813u, 5, 3},
};

static uint32_t state;

static uint32_t next_random(void) {
  state = state * 1664525u + 1013904223u;
  return state;
}

static void swap(int32_t* a, int32_t* b) {
  int32_t t = *a;
  *a = *b;
  *b = t;
}

static void insertion_sort(int32_t* v, int lo, int hi) {
  for (int i = lo + 1; i <= hi; ++i) {
    int32_t key = v[i];
    int j = i - 1;
    while (j >= lo && v[j] > key) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = key;
  }
}

static int32_t median_of_three(int32_t* v, int lo, int hi) {
  int mid = lo + (hi - lo) / 2;
  if (v[mid] < v[lo]) swap(&v[mid], &v[lo]);
  if (v[hi] < v[lo]) swap(&v[hi], &v[lo]);
  if (v[hi] < v[mid]) swap(&v[hi], &v[mid]);
  return v[mid];
}

/* Dijkstra's three-way partition keeps many-duplicate inputs linear. */
static void partition3(int32_t* v, int lo, int hi, int* lt_out, int* gt_out) {
  int32_t pivot = median_of_three(v, lo, hi);
  int lt = lo, gt = hi, i = lo;
  while (i <= gt) {
    if (v[i] < pivot) {
      swap(&v[lt++], &v[i++]);
    } else if (v[i] > pivot) {
      swap(&v[i], &v[gt--]);
    } else {
      ++i;
    }
  }
  *lt_out = lt;
  *gt_out = gt;
}

static void quicksort(int32_t* v, int lo, int hi) {
  while (hi - lo > CUTOFF) {
    int lt, gt;
    partition3(v, lo, hi, &lt, &gt);
    /* Recurse into the smaller side to bound the stack depth. */
    if (lt - lo < hi - gt) {
      quicksort(v, lo, lt - 1);
      lo = gt + 1;
    } else {
      quicksort(v, gt + 1, hi);
      hi = lt - 1;
    }
  }
  insertion_sort(v, lo, hi);
}

static void generate(int32_t* v, int n, int kind, const struct input* in) {
  for (int i = 0; i < n; ++i) {
    switch (kind) {
      case 0:
        v[i] = (int32_t)(next_random() >> 1);
        break; /* random */
      case 1:
        v[i] = i * 3;
        break; /* sorted */
      case 2:
        v[i] = n - i;
        break; /* reversed */
      case 3:
        v[i] = (int32_t)(next_random() % in->few_distinct);
        break; /* few distinct */
      default:
        v[i] = (i % in->nearly_sorted_step == 0) ? (int32_t)next_random() : i; /* nearly sorted */
    }
  }
}

static int is_sorted(const int32_t* v, int n) {
  for (int i = 1; i < n; ++i)
    if (v[i - 1] > v[i]) return 0;
  return 1;
}

static uint64_t multiset_hash(const int32_t* v, int n) {
  uint64_t h = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t x = (uint64_t)(uint32_t)v[i] * 0x9e3779b97f4a7c15ull;
    h += x ^ (x >> 29);
  }
  return h;
}

static uint64_t positional_hash(const int32_t* v, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; i += 7) h = (h ^ (uint32_t)v[i]) * 1099511628211ull;
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
    fprintf(stderr, "usage: quicksort [1|2|3]\n");
    return 2;
  }
  state = inputs[input].seed;
  int32_t* v = malloc(sizeof(int32_t) * COUNT);
  if (!v) return 2;
  uint64_t checksum = 0;
  for (int kind = 0; kind < 5; ++kind) {
    generate(v, COUNT, kind, &inputs[input]);
    uint64_t before = multiset_hash(v, COUNT);
    quicksort(v, 0, COUNT - 1);
    if (!is_sorted(v, COUNT) || multiset_hash(v, COUNT) != before) {
      printf("quicksort failed on distribution %d\n", kind);
      return 1;
    }
    checksum = checksum * 31 + positional_hash(v, COUNT);
  }
  free(v);
  printf("quicksort checksum 0x%016llx\n", (unsigned long long)checksum);
  return 0;
}
