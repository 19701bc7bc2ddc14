// Adler-32, Fletcher-16 and Fletcher-32 checksums with rolling-window updates.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MOD_ADLER 65521u
#define DATA_SIZE 200000
#define WINDOW 64

/* Input 0 is the default; the alternatives move the seed and the runs of 0xff bytes that push the
 * sums towards their largest values: longer runs, almost nothing but 0xff, and no runs at all. */
struct input {
  uint64_t seed;
  size_t run_period, run_length; /* byte i is 0xff when i % run_period < run_length */
};

static const struct input inputs[4] = {
    {88172645463325252ull, 997, 100},
    {0x9e3779b97f4a7c15ull, 613, 300},
    {0x2545f4914f6cdd1dull, 4093, 4000},
    {0x853c49e6748fea9bull, 1, 0},
};

static uint64_t lcg_state;

static uint8_t next_byte(void) {
  lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint8_t)(lcg_state >> 56);
}

static void generate(uint8_t* data, size_t size, const struct input* in) {
  lcg_state = in->seed;
  for (size_t i = 0; i < size; ++i) {
    uint8_t b = next_byte();
    /* Mix in long runs so the modular reductions see both extremes. */
    data[i] = (i % in->run_period < in->run_length) ? 0xff : b;
  }
}

static uint32_t adler32(const uint8_t* data, size_t size) {
  uint32_t a = 1, b = 0;
  while (size > 0) {
    size_t block = size < 5552 ? size : 5552; /* largest n with no 32-bit overflow */
    size -= block;
    while (block--) {
      a += *data++;
      b += a;
    }
    a %= MOD_ADLER;
    b %= MOD_ADLER;
  }
  return (b << 16) | a;
}

static uint32_t adler32_naive(const uint8_t* data, size_t size) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < size; ++i) {
    a = (a + data[i]) % MOD_ADLER;
    b = (b + a) % MOD_ADLER;
  }
  return (b << 16) | a;
}

/* Slides a window of `window` bytes by one position. */
static uint32_t adler32_roll(uint32_t sum, size_t window, uint8_t out, uint8_t in) {
  uint32_t a = sum & 0xffffu;
  uint32_t b = sum >> 16;
  a = (a + MOD_ADLER - out + in) % MOD_ADLER;
  b = (uint32_t)((b + MOD_ADLER * 64u - (uint32_t)((window * out) % MOD_ADLER) + a - 1u) %
                 MOD_ADLER);
  return (b << 16) | a;
}

static uint16_t fletcher16(const uint8_t* data, size_t size) {
  uint16_t sum1 = 0, sum2 = 0;
  for (size_t i = 0; i < size; ++i) {
    sum1 = (uint16_t)((sum1 + data[i]) % 255);
    sum2 = (uint16_t)((sum2 + sum1) % 255);
  }
  return (uint16_t)((sum2 << 8) | sum1);
}

static uint32_t fletcher32(const uint8_t* data, size_t size) {
  uint32_t sum1 = 0xffff, sum2 = 0xffff;
  size_t words = size / 2;
  while (words) {
    size_t block = words > 359 ? 359 : words;
    words -= block;
    do {
      sum1 += (uint32_t)data[0] | ((uint32_t)data[1] << 8);
      sum2 += sum1;
      data += 2;
    } while (--block);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return (sum2 << 16) | sum1;
}

static uint32_t rolling_scan(const uint8_t* data, size_t size, int* errors) {
  uint32_t sum = adler32(data, WINDOW);
  uint32_t combined = sum;
  for (size_t i = WINDOW; i < size; ++i) {
    sum = adler32_roll(sum, WINDOW, data[i - WINDOW], data[i]);
    if ((i & 4095) == 0 && sum != adler32(data + i - WINDOW + 1, WINDOW)) {
      ++*errors;
    }
    combined ^= sum + (uint32_t)i;
  }
  return combined;
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
    fprintf(stderr, "usage: adler32 [1|2|3]\n");
    return 2;
  }
  uint8_t* data = malloc(DATA_SIZE);
  if (!data) return 2;
  generate(data, DATA_SIZE, &inputs[input]);
  uint32_t checksum = 0;
  int errors = 0;
  for (size_t len = 1000; len <= DATA_SIZE; len += 19999) {
    uint32_t fast = adler32(data, len);
    if (fast != adler32_naive(data, len)) ++errors;
    checksum = checksum * 33u + fast;
    checksum ^= fletcher16(data, len);
    checksum += fletcher32(data, len & ~(size_t)1);
  }
  checksum ^= rolling_scan(data, DATA_SIZE, &errors);
  if (adler32((const uint8_t*)"Wikipedia", 9) != 0x11E60398u) ++errors;
  free(data);
  if (errors) {
    printf("adler32 self-check failed: %d errors\n", errors);
    return 1;
  }
  printf("adler32 checksum 0x%08x\n", checksum);
  return 0;
}
