// Dijkstra's shortest paths with a binary heap on a generated weighted grid graph, checked by
// Bellman-Ford.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SIDE 90
#define NODES (SIDE * SIDE)
#define MAX_DEGREE 6
#define INF INT64_MAX

struct edge {
  int to;
  int weight;
};

struct graph {
  struct edge adj[NODES][MAX_DEGREE];
  int degree[NODES];
};

struct heap_item {
  int64_t dist;
  int node;
};

struct heap {
  struct heap_item* items;
  int size;
};

/* Input 0 is the default; the alternatives change the seed, how often a node gets a long jump and
 * the range of grid weights: many jumps, few jumps with weights 1..5 (many equal distances, so heap
 * ties), and weights up to 1000. */
struct input {
  uint32_t seed;
  uint32_t jump_one_in; /* a node gets a long jump with probability 1 / jump_one_in */
  uint32_t max_weight;  /* grid edges weigh 1 .. max_weight */
};

static const struct input inputs[4] = {
    {99u, 16, 100},
    {2718281u, 3, 100},
    {314159u, 64, 5},
    {1618033u, 16, 1000},
};

static uint32_t seed;

static uint32_t next_random(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

static void add_edge(struct graph* g, int a, int b, int w) {
  if (g->degree[a] < MAX_DEGREE) g->adj[a][g->degree[a]++] = (struct edge){b, w};
}

static void build(struct graph* g, const struct input* in) {
  seed = in->seed;
  for (int v = 0; v < NODES; ++v) g->degree[v] = 0;
  for (int r = 0; r < SIDE; ++r) {
    for (int c = 0; c < SIDE; ++c) {
      int v = r * SIDE + c;
      if (c + 1 < SIDE) add_edge(g, v, v + 1, 1 + (int)(next_random() % in->max_weight));
      if (r + 1 < SIDE) add_edge(g, v, v + SIDE, 1 + (int)(next_random() % in->max_weight));
      if (c > 0) add_edge(g, v, v - 1, 1 + (int)(next_random() % in->max_weight));
      if (r > 0) add_edge(g, v, v - SIDE, 1 + (int)(next_random() % in->max_weight));
      /* Occasional long jumps make the heap order matter. */
      if (next_random() % in->jump_one_in == 0)
        add_edge(g, v, (int)(next_random() % NODES), 150 + (int)(next_random() % 400));
    }
  }
}

static void heap_push(struct heap* h, int64_t dist, int node) {
  int i = h->size++;
  while (i > 0) {
    int parent = (i - 1) / 2;
    if (h->items[parent].dist <= dist) break;
    h->items[i] = h->items[parent];
    i = parent;
  }
  h->items[i] = (struct heap_item){dist, node};
}

static struct heap_item heap_pop(struct heap* h) {
  struct heap_item top = h->items[0];
  struct heap_item last = h->items[--h->size];
  int i = 0;
  while (2 * i + 1 < h->size) {
    int child = 2 * i + 1;
    if (child + 1 < h->size && h->items[child + 1].dist < h->items[child].dist) ++child;
    if (last.dist <= h->items[child].dist) break;
    h->items[i] = h->items[child];
    i = child;
  }
  h->items[i] = last;
  return top;
}

/* Lazy deletion: stale heap entries are skipped when popped. */
static void dijkstra(const struct graph* g, int source, int64_t* dist, struct heap* h) {
  for (int v = 0; v < NODES; ++v) dist[v] = INF;
  dist[source] = 0;
  h->size = 0;
  heap_push(h, 0, source);
  while (h->size > 0) {
    struct heap_item it = heap_pop(h);
    if (it.dist != dist[it.node]) continue;
    for (int e = 0; e < g->degree[it.node]; ++e) {
      const struct edge* edge = &g->adj[it.node][e];
      int64_t candidate = it.dist + edge->weight;
      if (candidate < dist[edge->to]) {
        dist[edge->to] = candidate;
        heap_push(h, candidate, edge->to);
      }
    }
  }
}

static int bellman_ford(const struct graph* g, int source, int64_t* dist) {
  for (int v = 0; v < NODES; ++v) dist[v] = INF;
  dist[source] = 0;
  for (int round = 0; round < NODES; ++round) {
    int changed = 0;
    for (int v = 0; v < NODES; ++v) {
      if (dist[v] == INF) continue;
      for (int e = 0; e < g->degree[v]; ++e) {
        int64_t candidate = dist[v] + g->adj[v][e].weight;
        if (candidate < dist[g->adj[v][e].to]) {
          dist[g->adj[v][e].to] = candidate;
          changed = 1;
        }
      }
    }
    if (!changed) return round;
  }
  return NODES;
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
    fprintf(stderr, "usage: dijkstra [1|2|3]\n");
    return 2;
  }
  struct graph* g = malloc(sizeof(struct graph));
  int64_t* dist = malloc(sizeof(int64_t) * NODES);
  int64_t* check = malloc(sizeof(int64_t) * NODES);
  struct heap h = {malloc(sizeof(struct heap_item) * (NODES * MAX_DEGREE + 1)), 0};
  if (!g || !dist || !check || !h.items) return 2;
  build(g, &inputs[input]);
  uint64_t checksum = 0;
  for (int source = 0; source < NODES; source += NODES / 5) {
    dijkstra(g, source, dist, &h);
    int64_t far = 0;
    for (int v = 0; v < NODES; ++v) {
      if (dist[v] != INF && dist[v] > far) far = dist[v];
      checksum = checksum * 1315423911u + (uint64_t)(dist[v] == INF ? 7 : dist[v]);
    }
    checksum ^= (uint64_t)far << 20;
  }
  dijkstra(g, 0, dist, &h);
  int rounds = bellman_ford(g, 0, check);
  for (int v = 0; v < NODES; ++v) {
    if (dist[v] != check[v]) {
      printf("dijkstra disagrees with bellman-ford at node %d\n", v);
      return 1;
    }
  }
  printf("dijkstra rounds %d checksum 0x%016llx\n", rounds, (unsigned long long)checksum);
  free(g);
  free(dist);
  free(check);
  free(h.items);
  return 0;
}
