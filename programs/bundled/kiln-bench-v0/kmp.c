// Knuth-Morris-Pratt and Boyer-Moore-Horspool string search, checked against naive search.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SIZE 400000
#define PATTERNS 40
#define MAX_PATTERN 24

/* Input 0 is the default; the alternatives change the seed and the alphabet of the text and the
 * patterns: three letters (longer partial matches, shorter Horspool shifts), four letters with 'a'
 * drawn half the time (long runs), and six letters. */
struct input {
  uint32_t seed;
  const char* alphabet; /* letters are drawn uniformly from this string, repeats and all */
};

static const struct input inputs[4] = {
    {17u, "acgt"},
    {4242u, "abc"},
    {90210u, "aaacgt"},
    {31415u, "abcdef"},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 214013u + 2531011u;
  return (seed >> 16) & 0x7fffu;
}

static char random_letter(const char* alphabet) {
  return alphabet[next_random() % strlen(alphabet)];
}

/* A four-letter alphabet (like DNA) gives many partial matches. */
static void generate(char* text, size_t n, const char* alphabet) {
  for (size_t i = 0; i < n; ++i) text[i] = random_letter(alphabet);
}

static void failure_function(const char* pattern, size_t m, int* fail) {
  fail[0] = 0;
  size_t k = 0;
  for (size_t i = 1; i < m; ++i) {
    while (k > 0 && pattern[i] != pattern[k]) k = (size_t)fail[k - 1];
    if (pattern[i] == pattern[k]) ++k;
    fail[i] = (int)k;
  }
}

static size_t kmp_count(const char* text, size_t n, const char* pattern, size_t m, size_t* first) {
  int fail[MAX_PATTERN];
  failure_function(pattern, m, fail);
  size_t count = 0, k = 0;
  *first = n;
  for (size_t i = 0; i < n; ++i) {
    while (k > 0 && text[i] != pattern[k]) k = (size_t)fail[k - 1];
    if (text[i] == pattern[k]) ++k;
    if (k == m) {
      if (count == 0) *first = i + 1 - m;
      ++count;
      k = (size_t)fail[k - 1];
    }
  }
  return count;
}

static size_t horspool_count(const char* text, size_t n, const char* pattern, size_t m) {
  size_t shift[256];
  for (int c = 0; c < 256; ++c) shift[c] = m;
  for (size_t i = 0; i + 1 < m; ++i) shift[(unsigned char)pattern[i]] = m - 1 - i;
  size_t count = 0, pos = 0;
  while (pos + m <= n) {
    size_t j = m;
    while (j > 0 && text[pos + j - 1] == pattern[j - 1]) --j;
    if (j == 0) ++count;
    pos += shift[(unsigned char)text[pos + m - 1]];
  }
  return count;
}

static size_t naive_count(const char* text, size_t n, const char* pattern, size_t m) {
  size_t count = 0;
  for (size_t i = 0; i + m <= n; ++i)
    if (memcmp(text + i, pattern, m) == 0) ++count;
  return count;
}

/* Period of a string from its failure function: the smallest p with s[i] == s[i+p]. */
static size_t period(const char* s, size_t m) {
  int fail[MAX_PATTERN];
  failure_function(s, m, fail);
  return m - (size_t)fail[m - 1];
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
    fprintf(stderr, "usage: kmp [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  seed = in->seed;
  char* text = malloc(TEXT_SIZE);
  if (!text) return 2;
  generate(text, TEXT_SIZE, in->alphabet);
  char pattern[MAX_PATTERN + 1];
  uint64_t checksum = 0;
  for (int p = 0; p < PATTERNS; ++p) {
    size_t m = 2 + (size_t)(next_random() % (MAX_PATTERN - 1));
    /* Half the patterns are cut from the text so they occur at least once. */
    if (p % 2 == 0) {
      size_t at = (size_t)(next_random() * 13u) % (TEXT_SIZE - m);
      memcpy(pattern, text + at, m);
    } else {
      for (size_t i = 0; i < m; ++i) pattern[i] = random_letter(in->alphabet);
    }
    pattern[m] = '\0';
    size_t first;
    size_t a = kmp_count(text, TEXT_SIZE, pattern, m, &first);
    size_t b = horspool_count(text, TEXT_SIZE, pattern, m);
    if (p % 8 == 0 && naive_count(text, TEXT_SIZE, pattern, m) != a) {
      printf("kmp disagrees with naive search for %s\n", pattern);
      return 1;
    }
    if (a != b) {
      printf("kmp and horspool disagree for %s\n", pattern);
      return 1;
    }
    checksum = checksum * 1000003u + a * 31u + first + period(pattern, m);
  }
  if (period("abcabcab", 8) != 3) return 1;
  printf("kmp checksum 0x%016llx\n", (unsigned long long)checksum);
  free(text);
  return 0;
}
