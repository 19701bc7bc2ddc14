/* Input for the inliner integration test: call sites the default heuristic
 * inlines (tiny helpers) and call sites it declines (a large body called from
 * several places), so the answers really change the output. */
static int ident(int x) { return x; }
static int twice(int x) { return ident(x) + ident(x); }
int lookup(const int* t, int i) { return t[i & 7]; }

int big(int* a, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    s += a[i] * twice(i);
    if (s > 1000) s -= lookup(a, s);
  }
  for (int i = 0; i < n; ++i) {
    a[i] ^= s + i * 3;
    s += a[(i * 7) % (n ? n : 1)];
  }
  for (int i = n - 1; i > 0; --i) s = (s * 31) ^ a[i - 1] ^ lookup(a, i);
  return s;
}

int caller1(int* a, int n) { return big(a, n) + twice(n) + lookup(a, n); }
int caller2(int* a, int n) { return caller1(a, n) * ident(n) + lookup(a, 3) + big(a, 2); }

int main(void) {
  int a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  return caller2(a, 8) & 0xff;
}
