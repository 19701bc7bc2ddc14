// Binary-heap sort plus a d-ary heap priority queue used to merge sorted runs.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 150000
#define RUNS 64
#define ARITY 4

/* Input 0 is the default; the alternatives change the seed and the values: many duplicates (1000
 * distinct values), almost all duplicates (7 distinct values), and a noisy descending ramp. */
struct input {
  uint32_t seed;
  uint64_t range;  /* value i is drawn from [-range / 2, range / 2) ... */
  int64_t descent; /* ... minus i * descent */
};

static const struct input inputs[4] = {
    {7u, 1ull << 32, 0},
    {1234u, 1000, 0},
    {98765u, 7, 0},
    {555u, 1u << 20, 3000},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 747796405u + 2891336453u;
  uint32_t word = ((seed >> ((seed >> 28u) + 4u)) ^ seed) * 277803737u;
  return (word >> 22u) ^ word;
}

static void sift_down(int64_t* heap, size_t start, size_t end) {
  size_t root = start;
  while (2 * root + 1 < end) {
    size_t child = 2 * root + 1;
    if (child + 1 < end && heap[child] < heap[child + 1]) ++child;
    if (heap[root] >= heap[child]) return;
    int64_t t = heap[root];
    heap[root] = heap[child];
    heap[child] = t;
    root = child;
  }
}

static void heapsort(int64_t* v, size_t n) {
  for (size_t start = n / 2; start-- > 0;) sift_down(v, start, n);
  for (size_t end = n; end-- > 1;) {
    int64_t t = v[0];
    v[0] = v[end];
    v[end] = t;
    sift_down(v, 0, end);
  }
}

/* A min-heap of (value, run) pairs with ARITY children per node. */
struct item {
  int64_t value;
  int run;
};

struct dheap {
  struct item items[RUNS];
  int size;
};

static void dheap_push(struct dheap* h, struct item x) {
  int i = h->size++;
  while (i > 0) {
    int parent = (i - 1) / ARITY;
    if (h->items[parent].value <= x.value) break;
    h->items[i] = h->items[parent];
    i = parent;
  }
  h->items[i] = x;
}

static struct item dheap_pop(struct dheap* h) {
  struct item top = h->items[0];
  struct item last = h->items[--h->size];
  int i = 0;
  while (1) {
    int best = -1;
    for (int c = ARITY * i + 1; c <= ARITY * i + ARITY && c < h->size; ++c) {
      if (best < 0 || h->items[c].value < h->items[best].value) best = c;
    }
    if (best < 0 || h->items[best].value >= last.value) break;
    h->items[i] = h->items[best];
    i = best;
  }
  if (h->size > 0) h->items[i] = last;
  return top;
}

static int64_t merge_runs(const int64_t* v, size_t n, int64_t* out) {
  size_t run_length = n / RUNS;
  size_t cursor[RUNS];
  struct dheap heap = {.size = 0};
  for (int r = 0; r < RUNS; ++r) {
    cursor[r] = (size_t)r * run_length;
    dheap_push(&heap, (struct item){v[cursor[r]], r});
  }
  size_t k = 0;
  int64_t weighted = 0;
  while (heap.size > 0) {
    struct item it = dheap_pop(&heap);
    weighted += it.value * (int64_t)(k % 13);
    out[k++] = it.value;
    size_t next = ++cursor[it.run];
    if (next < (size_t)(it.run + 1) * run_length) dheap_push(&heap, (struct item){v[next], it.run});
  }
  return weighted;
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
    fprintf(stderr, "usage: heapsort [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  seed = in->seed;
  int64_t* v = malloc(sizeof(int64_t) * COUNT);
  int64_t* merged = malloc(sizeof(int64_t) * COUNT);
  if (!v || !merged) return 2;
  size_t n = COUNT - COUNT % RUNS;
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t centred = (int64_t)(next_random() % in->range) - (int64_t)(in->range / 2);
    v[i] = centred - (int64_t)i * in->descent;
    sum += v[i];
  }
  /* Sort each run separately, then merge the runs with the d-ary heap. */
  size_t run_length = n / RUNS;
  for (int r = 0; r < RUNS; ++r) heapsort(v + (size_t)r * run_length, run_length);
  int64_t weighted = merge_runs(v, n, merged);
  heapsort(v, n);
  int64_t check = 0;
  for (size_t i = 0; i < n; ++i) {
    if (v[i] != merged[i] || (i > 0 && v[i - 1] > v[i])) {
      printf("heapsort mismatch at %zu\n", i);
      return 1;
    }
    check += v[i];
  }
  if (check != sum) return 1;
  printf("heapsort checksum %lld min %lld max %lld\n", (long long)weighted, (long long)v[0],
         (long long)v[n - 1]);
  free(v);
  free(merged);
  return 0;
}
