/* Calls and data structures: recursion, function pointers, a linked list in
   a static pool, small helpers worth inlining and a dead function. */
struct Node {
  int value;
  struct Node* next;
};

static struct Node pool[128];
static int pool_used;

static struct Node* node_new(int value, struct Node* next) {
  if (pool_used >= 128) return 0;
  struct Node* n = &pool[pool_used++];
  n->value = value;
  n->next = next;
  return n;
}

static int list_sum(const struct Node* n) { return n ? n->value + list_sum(n->next) : 0; }

static struct Node* list_reverse(struct Node* n) {
  struct Node* prev = 0;
  while (n) {
    struct Node* next = n->next;
    n->next = prev;
    prev = n;
    n = next;
  }
  return prev;
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int gcd(int a, int b) {
  while (b != 0) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int square(int x) { return x * x; }
static int twice(int x) { return 2 * x; }
static int negate(int x) { return -x; }

static int apply_all(int (*const* fns)(int), int count, int x) {
  for (int i = 0; i < count; ++i) x = fns[i](x);
  return x;
}

static int unused_helper(int x) { return x * 31 + 7; }

int dispatch(int op, int x) {
  switch (op) {
    case 0: return square(x);
    case 1: return twice(x);
    case 2: return negate(x);
    case 3: return gcd(x, 360);
    default: return fib(x & 15);
  }
}

int main(int argc, char** argv) {
  static int (*const fns[3])(int) = {square, twice, negate};
  struct Node* list = 0;
  for (int i = 0; i < 20; ++i) list = node_new(i * argc, list);
  list = list_reverse(list);
  int total = list_sum(list);
  total += apply_all(fns, 3, argc);
  for (int op = 0; op < 5; ++op) total += dispatch(op, argc + op);
  return total & 0xFF;
}
