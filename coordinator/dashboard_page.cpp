// The dashboard page: plain HTML, CSS and JavaScript in one string, so that
// the coordinator serves it without files or a CDN. It polls /api/status
// every second and redraws the tables and, per host, a stacked SVG chart of
// each experiment's share of the host's slots over the last minute: the
// picture in which one experiment's lull is filled by another's work.
#include "coordinator/dashboard.h"

namespace kiln {

namespace {

constexpr std::string_view kPage = R"KILNPAGE(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kiln dashboard</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fafafa; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  h2 { font-size: 16px; margin: 20px 0 6px; }
  .summary span.value { font-weight: 600; }
  .summary { margin-bottom: 8px; }
  table { border-collapse: collapse; background: #fff; }
  th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
  th { background: #f0f0f0; }
  td.text { text-align: left; }
  .charts { display: flex; flex-wrap: wrap; gap: 16px; }
  .chart { background: #fff; border: 1px solid #ddd; padding: 6px; }
  .chart .title { font-weight: 600; margin-bottom: 2px; }
  .legend span { display: inline-block; margin-right: 12px; }
  .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
  #status.error { color: #b00; }
</style>
</head>
<body>
<h1>kiln</h1>
<div class="summary">
  hosts <span class="value" id="total-hosts">-</span> &middot;
  experiments <span class="value" id="total-experiments">-</span> &middot;
  sessions <span class="value" id="total-sessions">-</span> &middot;
  slots <span class="value" id="total-slots">-</span> &middot;
  busy <span class="value" id="total-busy">-</span>
  &middot; <span id="status">loading</span>
</div>
<h2>Hosts</h2>
<table id="hosts"><thead><tr><th>id</th><th>kind</th><th>endpoint</th><th>host</th>
<th>slots</th><th>busy</th><th>sessions</th><th>utilization (1 min)</th></tr></thead><tbody></tbody></table>
<h2>Experiments</h2>
<table id="experiments"><thead><tr><th>name</th><th>workers ready / requested</th><th>weight</th>
<th>sessions</th><th>utilization (1 min)</th></tr></thead><tbody></tbody></table>
<h2>Utilization per host, by experiment (last minute)</h2>
<div class="legend" id="legend"></div>
<div class="charts" id="charts"></div>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
                "#ff9da7", "#9c755f", "#bab0ac"];
const colorOf = {};
function color(name) {
  if (!(name in colorOf)) colorOf[name] = COLORS[Object.keys(colorOf).length % COLORS.length];
  return colorOf[name];
}
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}
function percent(x) { return (100 * x).toFixed(0) + "%"; }
function fillHosts(hosts) {
  const body = document.querySelector("#hosts tbody");
  body.replaceChildren();
  for (const h of hosts) {
    const row = document.createElement("tr");
    row.dataset.host = h.id;
    row.dataset.slots = h.slots;
    row.dataset.sessions = h.sessions;
    cell(row, h.id); cell(row, h.kind, "text"); cell(row, h.endpoint, "text");
    cell(row, h.host, "text"); cell(row, h.slots); cell(row, h.busy);
    cell(row, h.sessions, "sessions"); cell(row, percent(h.utilization_1m));
    body.appendChild(row);
  }
}
function fillExperiments(experiments) {
  const body = document.querySelector("#experiments tbody");
  body.replaceChildren();
  for (const e of experiments) {
    const row = document.createElement("tr");
    row.dataset.experiment = e.name;
    row.dataset.ready = e.ready;
    row.dataset.workers = e.workers;
    row.dataset.sessions = e.sessions;
    const name = cell(row, e.name, "text");
    name.style.borderLeft = "6px solid " + color(e.name);
    cell(row, e.ready + " / " + e.workers); cell(row, e.weight);
    cell(row, e.sessions, "sessions"); cell(row, percent(e.utilization_1m));
    body.appendChild(row);
  }
}
function drawCharts(status) {
  const W = 360, H = 120, N = 60;
  const byHost = new Map();
  for (const s of status.timeline) {
    if (!byHost.has(s.host)) byHost.set(s.host, []);
    byHost.get(s.host).push(s);
  }
  const charts = document.getElementById("charts");
  charts.replaceChildren();
  for (const h of status.hosts) {
    if (h.kind !== "nest") continue;
    const box = document.createElement("div");
    box.className = "chart";
    box.dataset.host = h.id;
    const title = document.createElement("div");
    title.className = "title";
    title.textContent = "host " + h.id + " (" + h.endpoint + ", " + h.slots + " slots)";
    box.appendChild(title);
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    const frame = document.createElementNS(SVG, "rect");
    frame.setAttribute("width", W); frame.setAttribute("height", H);
    frame.setAttribute("fill", "#fff"); frame.setAttribute("stroke", "#ccc");
    svg.appendChild(frame);
    // Stacked areas, newest sample at the right edge; a series shorter than
    // the window started later and is empty on the left.
    const base = new Array(N).fill(0);
    for (const s of byHost.get(h.id) || []) {
      const top = base.slice();
      const offset = N - s.samples.length;
      s.samples.forEach((v, k) => { if (offset + k >= 0) top[offset + k] += v; });
      const x = (i) => (i * W / (N - 1)).toFixed(1);
      const y = (v) => (H - Math.min(1, v) * H).toFixed(1);
      let d = "M" + x(0) + "," + y(top[0]);
      for (let i = 1; i < N; ++i) d += " L" + x(i) + "," + y(top[i]);
      for (let i = N - 1; i >= 0; --i) d += " L" + x(i) + "," + y(base[i]);
      const path = document.createElementNS(SVG, "path");
      path.setAttribute("d", d + " Z");
      path.setAttribute("fill", color(s.experiment));
      path.setAttribute("fill-opacity", "0.85");
      path.dataset.experiment = s.experiment;
      svg.appendChild(path);
      for (let i = 0; i < N; ++i) base[i] = top[i];
    }
    box.appendChild(svg);
    charts.appendChild(box);
  }
  const legend = document.getElementById("legend");
  legend.replaceChildren();
  for (const e of status.experiments) {
    const item = document.createElement("span");
    const swatch = document.createElement("i");
    swatch.style.background = color(e.name);
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(e.name));
    legend.appendChild(item);
  }
}
function render(status) {
  for (const key of ["hosts", "experiments", "sessions", "slots", "busy"]) {
    document.getElementById("total-" + key).textContent = status.totals[key];
  }
  fillHosts(status.hosts);
  fillExperiments(status.experiments);
  drawCharts(status);
}
async function refresh() {
  const line = document.getElementById("status");
  try {
    const response = await fetch("api/status", {cache: "no-store"});
    if (!response.ok) throw new Error("HTTP " + response.status);
    render(await response.json());
    line.textContent = "updated " + new Date().toLocaleTimeString();
    line.className = "";
    document.body.dataset.loaded = "true";
  } catch (e) {
    line.textContent = "cannot reach the coordinator: " + e.message;
    line.className = "error";
  }
}
refresh();
setInterval(refresh, 1000);
</script>
</body>
</html>
)KILNPAGE";

}  // namespace

std::string_view dashboardPage() { return kPage; }

}  // namespace kiln
