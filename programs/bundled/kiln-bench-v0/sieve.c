// Sieve of Eratosthenes (plain, odd-only bitset and segmented), prime gaps and twin-prime counts.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 2000000
#define SEGMENT 32768

/* Input 0 is the default; the alternatives sieve to other limits, with the edge cases at the top:
 * a prime (the 100,000th), a round number, and the square of a prime. */
static const uint32_t limits[4] = {LIMIT, 1299709, 2500000, 1733u * 1733u};

static uint32_t plain_sieve(uint8_t* composite, uint32_t limit) {
  memset(composite, 0, limit + 1);
  composite[0] = composite[1] = 1;
  for (uint32_t i = 2; (uint64_t)i * i <= limit; ++i) {
    if (composite[i]) continue;
    for (uint32_t j = i * i; j <= limit; j += i) composite[j] = 1;
  }
  uint32_t count = 0;
  for (uint32_t i = 2; i <= limit; ++i) count += !composite[i];
  return count;
}

/* Bit i of the set stands for the odd number 2i+1. */
static int bit_test(const uint64_t* bits, uint32_t i) {
  return (int)((bits[i >> 6] >> (i & 63)) & 1u);
}
static void bit_set(uint64_t* bits, uint32_t i) { bits[i >> 6] |= 1ull << (i & 63); }

static uint32_t popcount64(uint64_t x) {
  uint32_t c = 0;
  while (x) {
    x &= x - 1;
    ++c;
  }
  return c;
}

static uint32_t odd_bitset_sieve(uint64_t* bits, uint32_t limit) {
  uint32_t odds = (limit + 1) / 2; /* 1, 3, 5, ... <= limit */
  memset(bits, 0, ((odds + 63) / 64) * sizeof(uint64_t));
  bit_set(bits, 0); /* 1 is not prime */
  for (uint32_t i = 1; (uint64_t)(2 * i + 1) * (2 * i + 1) <= limit; ++i) {
    if (bit_test(bits, i)) continue;
    uint32_t p = 2 * i + 1;
    for (uint32_t j = (p * p) / 2; j < odds; j += p) bit_set(bits, j);
  }
  uint32_t composites = 0;
  for (uint32_t w = 0; w < odds / 64; ++w) composites += popcount64(bits[w]);
  for (uint32_t i = (odds / 64) * 64; i < odds; ++i) composites += (uint32_t)bit_test(bits, i);
  return odds - composites + 1; /* plus the prime 2 */
}

static uint32_t segmented_sieve(uint32_t limit, const uint8_t* small_composite, uint32_t* max_gap,
                                uint32_t* twins) {
  uint8_t segment[SEGMENT];
  uint32_t root = 1;
  while ((uint64_t)(root + 1) * (root + 1) <= limit) ++root;
  uint32_t count = 0, previous = 0;
  *max_gap = 0;
  *twins = 0;
  for (uint32_t low = 2; low <= limit; low += SEGMENT) {
    uint32_t high = low + SEGMENT - 1 < limit ? low + SEGMENT - 1 : limit;
    memset(segment, 0, sizeof(segment));
    for (uint32_t p = 2; p <= root; ++p) {
      if (small_composite[p]) continue;
      uint32_t start = (low + p - 1) / p * p;
      if (start < p * p) start = p * p;
      for (uint32_t j = start; j <= high; j += p) segment[j - low] = 1;
    }
    for (uint32_t n = low; n <= high; ++n) {
      if (segment[n - low]) continue;
      ++count;
      if (previous) {
        if (n - previous > *max_gap) *max_gap = n - previous;
        if (n - previous == 2) ++*twins;
      }
      previous = n;
    }
  }
  return count;
}

static uint64_t prime_sum(const uint8_t* composite, uint32_t limit) {
  uint64_t sum = 0;
  for (uint32_t i = 2; i <= limit; ++i)
    if (!composite[i]) sum += i;
  return sum;
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
    fprintf(stderr, "usage: sieve [1|2|3]\n");
    return 2;
  }
  uint32_t limit = limits[input];
  uint8_t* composite = malloc((size_t)limit + 1);
  uint64_t* bits = malloc(((limit / 2 + 64) / 64 + 1) * sizeof(uint64_t));
  if (!composite || !bits) return 2;
  uint32_t a = plain_sieve(composite, limit);
  uint32_t b = odd_bitset_sieve(bits, limit);
  uint32_t max_gap, twins;
  uint32_t c = segmented_sieve(limit, composite, &max_gap, &twins);
  if (a != b || a != c || plain_sieve(composite, 100) != 25) {
    printf("sieves disagree: %u %u %u\n", a, b, c);
    return 1;
  }
  plain_sieve(composite, limit);
  printf("sieve primes %u max_gap %u twins %u sum %llu\n", a, max_gap, twins,
         (unsigned long long)prime_sum(composite, limit));
  free(composite);
  free(bits);
  return 0;
}
