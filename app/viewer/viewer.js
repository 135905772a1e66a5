// The replay viewer (app/viewer/page.html): plays a replay of moba/env/replay_file.py on a canvas, with the fog of
// war per team, a timeline with the win probability and the events, a panel per hero, a legend and an event log.
// The map, the units, the fog, the hero labels, the hero panel's rows and the event log's sentences are drawn by
// the renderer the play page shares (web/static/map.js, window.openfiveMap), which app/replay.py inlines before this.
//
// window.viewer is the page's state and controls, for people (the console) and for the browser tests:
// viewer.seek(t), play(), pause(), setSpeed(x), setFog("all" | "radiant" | "dire"), selectHero(slot), render();
// viewer.state {t, playing, speed, fog, record, selected}; viewer.drawn: the units drawn by the last render, each
// {id, team, type, hero, x, y, px, py} (px, py: canvas pixels); viewer.labels: the hero labels of the last render,
// each {hero, text, level, box: [left, top, right, bottom]} (canvas pixels; level: the record's hero row);
// viewer.toCanvas(x, y): map units to canvas pixels; viewer.colors: the fill colours of heroes, creeps and
// buildings per team; viewer.legend: the legend's items, each {kind, text, swatches: [{team, color, x, y}]} (where
// the swatch's canvas shows viewer.colors[color]); viewer.winProbability: per team, the [t, P(radiant wins)] points
// of the chart as that team's model sees it; viewer.chartPoint(t, p): where the chart draws that point, in the chart
// canvas's pixels; viewer.chartAxis: {title, caption, ticks: [{text, p, x, y}]} of the chart's probability axis.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const H = DATA.header;
  const R = DATA.records;
  const M = window.openfiveMap(H);
  const F = M.F, HF = M.HF, TYPE = M.TYPE, COLORS = M.COLORS, HERO_R = M.HERO_R, IS_BUILDING = M.IS_BUILDING;
  const BUILDING_EVENTS = M.BUILDING_EVENTS, GROUPS = M.GROUPS, LAYER = M.LAYER, fmt = M.fmt;
  const SIDES = H.teams; // ["radiant", "dire"]
  const END = R[R.length - 1].t;
  const SPEEDS = [0.5, 1, 2, 4, 8, 16, 32, 64];
  const FOGS = ["all"].concat(SIDES);
  const EVENT_LEAD_S = 2; // a click on an event jumps to this many seconds before it, to watch it happen
  const TELEPORT_UNITS = 600; // a unit that moved further between two records jumped (respawn, teleport, blink)

  const $ = (id) => document.getElementById(id);
  const canvas = $("map");
  const ctx = canvas.getContext("2d");
  const chart = $("chart");
  const cctx = chart.getContext("2d");
  const timeline = $("timeline");
  const state = { t: 0, playing: false, speed: 8, fog: "all", record: -1, selected: -1 };
  let size = 700; // map side in CSS pixels
  let dpr = window.devicePixelRatio || 1;
  let background = null; // the map without units, drawn once per size
  let chartBase = null; // the chart without the cursor
  let drawn = [];
  let labels = []; // the hero labels of the last render
  const idMaps = new Array(R.length); // per record: unit id -> row (built on first use)
  const order = new Array(R.length); // per record: its unit rows in drawing order

  // ---- time --------------------------------------------------------------------------------------------------------
  function recordAt(t) { // the last record at or before t
    let lo = 0, hi = R.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (R[mid].t <= t + 1e-9) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  function idMap(i) {
    if (!idMaps[i]) {
      const m = new Map();
      R[i].units.forEach((u) => m.set(u[F.id], u));
      idMaps[i] = m;
    }
    return idMaps[i];
  }

  function unitsInOrder(i) {
    if (!order[i]) order[i] = R[i].units.slice().sort((a, b) => LAYER(a[F.type]) - LAYER(b[F.type]));
    return order[i];
  }

  // ---- geometry ----------------------------------------------------------------------------------------------------
  function layout() { // the map as large as the window leaves room for, with the controls and the chart below it
    const avail = Math.min(window.innerHeight - 236, window.innerWidth - 440);
    size = Math.max(420, Math.min(900, Math.floor(avail)));
    dpr = window.devicePixelRatio || 1;
    for (const [c, w, h] of [[canvas, size, size], [chart, size, CHART_H]]) {
      c.style.width = w + "px";
      c.style.height = h + "px";
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    timeline.style.width = (size - CHART_LEFT) + "px"; // above the chart's time axis, right of its gutter
    timeline.style.marginLeft = CHART_LEFT + "px";
    $("keys").style.maxWidth = size + "px";
    fitLog();
    V = M.view(size, dpr);
    background = M.background(V, canvas);
    chartBase = drawChartBase();
  }

  let V = M.view(size, dpr); // the whole map, in the map canvas
  const sx = (x) => V.sx(x); // CSS pixels
  const sy = (y) => V.sy(y);
  const toCanvas = (x, y) => V.toCanvas(x, y);
  const offscreen = (like) => M.offscreen(like, dpr);
  const drawUnit = (g, u, px, py, ghost) => M.drawUnit(g, u, px, py, ghost, state.selected);
  const buildingSide = M.buildingSide;

  function render() {
    const i = recordAt(state.t);
    const a = R[i], j = Math.min(i + 1, R.length - 1), b = R[j];
    const f = b.t > a.t ? Math.max(0, Math.min(1, (state.t - a.t) / (b.t - a.t))) : 0;
    const next = idMap(j);
    const team = SIDES.indexOf(state.fog); // -1: everything
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(background, 0, 0);
    if (team >= 0) M.drawFog(ctx, canvas, V, a.units, team);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawn = [];
    const where = new Map();
    const heroes = [], buildings = [];
    for (const u of unitsInOrder(i)) {
      let x = u[F.x], y = u[F.y];
      const v = next.get(u[F.id]);
      if (v && u[F.alive] && v[F.alive] && Math.hypot(v[F.x] - x, v[F.y] - y) < TELEPORT_UNITS) {
        x += (v[F.x] - x) * f;
        y += (v[F.y] - y) * f;
      }
      const building = IS_BUILDING.has(u[F.type]);
      if (!u[F.alive] && !building) continue; // dead heroes are shown in the panel
      const visible = team < 0 || M.visibleTo(u, team);
      if (!visible && !building) continue;
      drawUnit(ctx, u, sx(x), sy(y), !visible);
      where.set(u[F.id], [x, y]);
      if (building) {
        const s = buildingSide(u[F.type]);
        buildings.push([sx(x) - s / 2, sy(y) - s / 2 - 7, sx(x) + s / 2, sy(y) + s / 2]);
      }
      if (u[F.type] === TYPE.hero) heroes.push({ slot: u[F.hero], px: sx(x), py: sy(y) });
      if (visible && u[F.alive]) {
        const [px, py] = toCanvas(x, y);
        drawn.push({ id: u[F.id], team: u[F.team], type: H.unit_types[u[F.type]], hero: u[F.hero], x: x, y: y,
          px: px, py: py });
      }
    }
    drawDecision(a, where);
    const placed = M.placeLabels(ctx, a, heroes, buildings, size, state.selected);
    M.drawLabels(ctx, placed, state.selected);
    labels = placed.map((l) => ({ hero: l.slot, text: l.text, level: l.level,
      box: l.box.map((v) => Math.round(v * dpr)) }));
    canvas.dataset.time = state.t.toFixed(2);
    canvas.dataset.fog = state.fog;
    canvas.dataset.record = String(i);
    if (i !== state.record) {
      state.record = i;
      updatePanel(a);
      updateLog();
    }
    $("clock").textContent = fmt(state.t) + " / " + fmt(END);
    if (document.activeElement !== timeline) timeline.value = String(state.t);
    drawChartCursor();
  }

  function drawDecision(rec, where) { // the selected model hero's chosen action and its target
    if (state.selected < 0 || !rec.model) return;
    const d = rec.model[H.heroes[state.selected].agent_id];
    const me = where.get(heroUnitId(rec, state.selected));
    if (!d || !me || d.target === null || !where.has(d.target)) return;
    const [x0, y0] = me, [x1, y1] = where.get(d.target);
    ctx.strokeStyle = COLORS.selected;
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(sx(x0), sy(y0));
    ctx.lineTo(sx(x1), sy(y1));
    ctx.stroke();
    ctx.setLineDash([]);
  }

  function heroUnitId(rec, slot) {
    const u = rec.units.find((v) => v[F.type] === TYPE.hero && v[F.hero] === slot);
    return u ? u[F.id] : -1;
  }

  // ---- the hero panel ----------------------------------------------------------------------------------------------
  let panel = null; // the shared hero panel (web/static/map.js): {rows, update(rec)}

  function buildPanel() {
    panel = M.heroPanel(document.querySelector("#heroes tbody"),
      (slot) => selectHero(state.selected === slot ? -1 : slot));
  }

  function fitLog() { // the event log fills the window's height below the hero panel
    const log = $("log");
    log.style.maxHeight = Math.max(200, window.innerHeight - log.getBoundingClientRect().top - 16) + "px";
  }

  function updatePanel(rec) {
    panel.update(rec);
    fitLog(); // the panel's height changes with the items
  }

  function selectHero(slot) {
    state.selected = slot;
    panel.rows.forEach((p, k) => p.tr.classList.toggle("selected", k === slot));
    render();
  }

  // ---- the event log -----------------------------------------------------------------------------------------------
  const events = [];
  const logItems = [];
  let currentItem = null;

  function buildLog() {
    const group = M.eventGroups();
    const log = $("log");
    const frag = document.createDocumentFragment();
    for (const rec of R) {
      for (const e of rec.events) {
        const [text, side] = M.describe(e);
        const li = document.createElement("li");
        li.className = group[e.type] + (side ? " team-" + SIDES.indexOf(side) : "");
        li.dataset.t = e.t;
        li.dataset.type = e.type;
        const when = document.createElement("span");
        when.className = "when";
        when.textContent = fmt(e.t);
        li.appendChild(when);
        li.appendChild(document.createTextNode(text));
        frag.appendChild(li);
        events.push(e);
        logItems.push(li);
      }
    }
    log.appendChild(frag);
    log.addEventListener("click", (ev) => {
      const li = ev.target.closest("li");
      if (li) seek(parseFloat(li.dataset.t) - EVENT_LEAD_S);
    });
    const filters = $("filters");
    for (const [cls, label, types, on] of GROUPS) {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = on;
      box.id = "filter-" + cls;
      log.classList.toggle("hide-" + cls, !on);
      box.addEventListener("change", () => {
        log.classList.toggle("hide-" + cls, !box.checked);
        updateLog();
      });
      const lab = document.createElement("label");
      lab.appendChild(box);
      lab.appendChild(document.createTextNode(" " + label + " (" + events.filter((e) => types.includes(e.type)).length
        + ")"));
      filters.appendChild(lab);
    }
  }

  function updateLog() { // marks the latest shown event at or before now, and scrolls the log to it
    let lo = 0, hi = events.length - 1, k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid].t <= state.t + 1e-9) { k = mid; lo = mid + 1; } else hi = mid - 1;
    }
    while (k >= 0 && logItems[k].offsetParent === null) k--; // the latest one the filters show
    const li = k >= 0 ? logItems[k] : null;
    if (li === currentItem) return;
    if (currentItem) currentItem.classList.remove("current");
    currentItem = li;
    if (li) {
      li.classList.add("current");
      li.scrollIntoView({ block: "nearest" });
    }
  }

  // ---- the chart under the timeline: win probability (Five fig. 9) and events -----------------------------------
  function winSeries() { // per team whose heroes a model plays: [t, P(radiant wins) as that team's model sees it]
    const out = [[], []];
    for (const rec of R) {
      if (!rec.model) continue;
      for (let team = 0; team < 2; team++) {
        const ps = H.heroes.filter((h) => h.team === SIDES[team]).map((h) => rec.model[h.agent_id])
          .filter((d) => d && d.win_prob !== null).map((d) => d.win_prob);
        if (ps.length) {
          const p = ps.reduce((s, x) => s + x, 0) / ps.length;
          out[team].push([rec.t, team === 0 ? p : 1 - p]);
        }
      }
    }
    return out;
  }

  const WIN = winSeries();
  const HAS_WIN = WIN[0].length + WIN[1].length > 0;

  // the chart: a gutter on the left for the probability axis, the events' marks along the top, the curves below
  const CHART_H = 100, CHART_LEFT = 40, CHART_TOP = 22, CHART_BOTTOM = 8;
  const CHART_TICKS = [1, 0.5, 0];
  const chartX = (t) => CHART_LEFT + t / Math.max(END, 1e-9) * (size - CHART_LEFT); // CSS pixels
  const chartY = (p) => CHART_TOP + (1 - p) * (CHART_H - CHART_TOP - CHART_BOTTOM);
  let chartAxis = null; // what the chart's axis says: {title, ticks: [{text, p, x, y}]} (chart pixels)

  function drawChartBase() {
    const [off, g] = offscreen(chart);
    const w = size, h = CHART_H;
    const [cx, cy] = [chartX, chartY];
    g.fillStyle = "#1b1f25";
    g.fillRect(0, 0, w, h);
    g.font = "10px system-ui, sans-serif";
    g.textBaseline = "middle";
    g.fillStyle = "#7d8794";
    g.textAlign = "right";
    g.fillText("events", CHART_LEFT - 4, 7);
    for (const e of events) { // kills and buildings as marks along the top, in the colour of the team that scored
      const building = BUILDING_EVENTS.includes(e.type);
      if (e.type !== "kill" && !building) continue;
      g.fillStyle = COLORS.hero[building ? 1 - e.team : SIDES.indexOf(H.heroes[e.hero].team)];
      g.fillRect(cx(e.t) - 1, building ? 1 : 4, building ? 3 : 2, building ? 11 : 6);
    }
    g.strokeStyle = "#2c323b";
    g.beginPath();
    g.moveTo(CHART_LEFT, CHART_TOP - 6.5); g.lineTo(w, CHART_TOP - 6.5); // under the events' marks
    g.stroke();
    if (!HAS_WIN) {
      g.fillStyle = "#7d8794";
      g.textAlign = "left";
      g.fillText("no win probability in this replay (no model plays in it)", CHART_LEFT + 6, cy(0.5));
      chartAxis = { title: null, ticks: [] };
      g.textBaseline = "alphabetic";
      return off;
    }
    const ticks = [];
    for (const p of CHART_TICKS) { // the probability axis: a grid line and its value in the gutter
      g.strokeStyle = p === 0.5 ? "#3a414b" : "#272c33";
      g.beginPath();
      g.moveTo(CHART_LEFT, Math.round(cy(p)) + 0.5); g.lineTo(w, Math.round(cy(p)) + 0.5);
      g.stroke();
      g.fillStyle = "#8d97a5";
      g.textAlign = "right";
      const text = String(p);
      g.fillText(text, CHART_LEFT - 5, cy(p));
      ticks.push({ text: text, p: p, x: Math.round((CHART_LEFT - 5) * dpr), y: Math.round(cy(p) * dpr) });
    }
    g.strokeStyle = "#3a414b";
    g.beginPath();
    g.moveTo(CHART_LEFT - 0.5, CHART_TOP - 2); g.lineTo(CHART_LEFT - 0.5, cy(0) + 2);
    g.stroke();
    WIN.forEach((series, team) => {
      if (!series.length) return;
      g.strokeStyle = COLORS.hero[team];
      g.lineWidth = 2;
      g.beginPath();
      series.forEach(([t, p], k) => (k ? g.lineTo(cx(t), cy(p)) : g.moveTo(cx(t), cy(p))));
      g.stroke();
    });
    g.lineWidth = 1;
    const title = "P(radiant wins)";
    const seenBy = " as " + WIN.map((s, k) => (s.length ? SIDES[k] + "'s model" : null)).filter(Boolean)
      .join(" and ") + " sees it";
    g.textAlign = "left";
    g.font = "600 10px system-ui, sans-serif";
    const tw = g.measureText(title).width;
    g.font = "10px system-ui, sans-serif";
    const sw = g.measureText(seenBy).width;
    g.fillStyle = "rgba(27,31,37,0.8)";
    g.fillRect(CHART_LEFT + 3, CHART_TOP - 5, tw + sw + 6, 12);
    g.fillStyle = "#c4ccd6";
    g.font = "600 10px system-ui, sans-serif";
    g.fillText(title, CHART_LEFT + 6, CHART_TOP + 1);
    g.fillStyle = "#7d8794";
    g.font = "10px system-ui, sans-serif";
    g.fillText(seenBy, CHART_LEFT + 6 + tw, CHART_TOP + 1);
    g.textBaseline = "alphabetic";
    chartAxis = { title: title, caption: seenBy.trim(), ticks: ticks };
    return off;
  }

  function drawChartCursor() {
    cctx.setTransform(1, 0, 0, 1, 0, 0);
    cctx.drawImage(chartBase, 0, 0);
    cctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const x = chartX(state.t);
    cctx.strokeStyle = "#f3c969";
    cctx.lineWidth = 1;
    cctx.beginPath();
    cctx.moveTo(x, 0); cctx.lineTo(x, CHART_H);
    cctx.stroke();
  }

  // ---- the legend: every shape the map and the chart draw, drawn by the same code -------------------------------
  const LEGEND = [ // [kind, label, unit type or null, teams drawn (null: none), state]
    ["hero", "hero (name, level; bars: health, mana)", "hero", [0, 1], "alive"],
    ["selected", "selected hero and its action's target", null, null, "selected"],
    ["creep_melee", "melee creep", "creep_melee", [0, 1], "alive"],
    ["creep_ranged", "ranged creep", "creep_ranged", [0, 1], "alive"],
    ["ward", "ward", "ward", [0, 1], "alive"],
    ["tower", "tower", "tower", [0, 1], "alive"],
    ["barracks", "barracks", "barracks_melee", [0, 1], "alive"],
    ["shrine", "shrine", "shrine", [0, 1], "alive"],
    ["ancient", "ancient", "ancient", [0, 1], "alive"],
    ["fountain", "fountain", "fountain", [0, 1], "alive"],
    ["fogged", "building out of the team's sight", "tower", [0, 1], "ghost"],
    ["destroyed", "destroyed building", "tower", [0], "dead"],
    ["kill_mark", "chart: a kill", null, [0, 1], "kill"],
    ["building_mark", "chart: a building destroyed", null, [0, 1], "building"],
  ];
  const SWATCH_W = 22, SWATCH_H = 28; // CSS pixels per team drawn
  let legend = [];

  function legendUnit(type, team, alive) { // a unit row to draw in the legend: full health and mana
    const u = new Array(H.unit_fields.length).fill(0);
    u[F.type] = TYPE[type];
    u[F.team] = team;
    u[F.hero] = type === "hero" ? -2 : -1; // no slot: never the selected hero
    u[F.alive] = alive ? 1 : 0;
    if (type === "hero") [u[F.hp], u[F.max_hp], u[F.mana], u[F.max_mana]] = [1, 1, 1, 1];
    return u;
  }

  function buildLegend() {
    const box = $("legend");
    const teams = document.createElement("span");
    teams.className = "legend-item";
    teams.dataset.kind = "teams";
    teams.innerHTML = "colours: <b class=\"team-0\">radiant</b> <b class=\"team-1\">dire</b>";
    box.appendChild(teams);
    legend = [{ kind: "teams", text: teams.textContent, swatches: [] }];
    for (const [kind, text, type, sides, how] of LEGEND) {
      const item = document.createElement("span");
      item.className = "legend-item";
      item.dataset.kind = kind;
      const c = document.createElement("canvas");
      const n = sides ? sides.length : 2;
      c.style.width = n * SWATCH_W + "px";
      c.style.height = SWATCH_H + "px";
      c.width = Math.round(n * SWATCH_W * dpr);
      c.height = Math.round(SWATCH_H * dpr);
      const g = c.getContext("2d");
      g.scale(dpr, dpr);
      const swatches = [];
      const cy = type === "hero" ? 18 : SWATCH_H / 2;
      if (how === "selected") {
        g.fillStyle = COLORS.hero[0];
        g.beginPath();
        g.arc(10, cy, HERO_R, 0, 2 * Math.PI);
        g.fill();
        g.strokeStyle = COLORS.selected;
        g.lineWidth = 3;
        g.stroke();
        g.lineWidth = 1.5;
        g.setLineDash([4, 3]);
        g.beginPath();
        g.moveTo(20, cy); g.lineTo(2 * SWATCH_W - 2, cy);
        g.stroke();
        g.setLineDash([]);
        swatches.push({ team: 0, color: "selected", x: Math.floor((10 - HERO_R - 0.5) * dpr),
          y: Math.round(cy * dpr) });
      } else if (how === "kill" || how === "building") {
        sides.forEach((team) => {
          const x = team * SWATCH_W + SWATCH_W / 2;
          g.fillStyle = COLORS.hero[team];
          if (how === "building") g.fillRect(x - 1, 8, 3, 11); else g.fillRect(x - 1, 11, 2, 6);
          swatches.push({ team: team, color: "hero", x: Math.round(x * dpr), y: Math.round(SWATCH_H / 2 * dpr) });
        });
      } else {
        sides.forEach((team, k) => {
          const x = k * SWATCH_W + SWATCH_W / 2;
          drawUnit(g, legendUnit(type, team, how !== "dead"), x, cy, how === "ghost");
          const color = how === "dead" ? "rubble" : type === "hero" ? "hero" : type.startsWith("creep") ? "creep"
            : type === "ward" ? "ward" : "building";
          const edge = how === "ghost" ? buildingSide(TYPE[type]) / 2 : 0; // an outline: its edge
          swatches.push({ team: team, color: color, x: Math.floor((x - edge) * dpr), y: Math.round(cy * dpr) });
        });
      }
      item.appendChild(c);
      item.appendChild(document.createTextNode(text));
      box.appendChild(item);
      legend.push({ kind: kind, text: text, swatches: swatches });
    }
  }

  // ---- controls ----------------------------------------------------------------------------------------------------
  function seek(t) {
    state.t = Math.max(0, Math.min(END, t));
    render();
  }

  function play() {
    if (state.t >= END) state.t = 0;
    state.playing = true;
    $("play").innerHTML = "&#10074;&#10074;";
    last = performance.now();
    requestAnimationFrame(tick);
  }

  function pause() {
    state.playing = false;
    $("play").innerHTML = "&#9654;";
  }

  function setSpeed(x) {
    if (!SPEEDS.includes(x)) throw new Error("speed must be one of " + SPEEDS.join(", ") + ", got " + x);
    state.speed = x;
    $("speed").value = String(x);
  }

  function setFog(fog) {
    if (!FOGS.includes(fog)) throw new Error("fog must be one of " + FOGS.join(", ") + ", got " + fog);
    state.fog = fog;
    for (const f of FOGS) $("fog-" + f).classList.toggle("on", f === fog);
    render();
  }

  let last = 0;

  function tick(now) {
    if (!state.playing) return;
    state.t = Math.min(END, state.t + (now - last) / 1000 * state.speed);
    last = now;
    render();
    if (state.t >= END) pause(); else requestAnimationFrame(tick);
  }

  function bind() {
    $("play").addEventListener("click", () => (state.playing ? pause() : play()));
    const sel = $("speed");
    for (const x of SPEEDS) {
      const o = document.createElement("option");
      o.value = String(x);
      o.textContent = x + "x";
      sel.appendChild(o);
    }
    sel.value = String(state.speed);
    sel.addEventListener("change", () => setSpeed(parseFloat(sel.value)));
    for (const f of FOGS) $("fog-" + f).addEventListener("click", () => setFog(f));
    timeline.max = String(END);
    timeline.addEventListener("input", () => seek(parseFloat(timeline.value)));
    const chartSeek = (ev) => seek((ev.clientX - chart.getBoundingClientRect().left - CHART_LEFT)
      / (size - CHART_LEFT) * END);
    chart.addEventListener("mousedown", (ev) => {
      chartSeek(ev);
      const move = (e) => chartSeek(e);
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", () => window.removeEventListener("mousemove", move), { once: true });
    });
    canvas.addEventListener("click", (ev) => { // click a hero on the map to select it
      const r = canvas.getBoundingClientRect();
      const px = (ev.clientX - r.left) * dpr, py = (ev.clientY - r.top) * dpr;
      const hit = drawn.filter((d) => d.type === "hero")
        .find((d) => Math.hypot(d.px - px, d.py - py) <= 10 * dpr);
      selectHero(hit ? hit.hero : -1);
    });
    window.addEventListener("keydown", onKey);
    window.addEventListener("resize", () => { layout(); render(); });
  }

  function onKey(ev) {
    if (ev.target.tagName === "SELECT" || (ev.target.tagName === "INPUT" && ev.target.type === "checkbox")) return;
    const step = ev.shiftKey ? 30 : 5;
    const speedIndex = SPEEDS.indexOf(state.speed);
    const keys = {
      " ": () => (state.playing ? pause() : play()),
      ArrowRight: () => seek(state.t + step),
      ArrowLeft: () => seek(state.t - step),
      ArrowUp: () => setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, speedIndex + 1)]),
      ArrowDown: () => setSpeed(SPEEDS[Math.max(0, speedIndex - 1)]),
      Home: () => seek(0),
      End: () => seek(END),
      "1": () => setFog("all"),
      "2": () => setFog(SIDES[0]),
      "3": () => setFog(SIDES[1]),
      f: () => setFog(FOGS[(FOGS.indexOf(state.fog) + 1) % FOGS.length]),
      ",": () => { // the previous record (this one's start when between two)
        const i = recordAt(state.t);
        seek(R[R[i].t < state.t - 1e-9 ? i : Math.max(0, i - 1)].t);
      },
      ".": () => seek(R[Math.min(R.length - 1, recordAt(state.t) + 1)].t),
    };
    const action = keys[ev.key];
    if (!action) return;
    ev.preventDefault();
    action();
  }

  // ---- start -------------------------------------------------------------------------------------------------------
  const endRec = R[R.length - 1].end;
  $("title").textContent = H.mode + ": radiant (" + H.agents.radiant + ") vs dire (" + H.agents.dire + ")"
    + (H.seed === null || H.seed === undefined ? "" : ", seed " + H.seed);
  $("result").textContent = endRec ? (endRec.winner === "none" ? "no winner: time limit at " + fmt(END)
    : endRec.winner + " wins at " + fmt(END)) : "replay ends at " + fmt(END) + " (game unfinished)";
  buildPanel();
  buildLog();
  bind();
  buildLegend();
  layout();
  setFog("all");
  window.viewer = {
    header: H, records: R, colors: COLORS, state: state, events: events,
    get drawn() { return drawn; },
    get labels() { return labels; }, // per hero drawn: {hero, text, level, box: [left, top, right, bottom]}
    get legend() { return legend; }, // per legend item: {kind, text, swatches: [{team, color, x, y}]}
    get chartAxis() { return chartAxis; },
    seek: seek, play: play, pause: pause, setSpeed: setSpeed, setFog: setFog, selectHero: selectHero,
    render: render, toCanvas: toCanvas, recordAt: recordAt,
    winProbability: WIN, // per team: [t, P(radiant wins)] as that team's model sees it
    chartPoint: (t, p) => [Math.round(chartX(t) * dpr), Math.round(chartY(p) * dpr)], // in the chart's pixels
  };
  document.body.dataset.ready = "1";
})();
