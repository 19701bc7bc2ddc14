// Top-down and bottom-up merge sort of records, checking stability and agreement.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 100000

struct record {
  uint32_t key;
  uint32_t original_index;
};

/* Input 0 is the default; the alternatives change the seed and the three key ranges, from two keys
 * (nearly all ties, where stability shows) to the whole 32-bit range. */
struct input {
  uint64_t seed;
  uint32_t ranges[3]; /* the records are sorted three times, with keys below each range */
};

static const struct input inputs[4] = {
    {0x853c49e6748fea9bull, {10, 1000, 1u << 30}},
    {0xda3e39cb94b95bdbull, {2, 300, 1u << 20}},
    {0x5851f42d4c957f2dull, {5, 20000, 1u << 31}},
    {0x14057b7ef767814full, {100, 3000, 0xffffffffu}},
};

static uint64_t rng;

static uint32_t next_random(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

static int record_less(const struct record* a, const struct record* b) { return a->key < b->key; }

static void merge(struct record* dst, const struct record* src, size_t lo, size_t mid, size_t hi) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    /* Taking from the left run on ties is what makes the sort stable. */
    if (record_less(&src[j], &src[i])) {
      dst[k++] = src[j++];
    } else {
      dst[k++] = src[i++];
    }
  }
  while (i < mid) dst[k++] = src[i++];
  while (j < hi) dst[k++] = src[j++];
}

static void top_down(struct record* v, struct record* scratch, size_t lo, size_t hi) {
  if (hi - lo < 2) return;
  if (hi - lo <= 8) {
    for (size_t i = lo + 1; i < hi; ++i) {
      struct record x = v[i];
      size_t j = i;
      while (j > lo && record_less(&x, &v[j - 1])) {
        v[j] = v[j - 1];
        --j;
      }
      v[j] = x;
    }
    return;
  }
  size_t mid = lo + (hi - lo) / 2;
  top_down(v, scratch, lo, mid);
  top_down(v, scratch, mid, hi);
  if (!record_less(&v[mid], &v[mid - 1])) return; /* already in order */
  merge(scratch, v, lo, mid, hi);
  memcpy(v + lo, scratch + lo, (hi - lo) * sizeof(struct record));
}

static void bottom_up(struct record* v, struct record* scratch, size_t n) {
  struct record *src = v, *dst = scratch;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      merge(dst, src, lo, mid, hi);
    }
    struct record* t = src;
    src = dst;
    dst = t;
  }
  if (src != v) memcpy(v, src, n * sizeof(struct record));
}

static int check_stable_sorted(const struct record* v, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    if (v[i - 1].key > v[i].key) return 0;
    if (v[i - 1].key == v[i].key && v[i - 1].original_index > v[i].original_index) return 0;
  }
  return 1;
}

static void generate(struct record* v, size_t n, uint32_t key_range) {
  for (size_t i = 0; i < n; ++i) {
    v[i].key = next_random() % key_range;
    v[i].original_index = (uint32_t)i;
  }
}

static uint32_t digest(const struct record* v, size_t n) {
  uint32_t h = 0;
  for (size_t i = 0; i < n; ++i) h = h * 0x01000193u ^ v[i].key ^ (v[i].original_index << 7);
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
    fprintf(stderr, "usage: mergesort [1|2|3]\n");
    return 2;
  }
  rng = inputs[input].seed;
  struct record* a = malloc(sizeof(struct record) * COUNT);
  struct record* b = malloc(sizeof(struct record) * COUNT);
  struct record* scratch = malloc(sizeof(struct record) * COUNT);
  if (!a || !b || !scratch) return 2;
  uint32_t checksum = 0;
  const uint32_t* ranges = inputs[input].ranges;
  for (int r = 0; r < 3; ++r) {
    generate(a, COUNT, ranges[r]);
    memcpy(b, a, sizeof(struct record) * COUNT);
    top_down(a, scratch, 0, COUNT);
    bottom_up(b, scratch, COUNT);
    if (!check_stable_sorted(a, COUNT) || memcmp(a, b, sizeof(struct record) * COUNT) != 0) {
      printf("mergesort failed for key range %u\n", ranges[r]);
      return 1;
    }
    checksum ^= digest(a, COUNT) + (uint32_t)r;
  }
  free(a);
  free(b);
  free(scratch);
  printf("mergesort checksum 0x%08x\n", checksum);
  return 0;
}
