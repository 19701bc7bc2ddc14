/* Input for the regalloc integration test: eighteen values live across a loop
 * with calls, more than x86-64 has registers, so the greedy allocator asks the
 * eviction advisor (about 160 times with llc-19). */
extern long sink(long);

long pressure(long* a, int n) {
  long v0 = a[0], v1 = a[1], v2 = a[2], v3 = a[3], v4 = a[4], v5 = a[5], v6 = a[6], v7 = a[7];
  long v8 = a[8], v9 = a[9], v10 = a[10], v11 = a[11], v12 = a[12], v13 = a[13], v14 = a[14];
  long v15 = a[15], v16 = a[16], v17 = a[17];
  for (int i = 0; i < n; ++i) {
    v0 += v1 * v17; v1 ^= v2 + i; v2 -= v3 * v16; v3 += v4 ^ v15; v4 *= v5 | 1; v5 += v6 - v14;
    v6 ^= v7 + v13; v7 += v8 * v12; v8 -= v9 ^ v11; v9 += v10 * i; v10 ^= sink(v0 + v9);
    v11 += v12 * v3; v12 ^= v13 - v4; v13 += v14 * v5; v14 -= v15 ^ v6; v15 += v16 * v7;
    v16 ^= v17 + v8; v17 += sink(v1 - v10);
  }
  return v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + v8 + v9 + v10 + v11 + v12 + v13 + v14 + v15 +
         v16 + v17;
}
