// JSON-ish tokenizer and structural validator (nesting, strings with escapes, numbers) over
// generated documents.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_CAPACITY 200000
#define MAX_DEPTH 64

enum token {
  T_LBRACE,
  T_RBRACE,
  T_LBRACKET,
  T_RBRACKET,
  T_COLON,
  T_COMMA,
  T_STRING,
  T_NUMBER,
  T_TRUE,
  T_FALSE,
  T_NULL,
  T_END,
  T_ERROR
};

struct scanner {
  const char* text;
  size_t pos, length;
};

/* Input 0 is the default; the alternatives change the seed (other documents) and their shape:
 * shallow documents with twice as many top-level values, and nesting 14 deep instead of 7. */
struct input {
  uint32_t seed;
  int values;     /* top-level array elements of a document */
  int flat_depth; /* deeper than this only scalars are generated */
};

static const struct input inputs[4] = {
    {8u, 20, 5},
    {1337u, 20, 5},
    {271828u, 40, 1},
    {161803u, 16, 12},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int scan_string(struct scanner* s) {
  ++s->pos; /* opening quote */
  while (s->pos < s->length) {
    char c = s->text[s->pos++];
    if (c == '"') return 1;
    if (c == '\\') {
      if (s->pos >= s->length) return 0;
      char e = s->text[s->pos++];
      if (e == 'u') {
        for (int i = 0; i < 4; ++i, ++s->pos) {
          if (s->pos >= s->length) return 0;
          char h = s->text[s->pos];
          if (!is_digit(h) && !(h >= 'a' && h <= 'f') && !(h >= 'A' && h <= 'F')) return 0;
        }
      } else if (!strchr("\"\\/bfnrt", e)) {
        return 0;
      }
    } else if ((unsigned char)c < 0x20) {
      return 0;
    }
  }
  return 0;
}

static int scan_number(struct scanner* s) {
  size_t start = s->pos;
  if (s->text[s->pos] == '-') ++s->pos;
  if (s->pos >= s->length || !is_digit(s->text[s->pos])) return 0;
  if (s->text[s->pos] == '0') {
    ++s->pos;
  } else {
    while (s->pos < s->length && is_digit(s->text[s->pos])) ++s->pos;
  }
  if (s->pos < s->length && s->text[s->pos] == '.') {
    ++s->pos;
    if (s->pos >= s->length || !is_digit(s->text[s->pos])) return 0;
    while (s->pos < s->length && is_digit(s->text[s->pos])) ++s->pos;
  }
  if (s->pos < s->length && (s->text[s->pos] == 'e' || s->text[s->pos] == 'E')) {
    ++s->pos;
    if (s->pos < s->length && (s->text[s->pos] == '+' || s->text[s->pos] == '-')) ++s->pos;
    if (s->pos >= s->length || !is_digit(s->text[s->pos])) return 0;
    while (s->pos < s->length && is_digit(s->text[s->pos])) ++s->pos;
  }
  return s->pos > start;
}

static int scan_word(struct scanner* s, const char* word) {
  size_t n = strlen(word);
  if (s->length - s->pos < n || memcmp(s->text + s->pos, word, n) != 0) return 0;
  s->pos += n;
  return 1;
}

static enum token next(struct scanner* s) {
  while (s->pos < s->length && is_space(s->text[s->pos])) ++s->pos;
  if (s->pos >= s->length) return T_END;
  char c = s->text[s->pos];
  switch (c) {
    case '{':
      ++s->pos;
      return T_LBRACE;
    case '}':
      ++s->pos;
      return T_RBRACE;
    case '[':
      ++s->pos;
      return T_LBRACKET;
    case ']':
      ++s->pos;
      return T_RBRACKET;
    case ':':
      ++s->pos;
      return T_COLON;
    case ',':
      ++s->pos;
      return T_COMMA;
    case '"':
      return scan_string(s) ? T_STRING : T_ERROR;
    case 't':
      return scan_word(s, "true") ? T_TRUE : T_ERROR;
    case 'f':
      return scan_word(s, "false") ? T_FALSE : T_ERROR;
    case 'n':
      return scan_word(s, "null") ? T_NULL : T_ERROR;
    default:
      return (c == '-' || is_digit(c)) && scan_number(s) ? T_NUMBER : T_ERROR;
  }
}

/* Validates with an explicit stack of open containers; counts tokens by kind. */
static int validate(const char* text, size_t length, uint32_t* counts) {
  struct scanner s = {text, 0, length};
  char stack[MAX_DEPTH];
  int depth = 0, expect_value = 1, just_opened = 0;
  enum token t;
  while ((t = next(&s)) != T_END) {
    if (t == T_ERROR) return 0;
    counts[t]++;
    if (t == T_LBRACE || t == T_LBRACKET) {
      if (depth == MAX_DEPTH) return 0;
      stack[depth++] = t == T_LBRACE ? '}' : ']';
      expect_value = 1;
      just_opened = 1;
      continue;
    }
    if (t == T_RBRACE || t == T_RBRACKET) {
      if (depth == 0 || stack[depth - 1] != (t == T_RBRACE ? '}' : ']')) return 0;
      /* A value is pending after ',' or ':' unless the container is empty. */
      if (expect_value && !just_opened) return 0;
      --depth;
      expect_value = 0;
    } else if (t == T_COMMA || t == T_COLON) {
      if (expect_value) return 0;
      expect_value = 1;
    } else {
      if (!expect_value) return 0;
      expect_value = 0;
    }
    just_opened = 0;
  }
  return depth == 0;
}

static size_t emit(char* out, size_t cap, size_t n, const char* text) {
  size_t len = strlen(text);
  if (n + len < cap) {
    memcpy(out + n, text, len);
    n += len;
  }
  return n;
}

static size_t generate_value(char* out, size_t cap, size_t n, int depth, int flat_depth) {
  char buf[64];
  uint32_t r = next_random() % (depth > flat_depth ? 5 : 7);
  switch (r) {
    case 0:
      snprintf(buf, sizeof buf, "%d", (int)(next_random() % 20000) - 10000);
      return emit(out, cap, n, buf);
    case 1:
      snprintf(buf, sizeof buf, "%u.%ue-%u", next_random() % 100, next_random() % 1000,
               next_random() % 9);
      return emit(out, cap, n, buf);
    case 2:
      snprintf(buf, sizeof buf, "\"k%u\\n\\u00e9\\\"\"", next_random() % 1000);
      return emit(out, cap, n, buf);
    case 3:
      return emit(out, cap, n, (next_random() & 1) ? "true" : "null");
    case 4:
      return emit(out, cap, n, "false");
    case 5: {
      int items = (int)(next_random() % 5);
      n = emit(out, cap, n, "[");
      for (int i = 0; i < items; ++i) {
        if (i) n = emit(out, cap, n, ", ");
        n = generate_value(out, cap, n, depth + 1, flat_depth);
      }
      return emit(out, cap, n, "]");
    }
    default: {
      int items = (int)(next_random() % 5);
      n = emit(out, cap, n, "{");
      for (int i = 0; i < items; ++i) {
        snprintf(buf, sizeof buf, "%s\"f%d\": ", i ? ",\n " : "", i);
        n = emit(out, cap, n, buf);
        n = generate_value(out, cap, n, depth + 1, flat_depth);
      }
      return emit(out, cap, n, "}");
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
    fprintf(stderr, "usage: json_tokenizer [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  seed = in->seed;
  char* doc = malloc(DOC_CAPACITY);
  if (!doc) return 2;
  const char* bad[] = {"{\"a\": }", "[1, 2", "{\"x\" 1}", "[01]", "\"unterminated", "[1,]", "tru"};
  uint32_t counts[T_ERROR + 1] = {0};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    if (validate(bad[i], strlen(bad[i]), counts)) {
      printf("accepted invalid document %zu\n", i);
      return 1;
    }
  }
  memset(counts, 0, sizeof(counts));
  uint32_t checksum = 0;
  int documents = 0;
  for (int d = 0; d < 200; ++d) {
    size_t n = emit(doc, DOC_CAPACITY, 0, "[");
    for (int v = 0; v < in->values; ++v) {
      if (v) n = emit(doc, DOC_CAPACITY, n, ",");
      n = generate_value(doc, DOC_CAPACITY, n, 0, in->flat_depth);
    }
    n = emit(doc, DOC_CAPACITY, n, "]");
    if (!validate(doc, n, counts)) {
      printf("rejected generated document %d\n", d);
      return 1;
    }
    ++documents;
    checksum = checksum * 31u + (uint32_t)n;
  }
  for (int t = 0; t <= T_ERROR; ++t) checksum = checksum * 131u + counts[t];
  printf("json_tokenizer documents %d strings %u numbers %u checksum 0x%08x\n", documents,
         counts[T_STRING], counts[T_NUMBER], checksum);
  free(doc);
  return 0;
}
