/* Byte and string processing: CRC-32, a tiny tokenizer with a switch,
   run-length encoding and a hash table with linear probing. */
typedef unsigned long size_t;

static unsigned crc_table[256];

static void crc_init(void) {
  for (unsigned i = 0; i < 256; ++i) {
    unsigned c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

static unsigned crc32(const unsigned char* p, size_t n) {
  unsigned c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

enum Token { kWord, kNumber, kSpace, kPunct, kOther };

static enum Token classify(char ch) {
  switch (ch) {
    case ' ': case '\t': case '\n': return kSpace;
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return kNumber;
    case '.': case ',': case ';': case '!': case '?': return kPunct;
    default:
      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) return kWord;
      return kOther;
  }
}

static int count_tokens(const char* s, int counts[5]) {
  int tokens = 0;
  enum Token prev = kSpace;
  for (; *s; ++s) {
    enum Token t = classify(*s);
    counts[t]++;
    if (t != prev && t != kSpace) ++tokens;
    prev = t;
  }
  return tokens;
}

static size_t rle(const char* in, char* out, size_t cap) {
  size_t o = 0;
  while (*in && o + 2 < cap) {
    char ch = *in;
    int run = 1;
    while (in[run] == ch && run < 9) ++run;
    out[o++] = (char)('0' + run);
    out[o++] = ch;
    in += run;
  }
  out[o] = 0;
  return o;
}

#define TABLE 64
static const char* keys[TABLE];
static int values[TABLE];

static unsigned hash(const char* s) {
  unsigned h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

static int str_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

static void put(const char* k, int v) {
  unsigned i = hash(k) % TABLE;
  while (keys[i] && !str_eq(keys[i], k)) i = (i + 1) % TABLE;
  keys[i] = k;
  values[i] = v;
}

static int get(const char* k) {
  unsigned i = hash(k) % TABLE;
  while (keys[i]) {
    if (str_eq(keys[i], k)) return values[i];
    i = (i + 1) % TABLE;
  }
  return -1;
}

int main(void) {
  static const char text[] = "Hello, world! 42 apples and 7 pears; aaabbbcccc.";
  char buf[128];
  int counts[5] = {0, 0, 0, 0, 0};
  crc_init();
  unsigned c = crc32((const unsigned char*)text, sizeof(text) - 1);
  int tokens = count_tokens(text, counts);
  size_t n = rle(text, buf, sizeof(buf));
  put("alpha", 1);
  put("beta", 2);
  put("gamma", tokens);
  return (int)((c & 0xFF) + n + (size_t)get("gamma") + (size_t)counts[kWord]);
}
