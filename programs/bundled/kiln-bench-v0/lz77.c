// LZ77-style compressor with a hash-chain match finder, and its decompressor, on generated text.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INPUT_SIZE 120000
#define WINDOW 4096
#define MIN_MATCH 3
#define MAX_MATCH 258
#define HASH_BITS 12
#define MAX_CHAIN 32

/* Input 0 is the default; the alternatives change the seed and the text: frequent line breaks, a
 * three-word vocabulary (long matches), and seven words with almost no line breaks. */
struct input {
  uint32_t seed;
  uint32_t vocabulary;     /* words drawn from the first `vocabulary` of the list */
  uint32_t newline_one_in; /* a line break follows a word with probability 1 / newline_one_in */
};

static const struct input inputs[4] = {
    {2024u, 12, 17},
    {1999u, 12, 3},
    {4711u, 3, 17},
    {8086u, 7, 1000},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 1103515245u + 12345u;
  return (seed >> 16) & 0x7fffu;
}

/* Text from a small vocabulary: repetitive enough for matches to be common. */
static size_t generate_text(char* out, size_t size, const struct input* in) {
  static const char* words[] = {"the ",      "compiler ", "pass ", "loop ", "inline ",   "vector ",
                                "register ", "alloc ",    "of ",   "and ",  "schedule ", "cost "};
  size_t n = 0;
  while (n < size) {
    const char* w = words[next_random() % in->vocabulary];
    size_t len = strlen(w);
    if (n + len > size) break;
    memcpy(out + n, w, len);
    n += len;
    if (next_random() % in->newline_one_in == 0 && n < size) out[n++] = '\n';
  }
  return n;
}

static uint32_t hash3(const uint8_t* p) {
  return ((uint32_t)p[0] << 16 ^ (uint32_t)p[1] << 8 ^ p[2]) * 2654435761u >> (32 - HASH_BITS);
}

static size_t match_length(const uint8_t* a, const uint8_t* b, size_t limit) {
  size_t n = 0;
  while (n < limit && a[n] == b[n]) ++n;
  return n;
}

/* Tokens: flag byte 0 + literal, or flag byte 1 + 16-bit distance + 8-bit (length - MIN_MATCH). */
static size_t compress(const uint8_t* in, size_t n, uint8_t* out, int32_t* head, int32_t* prev) {
  for (int i = 0; i < (1 << HASH_BITS); ++i) head[i] = -1;
  size_t o = 0, i = 0;
  while (i < n) {
    size_t best_len = 0, best_dist = 0;
    if (i + MIN_MATCH <= n) {
      uint32_t h = hash3(in + i);
      int32_t candidate = head[h];
      size_t limit = n - i < MAX_MATCH ? n - i : MAX_MATCH;
      for (int chain = 0; candidate >= 0 && chain < MAX_CHAIN; ++chain) {
        size_t dist = i - (size_t)candidate;
        if (dist > WINDOW) break;
        size_t len = match_length(in + candidate, in + i, limit);
        if (len > best_len) {
          best_len = len;
          best_dist = dist;
        }
        candidate = prev[candidate];
      }
      prev[i] = head[h];
      head[h] = (int32_t)i;
    }
    if (best_len >= MIN_MATCH) {
      out[o++] = 1;
      out[o++] = (uint8_t)(best_dist >> 8);
      out[o++] = (uint8_t)best_dist;
      out[o++] = (uint8_t)(best_len - MIN_MATCH);
      /* Insert the skipped positions so later matches can find them. */
      for (size_t k = 1; k < best_len && i + k + MIN_MATCH <= n; ++k) {
        uint32_t h = hash3(in + i + k);
        prev[i + k] = head[h];
        head[h] = (int32_t)(i + k);
      }
      i += best_len;
    } else {
      out[o++] = 0;
      out[o++] = in[i++];
    }
  }
  return o;
}

static size_t decompress(const uint8_t* in, size_t n, uint8_t* out, size_t capacity) {
  size_t o = 0, i = 0;
  while (i < n) {
    if (in[i] == 0) {
      if (i + 1 >= n || o >= capacity) return (size_t)-1;
      out[o++] = in[i + 1];
      i += 2;
    } else {
      if (i + 3 >= n) return (size_t)-1;
      size_t dist = ((size_t)in[i + 1] << 8) | in[i + 2];
      size_t len = (size_t)in[i + 3] + MIN_MATCH;
      if (dist == 0 || dist > o || o + len > capacity) return (size_t)-1;
      /* Byte by byte: overlapping copies repeat the recent output. */
      for (size_t k = 0; k < len; ++k, ++o) out[o] = out[o - dist];
      i += 4;
    }
  }
  return o;
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
    fprintf(stderr, "usage: lz77 [1|2|3]\n");
    return 2;
  }
  seed = inputs[input].seed;
  uint8_t *text = malloc(INPUT_SIZE), *packed = malloc(INPUT_SIZE * 2 + 8);
  uint8_t* unpacked = malloc(INPUT_SIZE);
  int32_t *head = malloc(sizeof(int32_t) << HASH_BITS),
          *prev = malloc(sizeof(int32_t) * INPUT_SIZE);
  if (!text || !packed || !unpacked || !head || !prev) return 2;
  size_t n = generate_text((char*)text, INPUT_SIZE, &inputs[input]);
  size_t packed_size = compress(text, n, packed, head, prev);
  size_t restored = decompress(packed, packed_size, unpacked, INPUT_SIZE);
  if (restored != n || memcmp(text, unpacked, n) != 0) {
    printf("lz77 round trip failed\n");
    return 1;
  }
  uint32_t checksum = 0;
  for (size_t i = 0; i < packed_size; ++i) checksum = (checksum << 5 | checksum >> 27) ^ packed[i];
  printf("lz77 input %zu packed %zu checksum 0x%08x\n", n, packed_size, checksum);
  free(text);
  free(packed);
  free(unpacked);
  free(head);
  free(prev);
  return 0;
}
