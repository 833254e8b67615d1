// kwatch's timeline page (src/app/timeline/): reads the data kwatch inlined (gzipped JSON,
// its format in src/app/timeline/story.rs), builds the lanes and draws them on canvases.
// Canvases draw the marks; the DOM carries what they mean (lane titles, a button with an
// accessible label for each mark in view, the legend, the story list), so that a screen
// reader, and a test, reads what the picture shows. Plain JavaScript, no library, no
// network. window.kwatchTimeline exposes the page's state (docs/user-guide.md).
'use strict';
(function () {
  const started = performance.now();
  const api = { ready: false, error: null, renders: 0, loadMs: null };
  window.kwatchTimeline = api;

  // Delta categories: a tombstone is a Deleted delta of its own category.
  const TYPES = [
    ['Added', '#2e7d32', 'tri'],
    ['Updated', '#1565c0', 'dot'],
    ['Deleted', '#c62828', 'x'],
    ['tombstone', '#6d0000', 'xbox'],
    ['Replaced', '#7b1fa2', 'dia'],
    ['Sync', '#616161', 'sq'],
    ['ReplacedAll', '#7b1fa2', 'diao'],
    ['SyncAll', '#616161', 'sqo'],
  ];
  const TYPE_INDEX = Object.fromEntries(TYPES.map((t, i) => [t[0], i]));
  // Informer marks: what the legend calls them, colour, how drawn, told in the story list.
  const KINDS = {
    list: ['list (pages, items, bytes)', '#00897b', 'list', true],
    watch: ['watch', '#81c784', 'watch', false],
    relist: ['relist, with its reason', '#d32f2f', 'relist', true],
    'watch-expired': ['watch ended: 410 Expired', '#c62828', 'end', true],
    'watch-dropped': ['watch ended: connection lost', '#ef6c00', 'end', true],
    'watch-error': ['watch ended: error', '#ad1457', 'end', true],
    'watch-stalled': ['watch ended: stalled, restarted', '#f9a825', 'end', true],
    'watch-closed': ['watch closed (its timeout)', '#78909c', 'end', false],
    backoff: ['backoff', '#9e9e9e', 'backoff', true],
    stalled: ['stalled watch (silent)', '#ffb300', 'stall', true],
    bookmark: ['bookmark', '#2e7d32', 'tick', false],
    synced: ['synced (HasSynced)', '#1b5e20', 'flag', true],
    retry: ['request retried', '#7b1fa2', 'dot', true],
    relisted: ['what a relist changed', '#b71c1c', 'dot', true],
    resync: ['resync', '#546e7a', 'dot', true],
    stale: ['stale: the store behind', '#ff6f00', 'diamond', true],
    fresh: ['fresh again', '#2e7d32', 'diamond', true],
    lag: ['freshness sample', '#ffa000', 'lag', false],
    timetravel: ['time travel', '#4a148c', 'dot', true],
    protocol: ['protocol problem', '#b00020', 'dot', true],
    consistency: ['consistency check', '#37474f', 'dot', true],
    conflict: ['managers fighting', '#8d6e00', 'dot', true],
    latency: ['probe latency', '#455a64', 'dot', false],
    cache: ['cache cost', '#455a64', 'dot', false],
    note: ['other', '#37474f', 'dot', true],
  };
  // Kinds drawn as spans (start and duration), the others at a point in time.
  const SPANS = new Set(['list', 'watch', 'backoff', 'stalled']);
  // Flags of a delta (story.rs's).
  const F = { initial: 1, tombstone: 2, recreated: 4, unchanged: 8, joined: 16, graphDeleted: 32, orphaned: 64, left: 128, diffLeftOut: 256 };
  const INFORMER_ROW = 30;
  const OBJECT_ROW = 18;
  // At most this many deltas of one lane in view get a button each; more are told as one.
  const BUTTONS_PER_LANE = 40;
  const MAX_BUTTONS = 2500;
  const STORY_MAX = 2000;

  const $ = (sel, root) => (root || document).querySelector(sel);
  const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

  let D = null; // the data
  let M = null; // the model built from it
  const V = { t0: 0, t1: 1, w: 1 }; // the view: times (ms after the start) at the plot's edges
  const S = { contexts: new Set(), resources: new Set(), namespaces: new Set(), types: new Set(TYPES.map(t => t[0])), search: '' };
  let selected = null; // {type: 'delta'|'mark', id}
  let dragging = false;

  // ---- reading the data -------------------------------------------------------------
  async function load() {
    const text = document.getElementById('kwatch-data').textContent.trim();
    if (typeof DecompressionStream !== 'function') {
      throw new Error('this browser cannot read the page\u2019s data (it lacks DecompressionStream): open it in Chrome 80, Firefox 113, Safari 16.4 or later');
    }
    const bin = atob(text);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }

  function build(d) {
    const s = d.s;
    const str = i => (i < 0 ? null : s[i]);
    const informers = d.informers.map(([c, r], id) => ({ id, context: str(c), resource: s[r], marks: [], maxD: 0, deltas: 0 }));
    const mk = d.marks;
    const marks = new Array(mk.t.length);
    for (let j = 0; j < marks.length; j++) {
      const m = { id: j, inf: mk.i[j], kind: s[mk.k[j]], t: mk.t[j], d: mk.d[j], label: s[mk.l[j]] };
      marks[j] = m;
      const inf = informers[m.inf];
      inf.marks.push(m);
      if (SPANS.has(m.kind)) inf.maxD = Math.max(inf.maxD, m.d);
    }
    for (const inf of informers) inf.marks.sort((a, b) => a.t - b.t || a.id - b.id);
    const L = d.lanes;
    const lanes = new Array(L.i.length);
    for (let k = 0; k < lanes.length; k++) {
      const inf = informers[L.i[k]];
      const path = str(L.p[k]);
      const steps = path ? path.split(' \u203a ') : null;
      lanes[k] = {
        id: k, inf: L.i[k], ns: str(L.ns[k]), name: s[L.n[k]], path,
        depth: steps ? steps.length - 1 : 0,
        group: (inf.context ? inf.context + ' \u00b7 ' : '') + (steps ? steps[0] : inf.resource),
        short: steps ? steps[steps.length - 1] : null,
      };
    }
    const x = d.deltas;
    const n = x.t.length;
    const dT = Float64Array.from(x.t);
    const dO = Int32Array.from(x.o);
    const dF = Int32Array.from(x.f);
    const dX = Int32Array.from(x.x);
    const dC = new Uint8Array(n);
    const cat = {};
    for (let i = 0; i < n; i++) {
      const k = x.k[i];
      let c = cat[k];
      if (c === undefined) c = cat[k] = TYPE_INDEX[s[k]] ?? TYPE_INDEX.Sync;
      dC[i] = c === TYPE_INDEX.Deleted && (dF[i] & F.tombstone) ? TYPE_INDEX.tombstone : c;
    }
    // Each lane's deltas, in time order (records come in order; the sort keeps it so).
    const counts = new Int32Array(lanes.length + 1);
    for (let i = 0; i < n; i++) counts[dO[i] + 1]++;
    for (let k = 0; k < lanes.length; k++) counts[k + 1] += counts[k];
    const order = new Int32Array(n);
    const fill = counts.slice(0, lanes.length);
    for (let i = 0; i < n; i++) order[fill[dO[i]]++] = i;
    for (let k = 0; k < lanes.length; k++) {
      const ds = order.subarray(counts[k], counts[k + 1]);
      let sorted = true;
      for (let j = 1; j < ds.length; j++) if (dT[ds[j]] < dT[ds[j - 1]]) { sorted = false; break; }
      if (!sorted) ds.sort((a, b) => dT[a] - dT[b] || a - b);
      const lane = lanes[k];
      lane.deltas = ds;
      lane.from = ds.length ? dT[ds[0]] : 0;
      const last = ds.length ? ds[ds.length - 1] : -1;
      // Alive until its deletion, else to the end of the recording.
      lane.to = last >= 0 && (dC[last] === TYPE_INDEX.Deleted || dC[last] === TYPE_INDEX.tombstone) ? dT[last] : d.end;
      informers[lane.inf].deltas += ds.length;
    }
    const coll = new Intl.Collator('en', { numeric: true });
    const sortedLanes = lanes.slice().sort((a, b) => {
      const ia = informers[a.inf], ib = informers[b.inf];
      return coll.compare(ia.context || '', ib.context || '') || coll.compare(a.group, b.group) ||
        (a.path && b.path ? coll.compare(a.path, b.path) : 0) ||
        coll.compare(ia.resource, ib.resource) || coll.compare(a.ns || '', b.ns || '') || coll.compare(a.name, b.name);
    });
    const contexts = [...new Set(informers.map(i => i.context).filter(c => c !== null))].sort(coll.compare);
    const resources = [...new Set(informers.map(i => i.resource))].sort(coll.compare);
    const namespaces = [...new Set(lanes.map(l => l.ns ?? ''))].sort(coll.compare);
    return { informers, marks, lanes, sortedLanes, dT, dO, dF, dX, dC, rv: x.rv, contexts, resources, namespaces };
  }

  // ---- times -----------------------------------------------------------------------
  const iso = t => new Date(D.startMs + t).toISOString();
  const clock = t => iso(t).slice(11, 23);
  const fullTime = t => { const s = iso(t); return s.slice(0, 10) + ' ' + s.slice(11, 23) + ' UTC'; };
  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
    const m = Math.floor(ms / 60000), s = Math.round((ms % 60000) / 1000);
    if (m < 60) return m + 'm' + (s ? s + 's' : '');
    return Math.floor(m / 60) + 'h' + (m % 60) + 'm';
  }
  const X = t => (t - V.t0) * V.w / (V.t1 - V.t0);
  const timeAt = x => V.t0 + x * (V.t1 - V.t0) / V.w;
  // The first index of `ids` (sorted by time `at`) whose time is at least `t`.
  function lowerBound(ids, at, t) {
    let lo = 0, hi = ids.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (at(ids[mid]) < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // ---- what the filters keep ---------------------------------------------------------
  const infShown = inf => (inf.context === null || S.contexts.has(inf.context)) && S.resources.has(inf.resource);
  function laneShown(l) {
    const inf = M.informers[l.inf];
    if (!infShown(inf) || !S.namespaces.has(l.ns ?? '')) return false;
    if (S.search) {
      const hay = ((l.ns ? l.ns + '/' : '') + l.name + ' ' + (l.path || '')).toLowerCase();
      if (!hay.includes(S.search)) return false;
    }
    if (S.types.size === TYPES.length) return l.deltas.length > 0;
    for (const i of l.deltas) if (S.types.has(TYPES[M.dC[i]][0])) return true;
    return false;
  }
  const typeShown = i => S.types.has(TYPES[M.dC[i]][0]);

  // ---- a pane: rows on a canvas, their titles and marks in the DOM ------------------------
  class Pane {
    constructor(root, rowH, draw, overlay) {
      this.root = root;
      this.rowH = rowH;
      this.drawRow = draw;
      this.overlayRow = overlay;
      this.inner = $('.inner', root);
      this.sticky = $('.sticky', root);
      this.titles = $('.titles', root);
      this.plot = $('.plot', root);
      this.canvas = $('canvas', this.plot);
      this.hits = $('.hits', this.plot);
      this.rows = [];
      root.addEventListener('scroll', () => schedule(true));
    }
    setRows(rows) {
      this.rows = rows;
      this.inner.style.height = rows.length * this.rowH + 'px';
    }
    layout() {
      const h = Math.max(this.root.clientHeight, 1);
      this.inner.style.height = Math.max(this.rows.length * this.rowH, h) + 'px';
      this.sticky.style.height = h + 'px';
      const w = Math.max(this.plot.clientWidth, 1);
      const r = window.devicePixelRatio || 1;
      this.canvas.width = Math.round(w * r);
      this.canvas.height = Math.round(h * r);
      this.canvas.style.width = w + 'px';
      this.canvas.style.height = h + 'px';
      this.h = h;
      this.ratio = r;
    }
    visible() {
      const top = this.root.scrollTop;
      const first = Math.max(0, Math.floor(top / this.rowH));
      const last = Math.min(this.rows.length, Math.ceil((top + this.h) / this.rowH));
      return [first, last, top];
    }
    draw() {
      const ctx = this.canvas.getContext('2d');
      ctx.setTransform(this.ratio, 0, 0, this.ratio, 0, 0);
      ctx.clearRect(0, 0, V.w, this.h);
      const [first, last, top] = this.visible();
      for (let r = first; r < last; r++) {
        const y = r * this.rowH - top;
        if (r % 2) { ctx.fillStyle = '#fafbfc'; ctx.fillRect(0, y, V.w, this.rowH); }
        this.drawRow(ctx, this.rows[r], y, this.rowH);
      }
    }
    overlay(budget) {
      const [first, last, top] = this.visible();
      const titles = [];
      const hits = [];
      for (let r = first; r < last; r++) {
        const y = r * this.rowH - top;
        budget = this.overlayRow(this.rows[r], y, this.rowH, titles, hits, budget);
      }
      this.titles.innerHTML = titles.join('');
      this.hits.innerHTML = hits.join('');
      return budget;
    }
    rowAt(clientY) {
      const rect = this.plot.getBoundingClientRect();
      const r = Math.floor((clientY - rect.top + this.root.scrollTop) / this.rowH);
      return r >= 0 && r < this.rows.length ? this.rows[r] : null;
    }
  }

  // ---- drawing ----------------------------------------------------------------------
  let hatch = null;
  function backoffFill(ctx) {
    if (!hatch) {
      const c = document.createElement('canvas');
      c.width = c.height = 6;
      const g = c.getContext('2d');
      g.fillStyle = '#e0e0e0'; g.fillRect(0, 0, 6, 6);
      g.strokeStyle = '#9e9e9e'; g.beginPath(); g.moveTo(0, 6); g.lineTo(6, 0); g.stroke();
      hatch = ctx.createPattern(c, 'repeat');
    }
    return hatch;
  }

  // One delta's shape, centred on (x, y).
  function shape(ctx, kind, colour, x, y, r) {
    ctx.fillStyle = colour;
    ctx.strokeStyle = colour;
    ctx.lineWidth = 1.6;
    ctx.beginPath();
    switch (kind) {
      case 'tri': ctx.moveTo(x, y - r); ctx.lineTo(x + r, y + r * 0.8); ctx.lineTo(x - r, y + r * 0.8); ctx.closePath(); ctx.fill(); break;
      case 'dot': ctx.arc(x, y, r * 0.85, 0, 2 * Math.PI); ctx.fill(); break;
      case 'x': ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); ctx.lineWidth = 2.2; ctx.stroke(); break;
      case 'xbox': ctx.rect(x - r, y - r, 2 * r, 2 * r); ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); ctx.stroke(); break;
      case 'dia': ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); ctx.fill(); break;
      case 'diao': ctx.moveTo(x, y - r); ctx.lineTo(x + r, y); ctx.lineTo(x, y + r); ctx.lineTo(x - r, y); ctx.closePath(); ctx.stroke(); break;
      case 'sq': ctx.rect(x - r * 0.8, y - r * 0.8, r * 1.6, r * 1.6); ctx.fill(); break;
      case 'sqo': ctx.rect(x - r * 0.8, y - r * 0.8, r * 1.6, r * 1.6); ctx.stroke(); break;
    }
  }

  // One informer mark in a row whose top is `y`; `x0`, `x1` its ends (equal for a point).
  function informerMark(ctx, m, x0, x1, y, h) {
    const [, colour, how] = KINDS[m.kind] || KINDS.note;
    const w = Math.max(x1 - x0, 1);
    switch (how) {
      case 'watch': ctx.fillStyle = '#c8e6c9'; ctx.fillRect(x0, y + 11, w, 8); ctx.fillStyle = colour; ctx.fillRect(x0, y + 11, w, 1.5); break;
      case 'list': ctx.fillStyle = colour; ctx.fillRect(x0, y + 8, Math.max(w, 2), 14); break;
      case 'backoff': ctx.fillStyle = backoffFill(ctx); ctx.fillRect(x0, y + 9, Math.max(w, 2), 12); break;
      case 'stall': ctx.fillStyle = 'rgba(255, 179, 0, 0.35)'; ctx.fillRect(x0, y + 2, w, h - 4); ctx.fillStyle = colour; ctx.fillRect(x0, y + 2, w, 2); ctx.fillRect(x0, y + h - 4, w, 2); break;
      case 'relist':
        ctx.fillStyle = colour; ctx.fillRect(x0 - 1, y + 1, 3, h - 2);
        ctx.beginPath(); ctx.moveTo(x0 - 5, y + 1); ctx.lineTo(x0 + 6, y + 1); ctx.lineTo(x0 + 0.5, y + 8); ctx.closePath(); ctx.fill(); break;
      case 'end':
        if (m.kind === 'watch-closed') { ctx.fillStyle = colour; ctx.fillRect(x0, y + 8, 1, h - 14); break; }
        ctx.fillStyle = colour; ctx.fillRect(x0 - 1, y + 5, 2, h - 10);
        ctx.beginPath();
        if (m.kind === 'watch-dropped') { // a break: two offset strokes
          ctx.strokeStyle = colour; ctx.lineWidth = 2; ctx.moveTo(x0 - 5, y + 9); ctx.lineTo(x0 + 1, y + 14); ctx.lineTo(x0 - 2, y + 16); ctx.lineTo(x0 + 5, y + 21); ctx.stroke();
        } else { ctx.arc(x0, y + 6, 4, 0, 2 * Math.PI); ctx.fill(); }
        break;
      case 'tick': ctx.fillStyle = colour; ctx.fillRect(x0, y + h - 8, 1, 6); break;
      case 'flag':
        ctx.fillStyle = colour; ctx.fillRect(x0, y + 2, 1.5, h - 4);
        ctx.beginPath(); ctx.moveTo(x0 + 1, y + 2); ctx.lineTo(x0 + 10, y + 6); ctx.lineTo(x0 + 1, y + 10); ctx.closePath(); ctx.fill(); break;
      case 'diamond': shape(ctx, 'dia', colour, x0, y + 7, 4.5); break;
      case 'lag': { const bar = Math.min(12, 2 + Math.log10(1 + m.d) * 3); ctx.fillStyle = colour; ctx.fillRect(x0 - 0.5, y + h - 1 - bar, 1.5, bar); break; }
      default: ctx.beginPath(); ctx.arc(x0, y + h - 7, 3, 0, 2 * Math.PI); ctx.fillStyle = colour; ctx.fill();
    }
  }

  // The marks of `inf` that reach into [from, to].
  function marksIn(inf, from, to) {
    const ms = inf.marks;
    const i0 = lowerBound(ms, m => m.t, from - inf.maxD);
    const out = [];
    for (let i = i0; i < ms.length && ms[i].t <= to; i++) {
      const m = ms[i];
      if (m.t + m.d >= from) out.push(m);
    }
    return out;
  }

  function drawInformerRow(ctx, row, y, h) {
    if (row.group) { ctx.fillStyle = '#e8edf2'; ctx.fillRect(0, y, V.w, h); return; }
    const pad = 8 * (V.t1 - V.t0) / V.w;
    const ms = marksIn(row.inf, V.t0 - pad, V.t1 + pad);
    // Spans first, under the points.
    for (const pass of [0, 1]) {
      for (const m of ms) {
        if (SPANS.has(m.kind) !== (pass === 0)) continue;
        informerMark(ctx, m, X(m.t), X(m.t + m.d), y, h);
      }
    }
    for (const m of ms) {
      if (selected && selected.type === 'mark' && selected.id === m.id) ring(ctx, X(m.t), y + h / 2, SPANS.has(m.kind) ? X(m.t + m.d) : null, y, h);
    }
  }

  function ring(ctx, x, cy, x1, y, h) {
    ctx.strokeStyle = '#0b57d0';
    ctx.lineWidth = 2;
    ctx.beginPath();
    if (x1 !== null) ctx.rect(x - 2, y + 1, Math.max(x1 - x, 1) + 4, h - 2);
    else ctx.arc(x, cy, 8, 0, 2 * Math.PI);
    ctx.stroke();
  }

  // The deltas of `lane` in view that the type filter keeps.
  function deltasIn(lane, from, to) {
    const ds = lane.deltas;
    const out = [];
    for (let i = lowerBound(ds, j => M.dT[j], from); i < ds.length && M.dT[ds[i]] <= to; i++) {
      if (typeShown(ds[i])) out.push(ds[i]);
    }
    return out;
  }

  const rvText = i => { const v = M.rv[i]; return v === null ? 'unknown' : String(v); };

  function drawObjectRow(ctx, row, y, h) {
    if (row.group) { ctx.fillStyle = '#e8edf2'; ctx.fillRect(0, y, V.w, h); return; }
    const lane = row.lane;
    const cy = y + h / 2;
    // The object's life: from its first delta to its deletion (or the end).
    const a = Math.max(X(lane.from), -2), b = Math.min(X(lane.to), V.w + 2);
    if (b > a) { ctx.fillStyle = '#cfd8dc'; ctx.fillRect(a, cy - 0.5, b - a, 1); }
    const pad = 8 * (V.t1 - V.t0) / V.w;
    const ds = deltasIn(lane, V.t0 - pad, V.t1 + pad);
    let lastX = -1e9, lastC = -1;
    const xs = [];
    for (const i of ds) {
      const x = X(M.dT[i]);
      const c = M.dC[i];
      // Marks that fall on one pixel are drawn once (aggregated when zoomed out).
      if (Math.round(x) === Math.round(lastX) && c === lastC) continue;
      ctx.globalAlpha = (M.dF[i] & F.unchanged) ? 0.4 : 1;
      const [, colour, how] = TYPES[c];
      shape(ctx, how, colour, x, cy, 4.5);
      lastX = x; lastC = c;
      xs.push([x, i]);
    }
    ctx.globalAlpha = 1;
    // Zoomed in: each mark's resourceVersion beside it, where there is room.
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillStyle = '#455a64';
    ctx.textBaseline = 'middle';
    for (let k = 0; k < xs.length; k++) {
      const [x, i] = xs[k];
      const next = k + 1 < xs.length ? xs[k + 1][0] : V.w + 100;
      const text = rvText(i);
      const tw = ctx.measureText(text).width;
      if (next - x > tw + 16) ctx.fillText(text, x + 7, cy);
    }
    if (selected && selected.type === 'delta' && M.dO[selected.id] === lane.id) {
      const x = X(M.dT[selected.id]);
      if (x > -10 && x < V.w + 10) ring(ctx, x, cy, null, y, h);
    }
  }

  function drawAxis() {
    const c = $('#axis');
    const box = c.parentElement;
    const w = box.clientWidth, h = box.clientHeight, r = window.devicePixelRatio || 1;
    c.width = Math.round(w * r); c.height = Math.round(h * r);
    const ctx = c.getContext('2d');
    ctx.setTransform(r, 0, 0, r, 0, 0);
    ctx.clearRect(0, 0, w, h);
    // How many deltas shown, over time: where the story is dense.
    const bins = Math.max(1, Math.floor(w / 3));
    const hist = new Float64Array(bins);
    const span = V.t1 - V.t0;
    for (const row of objects.rows) {
      if (row.group) continue;
      const ds = row.lane.deltas;
      for (let k = lowerBound(ds, j => M.dT[j], V.t0); k < ds.length; k++) {
        const i = ds[k];
        const t = M.dT[i];
        if (t > V.t1) break;
        if (!typeShown(i)) continue;
        hist[Math.min(bins - 1, Math.floor((t - V.t0) / span * bins))]++;
      }
    }
    let max = 0;
    for (const v of hist) max = Math.max(max, v);
    if (max > 0) {
      ctx.fillStyle = '#b0bec5';
      for (let b = 0; b < bins; b++) {
        if (!hist[b]) continue;
        const bh = Math.max(1, Math.sqrt(hist[b] / max) * 16);
        ctx.fillRect(b * 3, h - bh, 2.5, bh);
      }
    }
    // Relists and failed watches of the informers shown, as ticks along the axis.
    for (const row of informers.rows) {
      if (row.group) continue;
      for (const m of marksIn(row.inf, V.t0, V.t1)) {
        if (m.kind !== 'relist' && m.kind !== 'watch-expired' && m.kind !== 'watch-dropped' && m.kind !== 'stalled') continue;
        ctx.fillStyle = KINDS[m.kind][1];
        ctx.fillRect(X(m.t) - 1, h - 20, 2, 6);
      }
    }
    // Ticks, at a step that leaves room for their labels.
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
    const perPx = span / w;
    const step = steps.find(s => s / perPx >= 95) || steps[steps.length - 1];
    const abs0 = D.startMs + V.t0;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'top';
    ctx.fillStyle = '#37474f';
    ctx.strokeStyle = '#90a4ae';
    for (let a = Math.ceil(abs0 / step) * step; a <= D.startMs + V.t1; a += step) {
      const x = (a - abs0) / perPx;
      ctx.fillRect(x, 0, 1, 6);
      const s = new Date(a).toISOString();
      const label = step < 1000 ? s.slice(11, 23) : step < 60000 ? s.slice(11, 19) : s.slice(11, 16);
      ctx.fillText(label, x + 3, 4);
    }
    $('#range').textContent = clock(V.t0) + ' \u2192 ' + clock(V.t1) + ' (' + duration(span) + ' in view)';
  }

  // ---- the DOM over the canvases ------------------------------------------------------
  const infName = inf => inf.resource + (inf.context ? ' in ' + inf.context : '');
  const laneKey = lane => (lane.ns ? lane.ns + '/' : '') + lane.name;

  function markText(m) {
    const inf = M.informers[m.inf];
    const when = SPANS.has(m.kind) ? 'from ' + clock(m.t) + ' for ' + duration(m.d) : 'at ' + clock(m.t);
    return KINDS[m.kind] ? KINDS[m.kind][0].split(',')[0] + ' ' + infName(inf) + ' ' + when + ': ' + m.label : m.label;
  }

  function overlayInformerRow(row, y, h, titles, hits, budget) {
    const style = `top:${y}px;height:${h}px`;
    if (row.group) {
      titles.push(`<div class="lane group" role="listitem" style="${style}">${esc(row.text)}</div>`);
      return budget;
    }
    const inf = row.inf;
    titles.push(`<div class="lane" role="listitem" data-lane="inf-${inf.id}" style="${style}" title="${esc(infName(inf))}"><span class="nm">${esc(inf.resource)}${inf.context ? `<span class="ns">${esc(inf.context)}</span>` : ''}</span><span class="n">${inf.deltas} deltas</span></div>`);
    for (const m of marksIn(inf, V.t0, V.t1)) {
      if (m.kind === 'bookmark' || m.kind === 'lag' || budget <= 0) continue;
      const x0 = X(m.t), x1 = SPANS.has(m.kind) ? X(m.t + m.d) : x0;
      const left = SPANS.has(m.kind) ? Math.max(x0, -2) : x0 - 5;
      const width = SPANS.has(m.kind) ? Math.max(Math.min(x1, V.w + 2) - left, 6) : 10;
      const sel = selected && selected.type === 'mark' && selected.id === m.id ? ' sel' : '';
      hits.push(`<button type="button" class="mk${sel}" data-kind="${esc(m.kind)}" data-id="${m.id}" data-t="${m.t}" data-lane="inf-${inf.id}" style="left:${left}px;top:${y + 2}px;width:${width}px;height:${h - 4}px" aria-label="${esc(markText(m))}"></button>`);
      budget--;
    }
    return budget;
  }

  function deltaText(i) {
    const lane = M.lanes[M.dO[i]];
    const inf = M.informers[lane.inf];
    const type = TYPES[M.dC[i]][0];
    const f = M.dF[i];
    let text = (type === 'tombstone' ? 'Deleted (tombstone)' : type) + ' ' + inf.resource + ' ' + laneKey(lane) + (inf.context ? ' in ' + inf.context : '') + ' rv=' + rvText(i) + ' at ' + clock(M.dT[i]);
    if (f & F.unchanged) text += ', unchanged';
    if (f & F.recreated) text += ', recreated';
    if (f & F.initial) text += ', initial list';
    return text;
  }

  function overlayObjectRow(row, y, h, titles, hits, budget) {
    const style = `top:${y}px;height:${h}px`;
    if (row.group) {
      titles.push(`<div class="lane group" role="listitem" style="${style}">${esc(row.text)}</div>`);
      return budget;
    }
    const lane = row.lane;
    const inf = M.informers[lane.inf];
    const indent = 6 + lane.depth * 12;
    const shown = lane.short
      ? esc(lane.short)
      : (lane.ns ? `<span class="ns">${esc(lane.ns)}/</span>` : '') + esc(lane.name);
    titles.push(`<div class="lane" role="listitem" data-lane="obj-${lane.id}" style="${style};padding-left:${indent}px" title="${esc(inf.resource + ' ' + laneKey(lane) + (lane.path ? ' \u2014 ' + lane.path : ''))}"><span class="nm">${shown}</span><span class="n">${lane.deltas.length}</span></div>`);
    const ds = deltasIn(lane, V.t0, V.t1);
    if (!ds.length) return budget;
    if (ds.length > BUTTONS_PER_LANE || budget < ds.length) {
      hits.push(`<div class="agg" style="${style}" data-lane="obj-${lane.id}">${ds.length} deltas of ${esc(laneKey(lane))} from ${clock(M.dT[ds[0]])} to ${clock(M.dT[ds[ds.length - 1]])}: zoom in to reach each</div>`);
      return budget;
    }
    for (const i of ds) {
      const x = X(M.dT[i]);
      const sel = selected && selected.type === 'delta' && selected.id === i ? ' sel' : '';
      hits.push(`<button type="button" class="mk${sel}" data-kind="delta" data-type="${TYPES[M.dC[i]][0]}" data-id="${i}" data-t="${M.dT[i]}" data-lane="obj-${lane.id}" style="left:${x - 5}px;top:${y + 2}px;width:10px;height:${h - 4}px" aria-label="${esc(deltaText(i))}"></button>`);
    }
    return budget - ds.length;
  }

  const informers = new Pane($('#informers'), INFORMER_ROW, drawInformerRow, overlayInformerRow);
  const objects = new Pane($('#objects'), OBJECT_ROW, drawObjectRow, overlayObjectRow);

  // ---- rendering --------------------------------------------------------------------
  let frame = 0, overlayDue = false;
  function render(withOverlay) {
    V.w = Math.max(objects.plot.clientWidth, informers.plot.clientWidth, 1);
    informers.draw();
    objects.draw();
    drawAxis();
    if (withOverlay) overlay();
  }
  function overlay() {
    const left = informers.overlay(MAX_BUTTONS);
    objects.overlay(Math.max(left, 0) + MAX_BUTTONS);
    informers.hits.classList.remove('hidden');
    objects.hits.classList.remove('hidden');
    api.renders++;
  }
  // A redraw at the next frame, the DOM's marks with it unless a drag goes on (they come
  // back when it ends).
  function schedule(withOverlay) {
    if (withOverlay && !dragging) overlayDue = true;
    if (!frame) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        const o = overlayDue;
        overlayDue = false;
        render(o);
      });
    }
  }
  function layout() {
    informers.layout();
    objects.layout();
    render(true);
  }

  function setView(t0, t1) {
    const full = Math.max(D.end, 1);
    const minSpan = 2;
    const maxSpan = full * 3 + 1000;
    let span = Math.min(Math.max(t1 - t0, minSpan), maxSpan);
    const mid = (t0 + t1) / 2;
    t0 = mid - span / 2;
    // Keep some of the recording in view.
    const lo = -span * 0.9, hi = D.end - span * 0.1;
    t0 = Math.min(Math.max(t0, lo), Math.max(hi, lo));
    V.t0 = t0; V.t1 = t0 + span;
  }
  function fit() {
    const pad = Math.max(D.end * 0.02, 20);
    setView(-pad, D.end + pad);
  }
  function zoom(factor, anchorT) {
    const a = anchorT ?? (V.t0 + V.t1) / 2;
    setView(a - (a - V.t0) * factor, a + (V.t1 - a) * factor);
    schedule(true);
  }
  function pan(dt) {
    setView(V.t0 + dt, V.t1 + dt);
    schedule(true);
  }
  function hideHits() {
    informers.hits.classList.add('hidden');
    objects.hits.classList.add('hidden');
  }

  // ---- filters and rows ------------------------------------------------------------------
  function applyFilters() {
    const irows = [];
    let ctx;
    // A heading per context where a context has several informers (each lane names its own).
    const perContext = {};
    for (const inf of M.informers) perContext[inf.context] = (perContext[inf.context] || 0) + 1;
    const headed = M.contexts.length > 1 && Object.values(perContext).some(n => n > 1);
    const shownInformers = M.informers.filter(infShown).sort((a, b) => (a.context || '').localeCompare(b.context || '') || a.resource.localeCompare(b.resource));
    for (const inf of shownInformers) {
      if (headed && inf.context !== ctx) { ctx = inf.context; irows.push({ group: true, text: 'context ' + ctx }); }
      irows.push({ inf });
    }
    informers.setRows(irows);
    const orows = [];
    let group = null, count = 0, deltas = 0;
    for (const lane of M.sortedLanes) {
      if (!laneShown(lane)) continue;
      if (lane.group !== group) { group = lane.group; orows.push({ group: true, text: group }); }
      orows.push({ lane });
      count++;
      deltas += lane.deltas.length;
    }
    objects.setRows(orows);
    api.shown = { informers: irows.filter(r => !r.group).length, objects: count };
    $('#f-namespace-summary').textContent = `Namespaces (${S.namespaces.size} of ${M.namespaces.length})`;
    story();
    layout();
  }

  function checkbox(name, value, checked, swatch) {
    return `<label><input type="checkbox" data-filter="${name}" value="${esc(value)}"${checked ? ' checked' : ''}>${swatch || ''}${esc(value === '' ? '(cluster-scoped)' : value)}</label>`;
  }
  function swatchCanvas(draw) {
    const c = document.createElement('canvas');
    const r = window.devicePixelRatio || 1;
    c.width = 16 * r; c.height = 16 * r;
    c.className = 'sw';
    c.style.width = c.style.height = '14px';
    c.setAttribute('aria-hidden', 'true');
    const ctx = c.getContext('2d');
    ctx.setTransform(r, 0, 0, r, 0, 0);
    draw(ctx);
    return c;
  }
  function typeSwatch(t) { return swatchCanvas(ctx => shape(ctx, t[2], t[1], 8, 8, 5)); }
  function kindSwatch(kind) {
    // The lane's drawing, at half its size.
    return swatchCanvas(ctx => {
      ctx.scale(16 / 30, 16 / 30);
      const span = SPANS.has(kind);
      informerMark(ctx, { kind, d: 100 }, span ? 2 : 15, span ? 28 : 15, 0, 30);
    });
  }

  function controls() {
    const fill = (id, name, values, present) => {
      const box = $('#' + id);
      if (!values.length) { box.hidden = true; return; }
      box.insertAdjacentHTML('beforeend', values.map(v => checkbox(name, v, true)).join(''));
      for (const v of values) present.add(v);
    };
    fill('f-context', 'context', M.contexts, S.contexts);
    fill('f-resource', 'resource', M.resources, S.resources);
    fill('f-namespace', 'namespace', M.namespaces, S.namespaces);
    const types = $('#f-type');
    for (const t of TYPES) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox'; box.checked = true; box.value = t[0]; box.dataset.filter = 'type';
      label.append(box, typeSwatch(t), t[0]);
      types.append(label);
    }
    $('#controls').addEventListener('change', e => {
      const box = e.target;
      const set = { context: S.contexts, resource: S.resources, namespace: S.namespaces, type: S.types }[box.dataset.filter];
      if (!set) return;
      if (box.checked) set.add(box.value); else set.delete(box.value);
      applyFilters();
    });
    $('#f-namespace-box').addEventListener('click', e => {
      const all = e.target.dataset && e.target.dataset.all;
      if (all === undefined) return;
      for (const box of document.querySelectorAll('#f-namespace input')) {
        box.checked = all === '1';
        if (box.checked) S.namespaces.add(box.value); else S.namespaces.delete(box.value);
      }
      applyFilters();
    });
    let typing = 0;
    $('#search').addEventListener('input', e => {
      clearTimeout(typing);
      typing = setTimeout(() => { S.search = e.target.value.trim().toLowerCase(); applyFilters(); }, 120);
    });
    // The legend: every delta type, and the informer marks this recording has.
    const legend = $('#legend-list');
    const kinds = new Set(M.marks.map(m => m.kind));
    for (const t of TYPES) {
      const li = document.createElement('li');
      li.append(typeSwatch(t), t[0] === 'tombstone' ? 'tombstone (Deleted, final state unknown)' : t[0]);
      legend.append(li);
    }
    for (const [kind, [name]] of Object.entries(KINDS)) {
      if (!kinds.has(kind) && !['list', 'watch', 'relist', 'watch-dropped', 'stalled', 'synced'].includes(kind)) continue;
      const li = document.createElement('li');
      li.dataset.kind = kind;
      li.append(kindSwatch(kind), name);
      legend.append(li);
    }
    const faded = document.createElement('li');
    faded.textContent = 'faded: a relist\u2019s or resync\u2019s delta that changed nothing';
    legend.append(faded);
  }

  // ---- details ----------------------------------------------------------------------
  function select(sel, reveal) {
    selected = sel;
    const box = $('#details');
    if (!sel) { box.innerHTML = ''; return; }
    box.innerHTML = sel.type === 'delta' ? deltaDetails(sel.id) : markDetails(sel.id);
    if (reveal) revealSelected();
    api.selected = sel;
    // The address names the selection: a link to this page with it opens on this mark.
    try { history.replaceState(null, '', '#' + sel.type + '=' + sel.id); } catch (e) { /* a page without history */ }
    render(true);
  }

  // `#delta=ID` or `#mark=ID` in the address: that mark selected at the start.
  function selectFromAddress() {
    const m = /^#(delta|mark)=(\d+)$/.exec(location.hash);
    if (!m) return;
    const id = +m[2];
    if (m[1] === 'delta' ? id < M.dT.length : id < M.marks.length) select({ type: m[1], id }, true);
  }

  function revealSelected() {
    const t = selected.type === 'delta' ? M.dT[selected.id] : M.marks[selected.id].t;
    if (t < V.t0 || t > V.t1) { const span = V.t1 - V.t0; setView(t - span / 2, t + span / 2); }
    if (selected.type === 'delta') {
      const lane = M.dO[selected.id];
      const r = objects.rows.findIndex(row => row.lane && row.lane.id === lane);
      if (r >= 0) {
        const top = r * OBJECT_ROW;
        if (top < objects.root.scrollTop || top > objects.root.scrollTop + objects.h - OBJECT_ROW) objects.root.scrollTop = Math.max(0, top - objects.h / 2);
      }
    }
  }

  function dl(pairs) {
    return '<dl>' + pairs.filter(p => p[1] !== null && p[1] !== undefined && p[1] !== '').map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('') + '</dl>';
  }

  function deltaDetails(i) {
    const lane = M.lanes[M.dO[i]];
    const inf = M.informers[lane.inf];
    const type = TYPES[M.dC[i]][0];
    const f = M.dF[i];
    const notes = [];
    if (f & F.initial) notes.push('in the initial list (before HasSynced)');
    if (f & F.tombstone) notes.push('a tombstone: deleted while kwatch was not watching, found by a relist (DeletedFinalStateUnknown)');
    if (f & F.recreated) notes.push('recreated: another uid under this name');
    if (f & F.unchanged) notes.push('unchanged: the relist or resync brought the version the informer held');
    if (f & F.joined) notes.push('joined the owner graph');
    if (f & F.graphDeleted) notes.push('left the owner graph, deleted');
    if (f & F.orphaned) notes.push('orphaned: its owners no longer lead to the graph');
    if (f & F.left) notes.push('left the graph with its orphaned owner');
    let html = `<h2>${esc(type === 'tombstone' ? 'Deleted (tombstone)' : type)} ${esc(laneKey(lane))}</h2>`;
    html += dl([
      ['when', fullTime(M.dT[i]) + ' (+' + duration(M.dT[i]) + ')'],
      ['context', inf.context],
      ['resource', inf.resource],
      ['namespace', lane.ns],
      ['name', lane.name],
      ['resourceVersion', rvText(i)],
      ['owner path', lane.path],
      ['note', notes.join('; ')],
    ]);
    const x = M.dX[i];
    if (x >= 0) {
      const e = D.details[x];
      html += '<h3>What changed</h3><ul class="diff" aria-label="What changed">';
      for (let k = 1; k < e.length; k += 2) {
        const who = e[k + 1] >= 0 ? `<span class="who">\u2190 ${esc(D.s[e[k + 1]])}</span>` : '';
        html += `<li><code>${esc(D.s[e[k]])}</code>${who}</li>`;
      }
      html += '</ul>';
      if (e[0] > 0) html += `<p>${e[0]} more changes: <code>kwatch replay FILE --diff</code> shows them all.</p>`;
    } else if (f & F.diffLeftOut) {
      html += '<p>Its diff was left out: the page keeps at most ' + '16 MB of diffs. <code>kwatch replay FILE --diff</code> shows it.</p>';
    } else if (type === 'Added') {
      html += '<p>No diff: the object was new to the informer.</p>';
    } else if (!(f & F.unchanged) && type !== 'Deleted' && type !== 'tombstone') {
      html += '<p>No diff: the informer knew no earlier version of it.</p>';
    }
    html += `<h3>Its deltas (${lane.deltas.length})</h3><ul class="history">`;
    const at = lane.deltas.indexOf(i);
    const from = Math.max(0, at - 100), to = Math.min(lane.deltas.length, at + 100);
    for (let k = from; k < to; k++) {
      const j = lane.deltas[k];
      const t = TYPES[M.dC[j]][0];
      html += `<li><button type="button" data-kind="delta" data-id="${j}" aria-current="${j === i}">${clock(M.dT[j])} ${esc(t)} rv=${esc(rvText(j))}</button></li>`;
    }
    return html + '</ul>';
  }

  function markDetails(id) {
    const m = M.marks[id];
    const inf = M.informers[m.inf];
    const [name] = KINDS[m.kind] || KINDS.note;
    let html = `<h2>${esc(name.split(',')[0])} ${esc(infName(inf))}</h2>`;
    html += dl([
      ['when', fullTime(m.t) + ' (+' + duration(m.t) + ')'],
      ['until', SPANS.has(m.kind) ? fullTime(m.t + m.d) + ' (' + duration(m.d) + ')' : null],
      ['lag', m.kind === 'lag' || m.kind === 'stale' || m.kind === 'fresh' ? m.d + ' ms' : null],
      ['context', inf.context],
      ['resource', inf.resource],
    ]);
    return html + `<p class="label">${esc(m.label)}</p>`;
  }

  // ---- the story list: what the informers did, in order ------------------------------------
  function story() {
    const list = [];
    for (const inf of M.informers) {
      if (!infShown(inf)) continue;
      for (const m of inf.marks) if ((KINDS[m.kind] || KINDS.note)[3]) list.push(m);
    }
    list.sort((a, b) => a.t - b.t || a.id - b.id);
    const items = list.slice(0, STORY_MAX).map(m => {
      const inf = M.informers[m.inf];
      return `<li><button type="button" data-kind="${esc(m.kind)}" data-id="${m.id}"><span class="t">${clock(m.t)}</span> ${inf.context ? esc(inf.context) + ' ' : ''}${esc(m.label)}</button></li>`;
    });
    if (list.length > STORY_MAX) items.push(`<li>\u2026 and ${list.length - STORY_MAX} more: zoom in, or filter by context and resource</li>`);
    $('#story-list').innerHTML = items.join('');
  }

  // ---- pointer and keys ------------------------------------------------------------------
  function hitAt(pane, clientX, clientY) {
    const row = pane.rowAt(clientY);
    if (!row || row.group) return null;
    const x = clientX - pane.plot.getBoundingClientRect().left;
    const slack = 6 * (V.t1 - V.t0) / V.w;
    const t = timeAt(x);
    if (pane === objects) {
      let best = null, bestD = slack;
      for (const i of deltasIn(row.lane, t - slack, t + slack)) {
        const d = Math.abs(M.dT[i] - t);
        if (d <= bestD) { best = i; bestD = d; }
      }
      return best === null ? null : { type: 'delta', id: best };
    }
    let best = null, bestD = slack, span = null;
    for (const m of marksIn(row.inf, t - slack, t + slack)) {
      if (m.kind === 'lag') continue;
      if (SPANS.has(m.kind)) {
        if (t >= m.t && t <= m.t + m.d && (!span || m.kind !== 'watch')) span = m;
        continue;
      }
      const d = Math.abs(m.t - t);
      if (d <= bestD) { best = m; bestD = d; }
    }
    const m = best || span;
    return m ? { type: 'mark', id: m.id } : null;
  }

  function tipText(hit) {
    return hit.type === 'delta' ? deltaText(hit.id) : markText(M.marks[hit.id]);
  }

  function wire() {
    const tip = $('#tip');
    const cursor = $('#cursor');
    const view = $('#view');
    let down = null;
    for (const pane of [informers, objects]) {
      const plot = pane.plot;
      plot.addEventListener('mousedown', e => {
        if (e.button !== 0) return;
        down = { x: e.clientX, t0: V.t0, t1: V.t1, moved: false, pane };
        e.preventDefault();
        view.focus({ preventScroll: true });
      });
      plot.addEventListener('mousemove', e => {
        cursor.style.display = 'block';
        cursor.style.left = (e.clientX - view.getBoundingClientRect().left) + 'px';
        if (down) return;
        const hit = hitAt(pane, e.clientX, e.clientY);
        if (hit) {
          tip.textContent = tipText(hit);
          tip.hidden = false;
          tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 540) + 'px';
          tip.style.top = (e.clientY + 16) + 'px';
        } else tip.hidden = true;
      });
      plot.addEventListener('mouseleave', () => { tip.hidden = true; cursor.style.display = 'none'; });
      plot.addEventListener('wheel', e => {
        const rect = plot.getBoundingClientRect();
        if (e.ctrlKey || e.metaKey) {
          e.preventDefault();
          zoom(Math.exp(e.deltaY * 0.002), timeAt(e.clientX - rect.left));
        } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
          e.preventDefault();
          pan((e.shiftKey ? e.deltaY : e.deltaX) * (V.t1 - V.t0) / V.w);
        }
      }, { passive: false });
      plot.addEventListener('click', e => {
        if (pane.dragged) { pane.dragged = false; return; }
        const button = e.target.closest && e.target.closest('.mk');
        if (button) { select(button.dataset.kind === 'delta' ? { type: 'delta', id: +button.dataset.id } : { type: 'mark', id: +button.dataset.id }); return; }
        const hit = hitAt(pane, e.clientX, e.clientY);
        if (hit) select(hit);
      });
    }
    window.addEventListener('mousemove', e => {
      if (!down) return;
      const dx = e.clientX - down.x;
      if (Math.abs(dx) > 3) down.moved = true;
      if (!down.moved) return;
      dragging = true;
      down.pane.plot.classList.add('dragging');
      const dt = -dx * (down.t1 - down.t0) / V.w;
      setView(down.t0 + dt, down.t1 + dt);
      hideHits();
      schedule(false);
    });
    window.addEventListener('mouseup', () => {
      if (!down) return;
      const pane = down.pane;
      // The click that ends a drag selects nothing.
      if (down.moved) { pane.dragged = true; setTimeout(() => { pane.dragged = false; }, 0); }
      pane.plot.classList.remove('dragging');
      down = null;
      dragging = false;
      schedule(true);
    });
    // The axis: the wheel zooms, a drag picks the range to zoom to.
    const axis = $('#axis').parentElement;
    const brush = $('#brush');
    let brushing = null;
    axis.addEventListener('wheel', e => {
      e.preventDefault();
      zoom(Math.exp(e.deltaY * 0.002), timeAt(e.clientX - axis.getBoundingClientRect().left));
    }, { passive: false });
    axis.addEventListener('mousedown', e => {
      brushing = { x: e.clientX };
      e.preventDefault();
    });
    window.addEventListener('mousemove', e => {
      if (!brushing) return;
      const vr = view.getBoundingClientRect();
      const a = Math.min(brushing.x, e.clientX), b = Math.max(brushing.x, e.clientX);
      brush.style.display = 'block';
      brush.style.left = (a - vr.left) + 'px';
      brush.style.width = (b - a) + 'px';
    });
    window.addEventListener('mouseup', e => {
      if (!brushing) return;
      const left = axis.getBoundingClientRect().left;
      const a = Math.min(brushing.x, e.clientX) - left, b = Math.max(brushing.x, e.clientX) - left;
      brushing = null;
      brush.style.display = 'none';
      if (b - a > 4) { setView(timeAt(a), timeAt(b)); schedule(true); }
    });
    view.addEventListener('keydown', e => {
      if (e.target.tagName === 'INPUT') return;
      const span = V.t1 - V.t0;
      const keys = {
        '+': () => zoom(0.5), '=': () => zoom(0.5), '-': () => zoom(2), '_': () => zoom(2),
        '0': () => { fit(); schedule(true); },
        ArrowLeft: () => pan(-span * 0.15), ArrowRight: () => pan(span * 0.15),
      };
      const act = keys[e.key];
      if (act && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); act(); }
    });
    view.addEventListener('dblclick', e => {
      const rect = objects.plot.getBoundingClientRect();
      if (e.clientX >= rect.left) zoom(0.5, timeAt(e.clientX - rect.left));
    });
    $('#zoom-in').addEventListener('click', () => zoom(0.5));
    $('#zoom-out').addEventListener('click', () => zoom(2));
    $('#pan-left').addEventListener('click', () => pan(-(V.t1 - V.t0) * 0.25));
    $('#pan-right').addEventListener('click', () => pan((V.t1 - V.t0) * 0.25));
    $('#zoom-fit').addEventListener('click', () => { fit(); schedule(true); });
    // Details and the story list: a button names what to select.
    const choose = e => {
      const b = e.target.closest && e.target.closest('button[data-id]');
      if (!b) return;
      select(b.dataset.kind === 'delta' ? { type: 'delta', id: +b.dataset.id } : { type: 'mark', id: +b.dataset.id }, true);
    };
    $('#details').addEventListener('click', choose);
    $('#story-list').addEventListener('click', choose);
    window.addEventListener('resize', () => layout());
  }

  // ---- the page's state, for people's scripts and tests ------------------------------------
  function expose() {
    const plotLeft = () => objects.plot.getBoundingClientRect().left;
    Object.assign(api, {
      data: D,
      view: () => ({ t0: V.t0, t1: V.t1, width: V.w, left: plotLeft(), startMs: D.startMs }),
      setView: (t0, t1) => { setView(t0, t1); render(true); },
      fit: () => { fit(); render(true); },
      xOf: t => plotLeft() + X(t),
      timeOf: clientX => timeAt(clientX - plotLeft()),
      totals: () => ({ informers: M.informers.length, objects: M.lanes.length, deltas: M.dT.length, marks: M.marks.length }),
      informerRows: () => informers.rows.filter(r => !r.group).map(r => ({ id: r.inf.id, context: r.inf.context, resource: r.inf.resource })),
      objectRows: () => objects.rows.filter(r => !r.group).map(r => ({ id: r.lane.id, key: laneKey(r.lane), name: r.lane.name, namespace: r.lane.ns, context: M.informers[r.lane.inf].context, resource: M.informers[r.lane.inf].resource, path: r.lane.path, deltas: r.lane.deltas.length })),
      marks: kind => M.marks.filter(m => !kind || m.kind === kind).map(m => ({ id: m.id, kind: m.kind, t: m.t, d: m.d, label: m.label, context: M.informers[m.inf].context, resource: M.informers[m.inf].resource })),
      deltas: laneId => Array.from(M.lanes[laneId].deltas, i => ({ id: i, type: TYPES[M.dC[i]][0], t: M.dT[i], rv: M.rv[i], flags: M.dF[i], detail: M.dX[i] })),
      select: (type, id) => select({ type, id }, true),
      filter: f => {
        if (f.contexts) S.contexts = new Set(f.contexts);
        if (f.resources) S.resources = new Set(f.resources);
        if (f.namespaces) S.namespaces = new Set(f.namespaces);
        if (f.types) S.types = new Set(f.types);
        if (f.search !== undefined) S.search = f.search.toLowerCase();
        for (const box of document.querySelectorAll('#controls input[data-filter]')) {
          const set = { context: S.contexts, resource: S.resources, namespace: S.namespaces, type: S.types }[box.dataset.filter];
          box.checked = set.has(box.value);
        }
        $('#search').value = S.search;
        applyFilters();
      },
      revealLane: laneId => {
        const r = objects.rows.findIndex(row => row.lane && row.lane.id === laneId);
        if (r >= 0) { objects.root.scrollTop = r * OBJECT_ROW; render(true); }
        return r >= 0;
      },
    });
  }

  function summary() {
    if (!M.informers.length) {
      $('#summary').textContent = 'The recording holds no record of an informer: nothing to draw.';
      document.title = 'kwatch timeline \u2014 ' + D.title;
      return;
    }
    const count = k => M.marks.filter(m => m.kind === k).length;
    const n = (v, one, many) => v.toLocaleString('en') + ' ' + (v === 1 ? one : many);
    const ends = M.marks.filter(m => m.kind.startsWith('watch-') && m.kind !== 'watch-closed').length;
    const parts = [
      M.contexts.length ? n(M.contexts.length, 'context', 'contexts') : null,
      n(M.resources.length, 'resource', 'resources'),
      n(M.lanes.length, 'object', 'objects'),
      n(M.dT.length, 'delta', 'deltas'),
      n(count('relist'), 'relist', 'relists'),
      n(ends, 'watch ended early', 'watches ended early') + ' (' + n(count('watch-dropped'), 'connection lost', 'connections lost') + ')',
      n(count('stalled'), 'stall', 'stalls'),
      fullTime(0) + ' \u2192 ' + clock(D.end) + ' (' + duration(D.end) + ')',
    ];
    $('#summary').textContent = parts.filter(Boolean).join(' \u00b7 ');
    document.title = 'kwatch timeline \u2014 ' + D.title;
    $('#title').textContent = 'kwatch timeline \u2014 ' + D.title;
    let foot = 'Made by ' + D.generator + '. Times are UTC. Drag to pan; Ctrl and the wheel (or the wheel over the time axis, + and -) to zoom; drag on the time axis to zoom to a range; click a mark for its details.';
    if (D.diffsLeftOut) foot += ' ' + D.diffsLeftOut.toLocaleString('en') + ' diffs were left out to keep the page small: kwatch replay FILE --diff shows them.';
    $('#foot').textContent = foot;
  }

  async function main() {
    try {
      D = await load();
      if (!D || D.format !== 'kwatch-timeline/1') throw new Error('this page\u2019s data is not a kwatch timeline this page can read');
      M = build(D);
      controls();
      summary();
      fit();
      expose();
      wire();
      applyFilters();
      selectFromAddress();
      // From the navigation's start (the data's parse included) to the first drawing.
      api.loadMs = performance.now();
      api.scriptMs = performance.now() - started;
      document.documentElement.dataset.loadMs = api.loadMs.toFixed(1);
      api.ready = true;
    } catch (e) {
      api.error = String(e && e.message || e);
      const p = $('#summary');
      p.textContent = 'This page could not be drawn: ' + api.error;
      p.className = 'error';
    }
  }
  main();
})();
