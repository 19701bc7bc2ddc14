// Sobel edge detection, non-maximum thinning and Otsu thresholding on a synthetic image.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 480
#define HEIGHT 360

/* Input 0 is the default; the alternatives change the seed, the noise amplitude and the disc: one
 * overlapping the lower rectangle, the default disc in strong noise, and a large central disc over
 * both rectangles in weak noise. */
struct input {
  uint32_t seed;
  uint32_t noise; /* noise is 0 .. noise - 1 */
  int disc_x, disc_y, disc_radius;
};

static const struct input inputs[4] = {
    {5u, 12, 330, 100, 60},
    {55u, 12, 120, 250, 80},
    {555u, 48, 330, 100, 60},
    {5555u, 4, 240, 180, 150},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 24;
}

static int iabs(int v) { return v < 0 ? -v : v; }

/* Filled rectangles and a disc over low-amplitude noise. */
static void synthesize(uint8_t* img, int w, int h, const struct input* in) {
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int v = 60 + (int)(next_random() % in->noise);
      if (x > 50 && x < 200 && y > 40 && y < 150) v += 90;
      if (x > 150 && x < 400 && y > 200 && y < 320) v += 60;
      int dx = x - in->disc_x, dy = y - in->disc_y;
      if (dx * dx + dy * dy < in->disc_radius * in->disc_radius) v += 120;
      img[y * w + x] = (uint8_t)(v > 255 ? 255 : v);
    }
  }
}

static void sobel(const uint8_t* img, int* gx, int* gy, int* mag, int w, int h) {
  for (int y = 1; y < h - 1; ++y) {
    for (int x = 1; x < w - 1; ++x) {
      const uint8_t* p = img + y * w + x;
      int sx = -p[-w - 1] + p[-w + 1] - 2 * p[-1] + 2 * p[1] - p[w - 1] + p[w + 1];
      int sy = -p[-w - 1] - 2 * p[-w] - p[-w + 1] + p[w - 1] + 2 * p[w] + p[w + 1];
      gx[y * w + x] = sx;
      gy[y * w + x] = sy;
      mag[y * w + x] = iabs(sx) + iabs(sy);
    }
  }
}

/* Keeps a pixel only if it is a local maximum along its dominant gradient axis. */
static int thin(const int* gx, const int* gy, const int* mag, int* out, int w, int h) {
  int kept = 0;
  for (int y = 1; y < h - 1; ++y) {
    for (int x = 1; x < w - 1; ++x) {
      int i = y * w + x;
      int a, b;
      if (iabs(gx[i]) >= iabs(gy[i])) {
        a = mag[i - 1];
        b = mag[i + 1];
      } else {
        a = mag[i - w];
        b = mag[i + w];
      }
      out[i] = (mag[i] >= a && mag[i] >= b) ? mag[i] : 0;
      kept += out[i] > 0;
    }
  }
  return kept;
}

static void histogram(const int* values, int n, int* hist, int bins, int max_value) {
  for (int b = 0; b < bins; ++b) hist[b] = 0;
  for (int i = 0; i < n; ++i) {
    int v = values[i] > max_value ? max_value : values[i];
    hist[(long long)v * (bins - 1) / max_value]++;
  }
}

/* Otsu: the threshold maximizing between-class variance, in integer arithmetic. */
static int otsu(const int* hist, int bins) {
  long long total = 0, weighted = 0;
  for (int b = 0; b < bins; ++b) {
    total += hist[b];
    weighted += (long long)b * hist[b];
  }
  long long w0 = 0, sum0 = 0;
  double best = -1.0;
  int threshold = 0;
  for (int t = 0; t < bins; ++t) {
    w0 += hist[t];
    sum0 += (long long)t * hist[t];
    long long w1 = total - w0;
    if (w0 == 0 || w1 == 0) continue;
    double m0 = (double)sum0 / w0, m1 = (double)(weighted - sum0) / w1;
    double between = (double)w0 * (double)w1 * (m0 - m1) * (m0 - m1);
    if (between > best) {
      best = between;
      threshold = t;
    }
  }
  return threshold;
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
    fprintf(stderr, "usage: sobel [1|2|3]\n");
    return 2;
  }
  seed = inputs[input].seed;
  int n = WIDTH * HEIGHT;
  uint8_t* img = malloc((size_t)n);
  int *gx = calloc((size_t)n, sizeof(int)), *gy = calloc((size_t)n, sizeof(int));
  int *mag = calloc((size_t)n, sizeof(int)), *thinned = calloc((size_t)n, sizeof(int));
  int hist[256];
  if (!img || !gx || !gy || !mag || !thinned) return 2;
  synthesize(img, WIDTH, HEIGHT, &inputs[input]);
  sobel(img, gx, gy, mag, WIDTH, HEIGHT);
  int kept = thin(gx, gy, mag, thinned, WIDTH, HEIGHT);
  histogram(mag, n, hist, 256, 2040);
  int threshold = otsu(hist, 256) * 2040 / 255;
  int edges = 0;
  uint32_t checksum = 0;
  for (int i = 0; i < n; ++i) {
    if (thinned[i] > threshold) {
      ++edges;
      checksum = checksum * 31u + (uint32_t)i;
    }
  }
  if (edges == 0 || kept < edges) {
    printf("sobel found no edges\n");
    return 1;
  }
  printf("sobel kept %d edges %d threshold %d checksum 0x%08x\n", kept, edges, threshold, checksum);
  free(img);
  free(gx);
  free(gy);
  free(mag);
  free(thinned);
  return 0;
}
