// Dynamic programming on strings: Levenshtein distance (full and two-row), LCS length and alignment
// traceback.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIRS 60
#define MAX_LEN 400

/* Input 0 is the default; the alternatives change the seed, the alphabet and how heavily b is
 * mutated: a binary alphabet, an edit at every other position on average, and 26 letters. */
struct input {
  uint32_t seed;
  uint32_t alphabet;   /* letters 'a' .. 'a' + alphabet - 1 */
  uint32_t edit_scale; /* deletion, insertion and substitution each hit 1 in edit_scale positions */
};

static const struct input inputs[4] = {
    {123u, 6, 20},
    {4567u, 2, 20},
    {89101u, 6, 6},
    {121314u, 26, 10},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

static char random_letter(uint32_t alphabet) { return (char)('a' + next_random() % alphabet); }

static int min3(int a, int b, int c) {
  int m = a < b ? a : b;
  return m < c ? m : c;
}

/* b is a mutated copy of a, so the distance is small relative to the length. */
static void make_pair(char* a, size_t* na, char* b, size_t* nb, const struct input* in) {
  *na = 50 + next_random() % (MAX_LEN - 100);
  for (size_t i = 0; i < *na; ++i) a[i] = random_letter(in->alphabet);
  size_t j = 0;
  for (size_t i = 0; i < *na && j < MAX_LEN; ++i) {
    uint32_t r = next_random() % in->edit_scale;
    if (r == 0) continue;                                                /* deletion */
    if (r == 1 && j + 1 < MAX_LEN) b[j++] = random_letter(in->alphabet); /* insertion */
    b[j++] = r == 2 ? random_letter(in->alphabet) : a[i];                /* substitution */
  }
  *nb = j;
}

static int levenshtein_full(const char* a, size_t na, const char* b, size_t nb, int* table) {
  size_t w = nb + 1;
  for (size_t j = 0; j <= nb; ++j) table[j] = (int)j;
  for (size_t i = 1; i <= na; ++i) {
    table[i * w] = (int)i;
    for (size_t j = 1; j <= nb; ++j) {
      int cost = a[i - 1] != b[j - 1];
      table[i * w + j] = min3(table[(i - 1) * w + j] + 1, table[i * w + j - 1] + 1,
                              table[(i - 1) * w + j - 1] + cost);
    }
  }
  return table[na * w + nb];
}

static int levenshtein_rows(const char* a, size_t na, const char* b, size_t nb) {
  int prev[MAX_LEN + 1], cur[MAX_LEN + 1];
  for (size_t j = 0; j <= nb; ++j) prev[j] = (int)j;
  for (size_t i = 1; i <= na; ++i) {
    cur[0] = (int)i;
    for (size_t j = 1; j <= nb; ++j)
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]));
    memcpy(prev, cur, sizeof(int) * (nb + 1));
  }
  return prev[nb];
}

static int lcs_length(const char* a, size_t na, const char* b, size_t nb) {
  int prev[MAX_LEN + 1] = {0}, cur[MAX_LEN + 1] = {0};
  for (size_t i = 1; i <= na; ++i) {
    for (size_t j = 1; j <= nb; ++j) {
      if (a[i - 1] == b[j - 1]) {
        cur[j] = prev[j - 1] + 1;
      } else {
        cur[j] = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
      }
    }
    memcpy(prev, cur, sizeof(int) * (nb + 1));
  }
  return prev[nb];
}

/* Walks the full table back to count the edit operations of one optimal alignment. */
static void traceback(const char* a, size_t na, const char* b, size_t nb, const int* table,
                      int* subs, int* ins, int* dels) {
  size_t w = nb + 1, i = na, j = nb;
  *subs = *ins = *dels = 0;
  while (i > 0 || j > 0) {
    int here = table[i * w + j];
    if (i > 0 && j > 0 && here == table[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1])) {
      *subs += a[i - 1] != b[j - 1];
      --i;
      --j;
    } else if (i > 0 && here == table[(i - 1) * w + j] + 1) {
      ++*dels;
      --i;
    } else {
      ++*ins;
      --j;
    }
  }
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
    fprintf(stderr, "usage: edit_distance [1|2|3]\n");
    return 2;
  }
  seed = inputs[input].seed;
  char a[MAX_LEN], b[MAX_LEN];
  int* table = malloc(sizeof(int) * (MAX_LEN + 1) * (MAX_LEN + 1));
  if (!table) return 2;
  uint32_t checksum = 0;
  for (int p = 0; p < PAIRS; ++p) {
    size_t na, nb;
    make_pair(a, &na, b, &nb, &inputs[input]);
    int full = levenshtein_full(a, na, b, nb, table);
    int rows = levenshtein_rows(a, na, b, nb);
    int lcs = lcs_length(a, na, b, nb);
    int subs, ins, dels;
    traceback(a, na, b, nb, table, &subs, &ins, &dels);
    /* Consistency: both DPs agree, the alignment costs the distance, and LCS bounds it. */
    if (full != rows || subs + ins + dels != full || (int)na - dels != (int)nb - ins ||
        full < (int)(na > nb ? na - nb : nb - na) || (size_t)lcs > (na < nb ? na : nb)) {
      printf("edit distance inconsistency in pair %d\n", p);
      return 1;
    }
    checksum = checksum * 31u + (uint32_t)(full * 1000 + lcs);
  }
  free(table);
  printf("edit_distance checksum 0x%08x\n", checksum);
  return 0;
}
