// The SeaTunnel view of one DAG run: fetches api/runs/<dag>/<run> (the plugin's API, which reads
// Airflow's REST API as the signed-in user) and renders each job group: its pipelines, their graphs
// (sources, transform chains, sinks, parallelism), why the job split, slots, states, counts, links.
// Refreshes every 5 s while a pipeline has not finished. Many pipelines stay readable: collapsed
// cards, a state summary that filters, and a search over task ids, plugins, datasets and states.
// A group with a pipeline of several tables lists its tables (rows read and written per table) sorted
// failed first; a click on a column heading sorts by it (again: the other way); the search filters them too.
// A group's compile warnings (an unknown option's "did you mean", a plugin_input naming nothing) head it.
"use strict";

const params = new URLSearchParams(location.search);
const dagId = params.get("dag_id") || "";
const runId = params.get("run_id") || "";
const uiBase = new URL("../", location.href);  // the page is <base>/seatunnel/run
const expanded = new Set();
let collapsedByDefault = true;
let stateFilter = null;
let lastView = null;
let tableSort = null;  // {key, dir}: null keeps the server's order (failed first)
const TABLE_RANK = { FAILED: 0, ABORTED: 1, RUNNING: 2, NOT_RUN: 3, FINISHED: 4 };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c.nodeType ? c : String(c));
  return node;
}

const fmt = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
const seconds = (s) => (s === null || s === undefined ? "" : s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`);

function vertexBox(v) {
  const tables = v.tables && v.tables.length > 1 ? ` · ${v.tables.length} tables` : "";
  const data = v.kind === "sink" ? (v.inputs || []).join(", ") : v.output || "";
  return el("div", { class: `vertex ${v.kind}`, title: `${v.ref} ${v.plugin}` },
    el("div", { class: "plugin" }, v.plugin),
    el("div", { class: "ref" }, v.ref),
    el("div", { class: "meta" }, `×${v.parallelism}`, data ? ` · ${data}` : "", tables));
}

function graph(p) {
  const byKind = (k) => p.vertices.filter((v) => v.kind === k);
  const chains = p.chains.length
    ? p.chains.map((c) => el("div", { class: "chain", title: c.name },
        c.vertices.map((id) => p.vertices.find((v) => v.id === id)).filter(Boolean).map(vertexBox)))
    : [];
  const columns = [
    el("div", { class: "column" }, el("h4", {}, "Sources"), byKind("source").map(vertexBox)),
    chains.length ? el("div", { class: "column" }, el("h4", {}, "Transform chains"), chains) : null,
    el("div", { class: "column" }, el("h4", {}, "Sinks"), byKind("sink").map(vertexBox)),
  ].filter(Boolean);
  const withArrows = [];
  columns.forEach((c, i) => { if (i) withArrows.push(el("div", { class: "arrow" }, "→")); withArrows.push(c); });
  const split = p.split && p.split.reason ? el("p", { class: "why" }, `Why a pipeline of its own: ${p.split.reason}`) : null;
  const slots = el("p", { class: "muted" }, `Slots: ${fmt(p.slots.with_fusion)} with fusion ` +
    `(${fmt(p.slots.without_fusion)} without; SeaTunnel's engine: ${fmt(p.slots.zeta)}) · task id ${p.task_id}`);
  return el("div", { class: "detail" }, el("div", { class: "graph" }, withArrows), split, slots);
}

function counts(p) {
  const live = p.live ? el("span", { class: "live", title: "from the task log's last progress line" }, "live") : null;
  return el("span", { class: "counts" }, `read ${fmt(p.read_count)} · wrote ${fmt(p.write_count)}`, live);
}

function links(p) {
  return el("span", { class: "links" },
    p.log_url ? el("a", { href: new URL(p.log_url, uiBase).href, target: "_top" }, "task log") : null,
    /^https?:\/\//.test(p.spark_ui || "") ? el("a", { href: p.spark_ui, target: "_blank", rel: "noopener" }, "Spark UI") : null);
}

function matches(p, query) {
  if (stateFilter && p.state !== stateFilter) return false;
  if (!query) return true;
  const text = [p.task_id, p.airflow_task_id, p.name, p.state,
    ...p.vertices.flatMap((v) => [v.plugin, v.ref, v.output, ...(v.inputs || []), ...(v.tables || [])])]
    .filter(Boolean).join(" ").toLowerCase();
  return query.toLowerCase().split(/\s+/).every((w) => text.includes(w));
}

function pipelineCard(p) {
  const key = p.airflow_task_id || p.task_id;
  const open = collapsedByDefault ? expanded.has(key) : !expanded.has(key);  // the set holds the toggled ones
  const toggle = () => { if (expanded.has(key)) expanded.delete(key); else expanded.add(key); render(lastView); };
  return el("section", { class: `pipeline state-${p.state.replace(/\W+/g, "_")}`, "data-task": key },
    el("div", { class: "head", onclick: toggle, role: "button", tabindex: "0", "aria-expanded": String(open) },
      el("span", { class: `badge state-${p.state.replace(/\W+/g, "_")}` }, p.state),
      el("span", { class: "num" }, `#${p.id}`),
      el("span", { class: "name" }, p.name),
      el("span", { class: "task muted" }, p.task_id),
      p.try_number > 1 ? el("span", { class: "try" }, `try ${p.try_number}`) : null,
      el("span", { class: "duration" }, seconds(p.duration)),
      counts(p), links(p)),
    p.error ? el("p", { class: "error" }, p.error) : null,
    open ? graph(p) : null);
}

function compareTables(a, b) {
  if (!tableSort) return 0;
  const { key, dir } = tableSort;
  const value = (t) => (key === "status" ? TABLE_RANK[t.status] ?? 3 : t[key]);
  const x = value(a), y = value(b);
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;  // uncounted last, whichever the direction
  if (y === null || y === undefined) return -1;
  return (typeof x === "number" ? x - y : String(x).localeCompare(String(y))) * dir;
}

function tablesSection(g, query) {
  const all = g.tables || [];
  if (all.length <= g.pipelines.length) return null;  // one table per pipeline: the pipelines say it all
  const words = query ? query.toLowerCase().split(/\s+/) : [];
  const rows = all.filter((t) => words.every((w) => `${t.table} ${t.status} ${t.task_id}`.toLowerCase().includes(w)));
  rows.sort(compareTables);  // stable: ties keep the server's order
  const sortBy = (key) => () => {
    tableSort = tableSort && tableSort.key === key ? { key, dir: -tableSort.dir } : { key, dir: key === "read" || key === "written" ? -1 : 1 };
    render(lastView);
  };
  const head = (key, label) => el("th", { onclick: sortBy(key), class: "sortable",
    "aria-sort": tableSort && tableSort.key === key ? (tableSort.dir > 0 ? "ascending" : "descending") : null }, label);
  const failed = all.filter((t) => t.status === "FAILED").length;
  return el("details", { class: "tables", open: failed > 0 || all.length <= 50 },
    el("summary", {}, `Tables: ${all.length}${failed ? ` (${failed} failed)` : ""}` +
      (rows.length < all.length ? ` · ${rows.length} shown` : "")),
    el("table", {},
      el("thead", {}, el("tr", {}, head("status", "Status"), head("table", "Table"), head("pipeline", "Pipeline"),
        head("read", "Read"), head("written", "Written"))),
      el("tbody", {}, rows.map((t) => el("tr", { class: `table-${t.status}` },
        el("td", {}, el("span", { class: `badge table-state-${t.status}` }, t.status)),
        el("td", {}, t.table), el("td", { class: "muted" }, `#${t.pipeline} ${t.task_id}`),
        el("td", { class: "n" }, fmt(t.read)), el("td", { class: "n" }, fmt(t.written)))))));
}

function warningsSection(g) {
  const all = g.warnings || [];
  if (!all.length) return null;
  return el("details", { class: "warnings", open: true },
    el("summary", {}, `⚠ ${all.length} compile warning${all.length === 1 ? "" : "s"}`),
    el("ul", {}, all.map((w) => el("li", {}, w.text || w.message))));
}

function groupSection(g, query) {
  const chips = Object.entries(g.states).map(([state, n]) =>
    el("button", { type: "button", class: `chip state-${state.replace(/\W+/g, "_")}${stateFilter === state ? " on" : ""}`,
      onclick: () => { stateFilter = stateFilter === state ? null : state; render(lastView); } }, `${state} ${n}`));
  // the ones needing attention first (failed, retrying, running...), then by number
  const rank = Object.keys(g.states);
  const shown = g.pipelines.filter((p) => matches(p, query))
    .sort((a, b) => rank.indexOf(a.state) - rank.indexOf(b.state) || a.id - b.id);
  return el("section", { class: "group" },
    el("h2", {}, g.job, el("span", { class: "muted" }, ` · group ${g.group || "(top level)"} · ${g.mode} · ` +
      `${g.pipeline_count} pipeline(s) · read ${fmt(g.read_count)} · wrote ${fmt(g.write_count)}`)),
    warningsSection(g),
    el("div", { class: "chips" }, chips),
    tablesSection(g, query),
    shown.length < g.pipelines.length ? el("p", { class: "muted" }, `${shown.length} of ${g.pipelines.length} shown`) : null,
    shown.map(pipelineCard));
}

function render(view) {
  if (!view) return;
  lastView = view;
  document.getElementById("title").textContent = `· ${view.dag_id} · ${view.run_id}${view.state ? ` · ${view.state}` : ""}`;
  const main = document.getElementById("view");
  const query = document.getElementById("search").value.trim();
  main.replaceChildren(...(view.groups.length
    ? view.groups.map((g) => groupSection(g, query))
    : [el("p", { class: "muted" }, "No SeaTunnel job group in this run yet (its prepare task publishes the job's graph).")]));
}

async function load() {
  if (!dagId || !runId) {
    document.getElementById("view").replaceChildren(el("p", { class: "error" }, "Open this view from a DAG run."));
    return;
  }
  const answer = await fetch(`api/runs/${encodeURIComponent(dagId)}/${encodeURIComponent(runId)}`,
    { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!answer.ok) {
    const why = answer.status === 401 || answer.status === 403 ? "Sign in to Airflow to see this run." : `Error ${answer.status}`;
    document.getElementById("view").replaceChildren(el("p", { class: "error" }, why));
    return;
  }
  const view = await answer.json();
  if (lastView === null) collapsedByDefault = view.groups.reduce((n, g) => n + g.pipelines.length, 0) > 10;
  render(view);
  if (view.active) setTimeout(load, 5000);
}

document.getElementById("search").addEventListener("input", () => render(lastView));
document.getElementById("expand").addEventListener("click", () => { collapsedByDefault = false; expanded.clear(); render(lastView); });
document.getElementById("collapse").addEventListener("click", () => { collapsedByDefault = true; expanded.clear(); render(lastView); });
load();
