// Huffman code lengths (heap-built tree, length-limited), canonical codes, and bit-level
// encode/decode.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYMBOLS 256
#define INPUT_SIZE 100000
#define MAX_BITS 15

struct node {
  uint64_t weight;
  int left, right; /* -1 for leaves */
};

/* Input 0 is the default; the alternatives change the seed and the distribution: values up to 255
 * instead of 127, and a geometric one whose plain Huffman code is longer than MAX_BITS (so the
 * lengths are limited by the retry loop). At about 2 bits a value, the geometric input is three
 * times as long to cost about as much. */
struct input {
  uint32_t seed;
  uint32_t max_bits; /* a value has 0 .. max_bits random low bits; 0 selects geometric */
  size_t size;
};

static const struct input inputs[4] = {
    {3u, 7, INPUT_SIZE},
    {1103515245u, 7, INPUT_SIZE},
    {2654435761u, 8, INPUT_SIZE},
    {40503u, 0, 3 * INPUT_SIZE},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

/* Skewed distribution: small byte values are far more likely. The geometric one gives v with
 * probability 2^-(v+1): the number of trailing zero bits of a random word. */
static void generate(uint8_t* data, size_t n, uint32_t max_bits) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t r = next_random();
    if (max_bits == 0) {
      uint8_t zeros = 0;
      while (zeros < 31 && !((r >> zeros) & 1u)) ++zeros;
      data[i] = zeros;
      continue;
    }
    uint32_t bits = r % (max_bits + 1);
    data[i] = (uint8_t)((r >> 8) & ((1u << bits) - 1u));
  }
}

static void heap_sift(int* heap, int size, int i, const struct node* nodes) {
  while (1) {
    int smallest = i, l = 2 * i + 1, r = 2 * i + 2;
    if (l < size && nodes[heap[l]].weight < nodes[heap[smallest]].weight) smallest = l;
    if (r < size && nodes[heap[r]].weight < nodes[heap[smallest]].weight) smallest = r;
    if (smallest == i) return;
    int t = heap[i];
    heap[i] = heap[smallest];
    heap[smallest] = t;
    i = smallest;
  }
}

static int heap_pop(int* heap, int* size, const struct node* nodes) {
  int top = heap[0];
  heap[0] = heap[--*size];
  heap_sift(heap, *size, 0, nodes);
  return top;
}

static void heap_push(int* heap, int* size, int id, const struct node* nodes) {
  int i = (*size)++;
  heap[i] = id;
  while (i > 0 && nodes[heap[(i - 1) / 2]].weight > nodes[heap[i]].weight) {
    int t = heap[i];
    heap[i] = heap[(i - 1) / 2];
    heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static void assign_depths(const struct node* nodes, int id, int depth, uint8_t* lengths) {
  if (nodes[id].left < 0) {
    lengths[id] = (uint8_t)(depth == 0 ? 1 : depth);
    return;
  }
  assign_depths(nodes, nodes[id].left, depth + 1, lengths);
  assign_depths(nodes, nodes[id].right, depth + 1, lengths);
}

/* Builds lengths; retries with flattened weights until no code exceeds MAX_BITS. */
static void code_lengths(const uint64_t* freq, uint8_t* lengths) {
  struct node nodes[2 * SYMBOLS];
  int heap[2 * SYMBOLS];
  uint64_t scaled[SYMBOLS];
  for (int s = 0; s < SYMBOLS; ++s) scaled[s] = freq[s];
  for (;;) {
    int size = 0, count = SYMBOLS;
    for (int s = 0; s < SYMBOLS; ++s) {
      nodes[s] = (struct node){scaled[s], -1, -1};
      lengths[s] = 0;
      if (scaled[s]) heap_push(heap, &size, s, nodes);
    }
    if (size == 0) return;
    while (size > 1) {
      int a = heap_pop(heap, &size, nodes), b = heap_pop(heap, &size, nodes);
      nodes[count] = (struct node){nodes[a].weight + nodes[b].weight, a, b};
      heap_push(heap, &size, count++, nodes);
    }
    uint8_t depth_of[2 * SYMBOLS] = {0};
    assign_depths(nodes, heap[0], 0, depth_of);
    int too_long = 0;
    for (int s = 0; s < SYMBOLS; ++s) {
      lengths[s] = scaled[s] ? depth_of[s] : 0;
      if (lengths[s] > MAX_BITS) too_long = 1;
    }
    if (!too_long) return;
    for (int s = 0; s < SYMBOLS; ++s)
      if (scaled[s]) scaled[s] = (scaled[s] >> 1) | 1;
  }
}

static void canonical_codes(const uint8_t* lengths, uint16_t* codes) {
  int bl_count[MAX_BITS + 1] = {0};
  for (int s = 0; s < SYMBOLS; ++s) bl_count[lengths[s]]++;
  bl_count[0] = 0;
  uint16_t next_code[MAX_BITS + 1] = {0};
  uint16_t code = 0;
  for (int bits = 1; bits <= MAX_BITS; ++bits) {
    code = (uint16_t)((code + bl_count[bits - 1]) << 1);
    next_code[bits] = code;
  }
  for (int s = 0; s < SYMBOLS; ++s)
    if (lengths[s]) codes[s] = next_code[lengths[s]]++;
}

static size_t encode(const uint8_t* in, size_t n, const uint8_t* lengths, const uint16_t* codes,
                     uint8_t* out) {
  size_t bit = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int b = lengths[in[i]] - 1; b >= 0; --b, ++bit) {
      if ((codes[in[i]] >> b) & 1) out[bit >> 3] |= (uint8_t)(0x80u >> (bit & 7));
    }
  }
  return bit;
}

/* Decoding by walking canonical ranges, one bit at a time. */
static int decode(const uint8_t* in, size_t n, const uint8_t* lengths, const uint16_t* codes,
                  uint8_t* out) {
  size_t bit = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t code = 0;
    int found = -1;
    for (int len = 1; len <= MAX_BITS && found < 0; ++len) {
      code = (code << 1) | ((in[bit >> 3] >> (7 - (bit & 7))) & 1u);
      ++bit;
      for (int s = 0; s < SYMBOLS; ++s) {
        if (lengths[s] == len && codes[s] == code) {
          found = s;
          break;
        }
      }
    }
    if (found < 0) return 0;
    out[i] = (uint8_t)found;
  }
  return 1;
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
    fprintf(stderr, "usage: huffman [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  seed = in->seed;
  size_t n = in->size;
  uint8_t *data = malloc(n), *decoded = malloc(n);
  uint8_t* bits = calloc(n * 2, 1);
  if (!data || !decoded || !bits) return 2;
  generate(data, n, in->max_bits);
  uint64_t freq[SYMBOLS] = {0};
  for (size_t i = 0; i < n; ++i) freq[data[i]]++;
  uint8_t lengths[SYMBOLS];
  uint16_t codes[SYMBOLS] = {0};
  code_lengths(freq, lengths);
  /* Kraft: a complete prefix code sums to exactly 1. */
  uint64_t kraft = 0;
  for (int s = 0; s < SYMBOLS; ++s)
    if (lengths[s]) kraft += 1ull << (MAX_BITS - lengths[s]);
  if (kraft != (1ull << MAX_BITS)) {
    printf("huffman lengths violate kraft equality\n");
    return 1;
  }
  canonical_codes(lengths, codes);
  size_t total_bits = encode(data, n, lengths, codes, bits);
  if (!decode(bits, n, lengths, codes, decoded) || memcmp(data, decoded, n) != 0) {
    printf("huffman round trip failed\n");
    return 1;
  }
  uint32_t checksum = 0;
  for (int s = 0; s < SYMBOLS; ++s) checksum = checksum * 17u + lengths[s] * 131u + codes[s];
  printf("huffman bits %zu checksum 0x%08x\n", total_bits, checksum);
  free(data);
  free(decoded);
  free(bits);
  return 0;
}
