// LSD radix sort (8-bit digits) of 32-bit keys and of signed keys, checked against counting sort.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT 250000
#define SMALL_RANGE 4096

/* Input 0 is the default; the alternatives change the seed, mask the keys of the first sort (the
 * top digit, or the first and third, then agree for all keys and are skipped; the last input
 * clears only the four low bits) and the range of the keys that counting sort checks. */
struct input {
  uint32_t seed;
  uint32_t key_mask;    /* applied to the keys of the first sort */
  uint32_t small_range; /* keys of the second sort are below this */
};

static const struct input inputs[4] = {
    {0xdeadbeefu, 0xffffffffu, SMALL_RANGE},
    {0x8badf00du, 0x00ffffffu, 256},
    {0xfeedfaceu, 0xff00ff00u, 65536},
    {0x1badb002u, 0xfffffff0u, 1000},
};

static uint32_t state;

static uint32_t next_random(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

static void histogram(const uint32_t* v, size_t n, int shift, size_t* count) {
  memset(count, 0, 256 * sizeof(size_t));
  for (size_t i = 0; i < n; ++i) count[(v[i] >> shift) & 0xffu]++;
}

static void prefix_sums(size_t* count) {
  size_t total = 0;
  for (int d = 0; d < 256; ++d) {
    size_t c = count[d];
    count[d] = total;
    total += c;
  }
}

static void scatter(const uint32_t* src, uint32_t* dst, size_t n, int shift, size_t* offset) {
  for (size_t i = 0; i < n; ++i) dst[offset[(src[i] >> shift) & 0xffu]++] = src[i];
}

static void radix_sort_u32(uint32_t* v, uint32_t* tmp, size_t n) {
  size_t count[256];
  uint32_t *src = v, *dst = tmp;
  for (int shift = 0; shift < 32; shift += 8) {
    histogram(src, n, shift, count);
    /* A digit where every key agrees needs no pass at all. */
    int skip = 0;
    for (int d = 0; d < 256; ++d)
      if (count[d] == n) skip = 1;
    if (skip) continue;
    prefix_sums(count);
    scatter(src, dst, n, shift, count);
    uint32_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != v) memcpy(v, src, n * sizeof(uint32_t));
}

/* Flipping the sign bit maps signed order onto unsigned order. */
static void radix_sort_i32(int32_t* v, uint32_t* tmp, size_t n) {
  uint32_t* u = (uint32_t*)malloc(n * sizeof(uint32_t));
  if (!u) return;
  for (size_t i = 0; i < n; ++i) u[i] = (uint32_t)v[i] ^ 0x80000000u;
  radix_sort_u32(u, tmp, n);
  for (size_t i = 0; i < n; ++i) v[i] = (int32_t)(u[i] ^ 0x80000000u);
  free(u);
}

static void counting_sort(uint32_t* v, size_t n, uint32_t range) {
  size_t* count = calloc(range, sizeof(size_t));
  if (!count) return;
  for (size_t i = 0; i < n; ++i) count[v[i]]++;
  size_t k = 0;
  for (uint32_t x = 0; x < range; ++x)
    for (size_t c = 0; c < count[x]; ++c) v[k++] = x;
  free(count);
}

static uint32_t fold(const uint32_t* v, size_t n) {
  uint32_t h = 0;
  for (size_t i = 0; i < n; ++i) h = (h << 3 | h >> 29) ^ v[i];
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
    fprintf(stderr, "usage: radix_sort [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  state = in->seed;
  uint32_t* a = malloc(COUNT * sizeof(uint32_t));
  uint32_t* b = malloc(COUNT * sizeof(uint32_t));
  uint32_t* tmp = malloc(COUNT * sizeof(uint32_t));
  int32_t* s = malloc(COUNT * sizeof(int32_t));
  if (!a || !b || !tmp || !s) return 2;

  for (size_t i = 0; i < COUNT; ++i) a[i] = next_random() & in->key_mask;
  radix_sort_u32(a, tmp, COUNT);
  for (size_t i = 1; i < COUNT; ++i)
    if (a[i - 1] > a[i]) return 1;
  uint32_t checksum = fold(a, COUNT);

  for (size_t i = 0; i < COUNT; ++i) a[i] = b[i] = next_random() % in->small_range;
  radix_sort_u32(a, tmp, COUNT);
  counting_sort(b, COUNT, in->small_range);
  if (memcmp(a, b, COUNT * sizeof(uint32_t)) != 0) {
    printf("radix and counting sort disagree\n");
    return 1;
  }
  checksum ^= fold(a, COUNT) * 3u;

  for (size_t i = 0; i < COUNT; ++i) s[i] = (int32_t)next_random();
  radix_sort_i32(s, tmp, COUNT);
  for (size_t i = 1; i < COUNT; ++i)
    if (s[i - 1] > s[i]) return 1;
  checksum += (uint32_t)s[0] ^ (uint32_t)s[COUNT / 2] ^ (uint32_t)s[COUNT - 1];

  free(a);
  free(b);
  free(tmp);
  free(s);
  printf("radix_sort checksum 0x%08x\n", checksum);
  return 0;
}
