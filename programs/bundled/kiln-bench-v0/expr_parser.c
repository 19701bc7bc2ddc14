// Recursive-descent parser and evaluator for integer expressions with variables, over generated
// inputs.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPRESSIONS 3000
#define MAX_TEXT 4096

enum token_kind { TOK_NUM, TOK_VAR, TOK_OP, TOK_LPAREN, TOK_RPAREN, TOK_END, TOK_ERROR };

struct lexer {
  const char* text;
  size_t pos;
  enum token_kind kind;
  int64_t number;
  char op;
};

struct parser {
  struct lexer lex;
  const int64_t* vars;
  int error;
  int depth;
};

/* Input 0 is the default; the alternatives change the seed (other expressions) and the starting
 * values of the variables, and input 3 nests one level less deeply (one level more would not fit
 * in MAX_TEXT). */
struct input {
  uint32_t seed;
  int64_t var_step, var_base; /* variable i starts as i * var_step + var_base */
  int max_depth;              /* deeper than this the generator emits only leaves */
};

static const struct input inputs[4] = {
    {11u, 37, 5, 6},
    {2023u, 101, -7000, 6},
    {777u, 3, 1, 6},
    {65537u, -977, 123456789, 5},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

static void next_token(struct lexer* lx) {
  while (lx->text[lx->pos] == ' ') ++lx->pos;
  char c = lx->text[lx->pos];
  if (c == '\0') {
    lx->kind = TOK_END;
  } else if (c >= '0' && c <= '9') {
    int64_t v = 0;
    while (lx->text[lx->pos] >= '0' && lx->text[lx->pos] <= '9' && v < 100000000)
      v = v * 10 + (lx->text[lx->pos++] - '0');
    lx->kind = TOK_NUM;
    lx->number = v;
  } else if (c >= 'a' && c <= 'z') {
    lx->kind = TOK_VAR;
    lx->number = c - 'a';
    ++lx->pos;
  } else if (c == '(' || c == ')') {
    lx->kind = c == '(' ? TOK_LPAREN : TOK_RPAREN;
    ++lx->pos;
  } else if (strchr("+-*/%", c)) {
    lx->kind = TOK_OP;
    lx->op = c;
    ++lx->pos;
  } else {
    lx->kind = TOK_ERROR;
  }
}

/* Arithmetic wraps like unsigned 64-bit so no input can overflow. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static int64_t parse_expr(struct parser* p);

static int64_t parse_primary(struct parser* p) {
  struct lexer* lx = &p->lex;
  if (++p->depth > 200) {
    p->error = 1;
    return 0;
  }
  int64_t value = 0;
  if (lx->kind == TOK_NUM) {
    value = lx->number;
    next_token(lx);
  } else if (lx->kind == TOK_VAR) {
    value = p->vars[lx->number];
    next_token(lx);
  } else if (lx->kind == TOK_OP && lx->op == '-') {
    next_token(lx);
    value = wrap_sub(0, parse_primary(p));
  } else if (lx->kind == TOK_LPAREN) {
    next_token(lx);
    value = parse_expr(p);
    if (lx->kind != TOK_RPAREN) p->error = 1;
    next_token(lx);
  } else {
    p->error = 1;
  }
  --p->depth;
  return value;
}

static int64_t parse_term(struct parser* p) {
  int64_t value = parse_primary(p);
  while (!p->error && p->lex.kind == TOK_OP && strchr("*/%", p->lex.op)) {
    char op = p->lex.op;
    next_token(&p->lex);
    int64_t rhs = parse_primary(p);
    if (op == '*') {
      value = wrap_mul(value, rhs);
    } else if (rhs == 0 || (rhs == -1 && value == INT64_MIN)) {
      value = 0; /* defined result for division by zero and the one overflowing quotient */
    } else {
      value = op == '/' ? value / rhs : value % rhs;
    }
  }
  return value;
}

static int64_t parse_expr(struct parser* p) {
  int64_t value = parse_term(p);
  while (!p->error && p->lex.kind == TOK_OP && (p->lex.op == '+' || p->lex.op == '-')) {
    char op = p->lex.op;
    next_token(&p->lex);
    int64_t rhs = parse_term(p);
    value = op == '+' ? wrap_add(value, rhs) : wrap_sub(value, rhs);
  }
  return value;
}

static int evaluate(const char* text, const int64_t* vars, int64_t* result) {
  struct parser p = {{text, 0, TOK_END, 0, 0}, vars, 0, 0};
  next_token(&p.lex);
  *result = parse_expr(&p);
  return !p.error && p.lex.kind == TOK_END;
}

/* Random expression generator; returns bytes written. */
static size_t generate(char* out, size_t capacity, int depth, int max_depth) {
  if (capacity < 32) return 0;
  uint32_t r = next_random() % 10;
  if (depth > max_depth || r < 3) {
    if (r % 2) return (size_t)snprintf(out, capacity, "%u", next_random() % 1000);
    return (size_t)snprintf(out, capacity, "%c", 'a' + (int)(next_random() % 26));
  }
  if (r == 3) {
    out[0] = '(';
    size_t n = 1 + generate(out + 1, capacity - 2, depth + 1, max_depth);
    out[n++] = ')';
    out[n] = '\0';
    return n;
  }
  size_t n = generate(out, capacity / 2, depth + 1, max_depth);
  out[n++] = ' ';
  out[n++] = "+-*/%"[next_random() % 5];
  out[n++] = ' ';
  n += generate(out + n, capacity - n, depth + 1, max_depth);
  return n;
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
    fprintf(stderr, "usage: expr_parser [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  seed = in->seed;
  static char text[MAX_TEXT];
  int64_t vars[26];
  for (int i = 0; i < 26; ++i) vars[i] = i * in->var_step + in->var_base;
  int64_t result;
  if (!evaluate("2 + 3 * (4 - 1) % 5", vars, &result) || result != 6 ||
      !evaluate("-(a + 1) * -2", vars, &result) || result != 2 * (vars[0] + 1) ||
      evaluate("(1 + 2", vars, &result) || evaluate("3 $ 4", vars, &result)) {
    printf("expr_parser self-check failed\n");
    return 1;
  }
  uint64_t checksum = 0;
  int parsed = 0;
  for (int e = 0; e < EXPRESSIONS; ++e) {
    generate(text, sizeof(text), 0, in->max_depth);
    if (evaluate(text, vars, &result)) {
      ++parsed;
      checksum = checksum * 1099511628211ull + (uint64_t)result;
    }
    vars[e % 26] = result & 0xffff;
  }
  if (parsed != EXPRESSIONS) {
    printf("generated expression failed to parse\n");
    return 1;
  }
  printf("expr_parser parsed %d checksum 0x%016llx\n", parsed, (unsigned long long)checksum);
  return 0;
}
