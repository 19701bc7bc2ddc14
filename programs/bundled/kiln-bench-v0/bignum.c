// Arbitrary-precision unsigned arithmetic (add, multiply, small divide): factorials, Fibonacci and
// powers.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LIMBS 600 /* base 2^32: up to 19200 bits */

struct bignum {
  uint32_t limb[LIMBS];
  int used; /* limbs in use; 0 means zero */
};

static void big_set(struct bignum* a, uint32_t v) {
  memset(a->limb, 0, sizeof(a->limb));
  a->limb[0] = v;
  a->used = v ? 1 : 0;
}

static void big_trim(struct bignum* a) {
  while (a->used > 0 && a->limb[a->used - 1] == 0) --a->used;
}

static void big_add(struct bignum* r, const struct bignum* a, const struct bignum* b) {
  int n = a->used > b->used ? a->used : b->used;
  uint64_t carry = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t s = (uint64_t)a->limb[i] + b->limb[i] + carry;
    r->limb[i] = (uint32_t)s;
    carry = s >> 32;
  }
  if (carry && n < LIMBS) r->limb[n++] = (uint32_t)carry;
  for (int i = n; i < r->used; ++i) r->limb[i] = 0;
  r->used = n;
  big_trim(r);
}

static void big_mul_small(struct bignum* a, uint32_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < a->used; ++i) {
    uint64_t p = (uint64_t)a->limb[i] * m + carry;
    a->limb[i] = (uint32_t)p;
    carry = p >> 32;
  }
  if (carry && a->used < LIMBS) a->limb[a->used++] = (uint32_t)carry;
  big_trim(a);
}

/* Schoolbook product; `r` must not alias the inputs. */
static void big_mul(struct bignum* r, const struct bignum* a, const struct bignum* b) {
  memset(r->limb, 0, sizeof(r->limb));
  for (int i = 0; i < a->used; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < b->used && i + j < LIMBS; ++j) {
      uint64_t t = (uint64_t)a->limb[i] * b->limb[j] + r->limb[i + j] + carry;
      r->limb[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    if (i + b->used < LIMBS) r->limb[i + b->used] = (uint32_t)carry;
  }
  r->used = a->used + b->used < LIMBS ? a->used + b->used : LIMBS;
  big_trim(r);
}

/* Divides in place by a small divisor and returns the remainder. */
static uint32_t big_divmod_small(struct bignum* a, uint32_t d) {
  uint64_t rem = 0;
  for (int i = a->used - 1; i >= 0; --i) {
    uint64_t cur = (rem << 32) | a->limb[i];
    a->limb[i] = (uint32_t)(cur / d);
    rem = cur % d;
  }
  big_trim(a);
  return (uint32_t)rem;
}

static int big_cmp(const struct bignum* a, const struct bignum* b) {
  if (a->used != b->used) return a->used < b->used ? -1 : 1;
  for (int i = a->used - 1; i >= 0; --i)
    if (a->limb[i] != b->limb[i]) return a->limb[i] < b->limb[i] ? -1 : 1;
  return 0;
}

/* Decimal digit sum, consuming a copy of the number. */
static uint32_t digit_sum(const struct bignum* a, uint32_t* digits) {
  static struct bignum t;
  t = *a;
  uint32_t sum = 0;
  *digits = 0;
  while (t.used > 0) {
    uint32_t chunk = big_divmod_small(&t, 1000000000u);
    for (int k = 0; k < 9; ++k) {
      sum += chunk % 10;
      chunk /= 10;
      ++*digits;
    }
  }
  return sum;
}

static void big_pow(struct bignum* r, uint32_t base, uint32_t exponent) {
  static struct bignum acc, sq, tmp;
  big_set(&acc, 1);
  big_set(&sq, base);
  while (exponent) {
    if (exponent & 1) {
      big_mul(&tmp, &acc, &sq);
      acc = tmp;
    }
    exponent >>= 1;
    if (exponent) {
      big_mul(&tmp, &sq, &sq);
      sq = tmp;
    }
  }
  *r = acc;
}

/* Input 0 is the default; each alternative takes another factorial, Fibonacci number and power,
 * all well inside LIMBS and of similar cost. */
struct input {
  uint32_t factorial;           /* n of n! */
  uint32_t factorial_digit_sum; /* its known decimal digit sum */
  int fibonacci;                /* n of F(n) */
  uint32_t base, exponent;      /* of the power */
};

static const struct input inputs[4] = {
    {1000, 10539, 5000, 3, 4000}, /* 1000! has 2568 digits */
    {1200, 12978, 4000, 5, 3000},
    {800, 7929, 6000, 7, 2500},
    {1500, 16749, 5500, 11, 2000},
};

/* No argument selects input 0, "1" to "3" an alternative; anything else gives -1. */
static int parse_input(int argc, char** argv) {
  if (argc == 1) return 0;
  if (argc != 2 || argv[1][0] < '1' || argv[1][0] > '3' || argv[1][1] != '\0') return -1;
  return argv[1][0] - '0';
}

int main(int argc, char** argv) {
  int input = parse_input(argc, argv);
  if (input < 0) {
    fprintf(stderr, "usage: bignum [1|2|3]\n");
    return 2;
  }
  const struct input* in = &inputs[input];
  static struct bignum f, a, b, c, p, q;
  uint32_t digits;
  big_set(&f, 1);
  for (uint32_t i = 2; i <= in->factorial; ++i) big_mul_small(&f, i);
  uint32_t fsum = digit_sum(&f, &digits);
  if (fsum != in->factorial_digit_sum) {
    printf("factorial digit sum wrong: %u\n", fsum);
    return 1;
  }
  /* F(n) by repeated addition. */
  big_set(&a, 0);
  big_set(&b, 1);
  for (int i = 0; i < in->fibonacci; ++i) {
    big_add(&c, &a, &b);
    a = b;
    b = c;
  }
  uint32_t fib_digits;
  uint32_t fib_sum = digit_sum(&a, &fib_digits);
  /* The power two ways: square-and-multiply and repeated small multiplication. */
  big_pow(&p, in->base, in->exponent);
  big_set(&q, 1);
  for (uint32_t i = 0; i < in->exponent; ++i) big_mul_small(&q, in->base);
  if (big_cmp(&p, &q) != 0) {
    printf("power mismatch\n");
    return 1;
  }
  uint32_t pow_digits;
  uint32_t pow_sum = digit_sum(&p, &pow_digits);
  printf("bignum fact %u fib %u/%u pow %u/%u\n", fsum, fib_sum, fib_digits, pow_sum, pow_digits);
  return 0;
}
