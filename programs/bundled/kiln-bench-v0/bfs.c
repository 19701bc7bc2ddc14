// Breadth-first search, connected components and graph diameter bounds on a generated sparse graph.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NODES 20000
#define EDGES 30000

struct graph {
  int nodes;
  int* offsets; /* CSR: neighbours of v are targets[offsets[v] .. offsets[v+1]) */
  int* targets;
};

/* Input 0 is the default; the alternatives change the seed and the graph's shape: three times as
 * many shortcuts, few shortcuts among very short local edges (more and smaller components), and
 * local edges reaching five times as far. */
struct input {
  uint32_t seed;
  int shortcut_every; /* every shortcut_every-th edge joins two random nodes */
  int local_reach;    /* other edges go from a to a + 1 .. a + local_reach */
};

static const struct input inputs[4] = {
    {1234567u, 10, 8},
    {7654321u, 3, 8},
    {424242u, 40, 3},
    {99991u, 12, 40},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed = seed * 22695477u + 1u;
  return seed >> 8;
}

static int build_graph(struct graph* g, int nodes, int edges, const struct input* in) {
  int* from = malloc(sizeof(int) * edges * 2);
  int* to = malloc(sizeof(int) * edges * 2);
  g->nodes = nodes;
  g->offsets = calloc((size_t)nodes + 1, sizeof(int));
  g->targets = malloc(sizeof(int) * edges * 2);
  if (!from || !to || !g->offsets || !g->targets) return 0;
  seed = in->seed;
  for (int e = 0; e < edges; ++e) {
    int a = (int)(next_random() % (uint32_t)nodes);
    /* Mostly local edges give long shortest paths; a few shortcuts join regions. */
    int b = (e % in->shortcut_every == 0)
                ? (int)(next_random() % (uint32_t)nodes)
                : (a + 1 + (int)(next_random() % (uint32_t)in->local_reach)) % nodes;
    from[2 * e] = a;
    to[2 * e] = b;
    from[2 * e + 1] = b;
    to[2 * e + 1] = a;
  }
  for (int i = 0; i < 2 * edges; ++i) g->offsets[from[i] + 1]++;
  for (int v = 0; v < nodes; ++v) g->offsets[v + 1] += g->offsets[v];
  int* fill = malloc(sizeof(int) * nodes);
  if (!fill) return 0;
  for (int v = 0; v < nodes; ++v) fill[v] = g->offsets[v];
  for (int i = 0; i < 2 * edges; ++i) g->targets[fill[from[i]]++] = to[i];
  free(fill);
  free(from);
  free(to);
  return 1;
}

/* Returns the farthest node reached; distances of unreached nodes stay -1. */
static int bfs(const struct graph* g, int source, int* dist, int* queue) {
  for (int v = 0; v < g->nodes; ++v) dist[v] = -1;
  int head = 0, tail = 0, farthest = source;
  dist[source] = 0;
  queue[tail++] = source;
  while (head < tail) {
    int v = queue[head++];
    if (dist[v] > dist[farthest]) farthest = v;
    for (int i = g->offsets[v]; i < g->offsets[v + 1]; ++i) {
      int w = g->targets[i];
      if (dist[w] < 0) {
        dist[w] = dist[v] + 1;
        queue[tail++] = w;
      }
    }
  }
  return farthest;
}

static int components(const struct graph* g, int* label, int* queue, int* largest) {
  for (int v = 0; v < g->nodes; ++v) label[v] = -1;
  int count = 0;
  *largest = 0;
  for (int s = 0; s < g->nodes; ++s) {
    if (label[s] >= 0) continue;
    int head = 0, tail = 0;
    label[s] = count;
    queue[tail++] = s;
    while (head < tail) {
      int v = queue[head++];
      for (int i = g->offsets[v]; i < g->offsets[v + 1]; ++i) {
        if (label[g->targets[i]] < 0) {
          label[g->targets[i]] = count;
          queue[tail++] = g->targets[i];
        }
      }
    }
    if (tail > *largest) *largest = tail;
    ++count;
  }
  return count;
}

/* Double sweep: BFS from the farthest node of a BFS gives a diameter lower bound. */
static int diameter_lower_bound(const struct graph* g, int start, int* dist, int* queue) {
  int a = bfs(g, start, dist, queue);
  int b = bfs(g, a, dist, queue);
  return dist[b];
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
    fprintf(stderr, "usage: bfs [1|2|3]\n");
    return 2;
  }
  struct graph g;
  if (!build_graph(&g, NODES, EDGES, &inputs[input])) return 2;
  int* dist = malloc(sizeof(int) * NODES);
  int* queue = malloc(sizeof(int) * NODES);
  int* label = malloc(sizeof(int) * NODES);
  if (!dist || !queue || !label) return 2;
  int largest = 0;
  int count = components(&g, label, queue, &largest);
  uint64_t checksum = (uint64_t)count * 1000003u + (uint64_t)largest;
  for (int source = 0; source < NODES; source += NODES / 8) {
    bfs(&g, source, dist, queue);
    uint64_t total = 0;
    int reached = 0;
    for (int v = 0; v < NODES; ++v) {
      if (dist[v] < 0) continue;
      if (label[v] != label[source]) {
        printf("bfs reached another component\n");
        return 1;
      }
      total += (uint64_t)dist[v];
      ++reached;
    }
    checksum = checksum * 31 + total + (uint64_t)reached;
  }
  int diameter = diameter_lower_bound(&g, 0, dist, queue);
  printf("bfs components %d largest %d diameter>=%d checksum 0x%016llx\n", count, largest, diameter,
         (unsigned long long)checksum);
  free(dist);
  free(queue);
  free(label);
  free(g.offsets);
  free(g.targets);
  return 0;
}
