// The replay viewer (app/viewer/page.html): plays a replay of moba/env/replay_file.py on a canvas, with the fog of
// war per team, a timeline with the win probability and the events, a panel per hero, a legend and an event log.
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
  const F = index(H.unit_fields);
  const HF = index(H.hero_fields);
  const TYPE = index(H.unit_types);
  const SIDES = H.teams; // ["radiant", "dire"]
  const MAP = H.map_size;
  const END = R[R.length - 1].t;
  const SPEEDS = [0.5, 1, 2, 4, 8, 16, 32, 64];
  const FOGS = ["all"].concat(SIDES);
  const EVENT_LEAD_S = 2; // a click on an event jumps to this many seconds before it, to watch it happen
  const TELEPORT_UNITS = 600; // a unit that moved further between two records jumped (respawn, teleport, blink)
  const COLORS = {
    hero: ["#38c172", "#e3342f"],
    creep: ["#9be3b4", "#f5a3a0"],
    building: ["#1d7a46", "#a11f1b"],
    ward: ["#f3c969", "#f3c969"],
    rubble: "#4a4f57",
    selected: "#f3c969",
  };
  const HERO_R = 8; // a hero's disc's radius in CSS pixels
  const BUILDING_EVENTS = ["tower", "barracks", "shrine", "ancient"];
  const GROUPS = [ // event log filters: [class, label, event types, shown at first]
    ["kills", "kills & deaths", ["kill", "death"], true],
    ["buildings", "buildings", BUILDING_EVENTS, true],
    ["buybacks", "buybacks", ["buyback"], true],
    ["purchases", "purchases", ["purchase"], false],
    ["casts", "casts", ["cast"], false],
    ["farm", "last hits & denies", ["last_hit", "deny"], false],
  ];
  const IS_BUILDING = new Set(["tower", "barracks_melee", "barracks_ranged", "ancient", "shrine", "fountain"]
    .map((n) => TYPE[n]));
  // drawing order: buildings under wards under creeps under heroes
  const LAYER = (type) => type === TYPE.hero ? 3 : IS_BUILDING.has(type) ? 0 : type === TYPE.ward ? 1 : 2;

  function index(names) {
    const out = {};
    names.forEach((n, i) => { out[n] = i; });
    return out;
  }

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
  let fogLayer = null; // [canvas, context]: the fog of war's darkness, drawn again every frame
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

  function fmt(t) {
    const s = Math.max(0, Math.floor(t + 1e-6));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
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
    background = drawBackground();
    chartBase = drawChartBase();
  }

  const sx = (x) => x / MAP * size; // CSS pixels
  const sy = (y) => size - y / MAP * size;
  const toCanvas = (x, y) => [Math.round(sx(x) * dpr), Math.round(sy(y) * dpr)];

  // ---- the map -----------------------------------------------------------------------------------------------------
  function offscreen(like) { // a canvas of the size of `like`, its context drawing in CSS pixels
    const off = document.createElement("canvas");
    off.width = like.width;
    off.height = like.height;
    const g = off.getContext("2d");
    g.scale(dpr, dpr);
    return [off, g];
  }

  function drawBackground() {
    const [off, g] = offscreen(canvas);
    const rows = H.map.terrain, river = H.map.river, n = rows.length, cell = size / n;
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        g.fillStyle = rows[r][c] === "0" ? "#1e2a1a" : river[r][c] === "1" ? "#2d5a74" : "#3e4d33";
        g.fillRect(c * cell, r * cell, cell + 0.5, cell + 0.5);
      }
    }
    // the bases: a team-tinted disc around each fountain and ancient
    for (const b of H.map.buildings) {
      if (b.type === "ancient") {
        g.fillStyle = b.team === 0 ? "rgba(56,193,114,0.16)" : "rgba(227,52,47,0.16)";
        g.beginPath();
        g.arc(sx(b.x), sy(b.y), 1500 / MAP * size, 0, 2 * Math.PI);
        g.fill();
      }
    }
    g.strokeStyle = "rgba(196,170,120,0.55)";
    g.lineWidth = Math.max(3, 220 / MAP * size);
    g.lineJoin = "round";
    for (const path of Object.values(H.map.lanes)) {
      g.beginPath();
      path.forEach(([x, y], k) => (k ? g.lineTo(sx(x), sy(y)) : g.moveTo(sx(x), sy(y))));
      g.stroke();
    }
    return off;
  }

  function visibleTo(u, team) { // is unit row u visible to team (0, 1)?
    return u[F.team] === team || (u[F.seen_by] & (1 << team)) !== 0;
  }

  function drawFog(rec, team) {
    const g = ctx;
    g.save();
    if (!fogLayer || fogLayer[0].width !== canvas.width) fogLayer = offscreen(canvas);
    const [fog, f] = fogLayer;
    f.globalCompositeOperation = "copy";
    f.fillStyle = "rgba(5,7,10,0.7)";
    f.fillRect(0, 0, size, size);
    f.globalCompositeOperation = "destination-out";
    f.fillStyle = "#000";
    for (const u of rec.units) {
      if (u[F.team] === team && u[F.alive] && u[F.vision] > 0) {
        f.beginPath();
        f.arc(sx(u[F.x]), sy(u[F.y]), u[F.vision] / MAP * size, 0, 2 * Math.PI);
        f.fill();
      }
    }
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(fog, 0, 0);
    g.restore();
  }

  function bar(g, x, y, w, frac, color) {
    g.fillStyle = "rgba(0,0,0,0.7)";
    g.fillRect(x - w / 2 - 1, y - 1, w + 2, 5);
    g.fillStyle = color;
    g.fillRect(x - w / 2, y, w * Math.max(0, Math.min(1, frac)), 3);
  }

  function buildingSide(type) { // a building's side in CSS pixels
    return type === TYPE.ancient ? 18 : type === TYPE.fountain ? 16 : type === TYPE.tower ? 11 : type === TYPE.shrine
      ? 9 : 10;
  }

  // draws unit row u at (px, py) CSS pixels on context g; ghost: a building out of the fog team's sight (its outline)
  function drawUnit(g, u, px, py, ghost) {
    const type = u[F.type], team = u[F.team];
    const alive = u[F.alive] === 1;
    const hpFrac = u[F.max_hp] > 0 ? u[F.hp] / u[F.max_hp] : 0;
    if (IS_BUILDING.has(type)) {
      const s = buildingSide(type);
      if (!alive) {
        g.strokeStyle = COLORS.rubble;
        g.lineWidth = 2;
        g.beginPath();
        g.moveTo(px - s / 2, py - s / 2); g.lineTo(px + s / 2, py + s / 2);
        g.moveTo(px + s / 2, py - s / 2); g.lineTo(px - s / 2, py + s / 2);
        g.stroke();
        return;
      }
      if (ghost) {
        g.strokeStyle = COLORS.building[team];
        g.lineWidth = 1.5;
        g.strokeRect(px - s / 2, py - s / 2, s, s);
        return;
      }
      g.fillStyle = COLORS.building[team];
      if (type === TYPE.fountain || type === TYPE.ancient) {
        g.beginPath();
        g.moveTo(px, py - s / 2); g.lineTo(px + s / 2, py); g.lineTo(px, py + s / 2); g.lineTo(px - s / 2, py);
        g.closePath();
        g.fill();
      } else {
        g.fillRect(px - s / 2, py - s / 2, s, s);
      }
      g.strokeStyle = "rgba(0,0,0,0.8)";
      g.lineWidth = 1;
      g.strokeRect(px - s / 2, py - s / 2, s, s);
      if (type !== TYPE.fountain && u[F.max_hp] > 0) {
        bar(g, px, py - s / 2 - 6, Math.max(16, s + 6), hpFrac, hpFrac > 0.5 ? "#7ed957" : "#f0b03c");
      }
      return;
    }
    if (type === TYPE.hero) {
      const selected = u[F.hero] === state.selected;
      g.fillStyle = COLORS.hero[team];
      g.beginPath();
      g.arc(px, py, HERO_R, 0, 2 * Math.PI);
      g.fill();
      g.strokeStyle = selected ? COLORS.selected : "#ffffff";
      g.lineWidth = selected ? 3 : 1.5;
      g.stroke();
      if (u[F.max_hp] > 0) bar(g, px, py - HERO_R - 8, 28, hpFrac, team === 0 ? "#4be08a" : "#ff5b55");
      if (u[F.max_mana] > 0) {
        g.fillStyle = "#3d8ef0";
        g.fillRect(px - 14, py - HERO_R - 4, 28 * Math.max(0, Math.min(1, u[F.mana] / u[F.max_mana])), 2);
      }
      return;
    }
    if (type === TYPE.ward) {
      g.fillStyle = COLORS.ward[team];
      g.strokeStyle = COLORS.hero[team];
      g.lineWidth = 1.5;
      g.beginPath();
      g.arc(px, py, 3.5, 0, 2 * Math.PI);
      g.fill();
      g.stroke();
      return;
    }
    g.fillStyle = COLORS.creep[team]; // creeps: melee a circle, ranged a triangle
    g.beginPath();
    if (type === TYPE.creep_ranged) {
      g.moveTo(px, py - 4); g.lineTo(px + 4, py + 3); g.lineTo(px - 4, py + 3); g.closePath();
    } else {
      g.arc(px, py, 3.2, 0, 2 * Math.PI);
    }
    g.fill();
  }

  // ---- hero labels: name and level, inside the map, clear of each other and of the heroes ----------------------
  // A hero's label goes to the first of these places (offsets of its centre from the hero's, in CSS pixels; "side"
  // ones beside the hero by half the label's width) where it covers no other label and no hero, and if there is
  // none, where it covers the least; every place is moved inside the map.
  const LABEL_H = 13, LABEL_FONT = "11px system-ui, sans-serif";
  const LABEL_PLACES = [[0, -25], [0, 17], [1, 0], [-1, 0]];
  for (let k = 1; k <= 4; k++) LABEL_PLACES.push([0, -25 - k * LABEL_H], [0, 17 + k * LABEL_H]);

  function heroBox(px, py) { // a hero's disc and its bars: [left, top, right, bottom]
    return [px - 15, py - HERO_R - 10, px + 15, py + HERO_R + 1];
  }

  function overlap(a, b) {
    return Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]))
      * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  }

  function heroLevel(rec, slot) { // the hero's level at this record (its row in the record's heroes, as in the panel)
    const row = rec.heroes.find((h) => h[HF.slot] === slot);
    return row ? row[HF.level] : null;
  }

  // heroes: [{slot, px, py}] in CSS pixels; obstacles: boxes a label should rather not cover (the buildings)
  function placeLabels(g, rec, heroes, obstacles) {
    g.font = LABEL_FONT;
    const bodies = heroes.map((h) => heroBox(h.px, h.py));
    const placed = [];
    const selectedFirst = heroes.filter((h) => h.slot === state.selected)
      .concat(heroes.filter((h) => h.slot !== state.selected));
    for (const h of selectedFirst) {
      const level = heroLevel(rec, h.slot);
      const text = H.heroes[h.slot].hero + " lv" + (level === null ? "?" : level);
      const w = Math.ceil(g.measureText(text).width) + 4;
      let best = null, bestCost = Infinity;
      for (const [side, dy] of LABEL_PLACES) {
        const cx = Math.max(1 + w / 2, Math.min(size - 1 - w / 2, h.px + side * (16 + w / 2)));
        const cy = Math.max(1 + LABEL_H / 2, Math.min(size - 1 - LABEL_H / 2, h.py + dy));
        const box = [cx - w / 2, cy - LABEL_H / 2, cx + w / 2, cy + LABEL_H / 2];
        let cost = 0;
        for (const b of placed) cost += 4 * overlap(box, b.box);
        for (const b of bodies) cost += 2 * overlap(box, b);
        for (const b of obstacles) cost += 0.25 * overlap(box, b);
        if (cost < bestCost - 1e-9) { best = box; bestCost = cost; }
        if (cost === 0) break;
      }
      placed.push({ slot: h.slot, text: text, level: level, box: best, px: h.px, py: h.py });
    }
    return placed;
  }

  function drawLabels(g, placed) {
    g.font = LABEL_FONT;
    g.textAlign = "center";
    g.textBaseline = "middle";
    for (const l of placed) {
      const [x0, y0, x1, y1] = l.box, cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
      const nx = Math.max(x0, Math.min(x1, l.px)), ny = Math.max(y0, Math.min(y1, l.py));
      const d = Math.hypot(nx - l.px, ny - l.py);
      if (d > 2 * HERO_R + 6) { // far from its hero: a line from the hero's disc to it
        g.strokeStyle = "rgba(255,255,255,0.55)";
        g.lineWidth = 1;
        g.beginPath();
        g.moveTo(l.px + (nx - l.px) / d * HERO_R, l.py + (ny - l.py) / d * HERO_R);
        g.lineTo(nx, ny);
        g.stroke();
      }
      g.fillStyle = "rgba(10,12,16,0.62)";
      g.fillRect(x0, y0, x1 - x0, y1 - y0);
      g.fillStyle = l.slot === state.selected ? COLORS.selected : "#ffffff";
      g.fillText(l.text, cx, cy + 0.5);
    }
    g.textBaseline = "alphabetic";
  }

  function render() {
    const i = recordAt(state.t);
    const a = R[i], j = Math.min(i + 1, R.length - 1), b = R[j];
    const f = b.t > a.t ? Math.max(0, Math.min(1, (state.t - a.t) / (b.t - a.t))) : 0;
    const next = idMap(j);
    const team = SIDES.indexOf(state.fog); // -1: everything
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(background, 0, 0);
    if (team >= 0) drawFog(a, team);
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
      const visible = team < 0 || visibleTo(u, team);
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
    const placed = placeLabels(ctx, a, heroes, buildings);
    drawLabels(ctx, placed);
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
  const panelRows = [];

  function buildPanel() {
    const body = document.querySelector("#heroes tbody");
    H.heroes.forEach((h) => {
      const tr = document.createElement("tr");
      tr.dataset.slot = h.slot;
      const cells = {};
      for (const k of ["hero", "level", "gold", "kda", "farm", "items", "status"]) {
        const td = document.createElement("td");
        td.className = k;
        tr.appendChild(td);
        cells[k] = td;
      }
      cells.hero.textContent = h.hero;
      cells.hero.className = "hero team-" + SIDES.indexOf(h.team);
      cells.hero.title = h.agent_id + " (" + H.agents[h.team] + ")";
      tr.addEventListener("click", () => selectHero(state.selected === h.slot ? -1 : h.slot));
      body.appendChild(tr);
      panelRows.push({ tr: tr, cells: cells });
    });
  }

  function fitLog() { // the event log fills the window's height below the hero panel
    const log = $("log");
    log.style.maxHeight = Math.max(200, window.innerHeight - log.getBoundingClientRect().top - 16) + "px";
  }

  function updatePanel(rec) {
    for (const row of rec.heroes) {
      const slot = row[HF.slot], p = panelRows[slot], c = p.cells;
      c.level.textContent = row[HF.level];
      c.gold.textContent = row[HF.gold];
      c.kda.textContent = row[HF.kills] + "/" + row[HF.deaths] + "/" + row[HF.assists];
      c.farm.textContent = row[HF.last_hits] + "/" + row[HF.denies];
      c.items.textContent = row[HF.items].map((k) => H.items[k].replace(/_/g, " ")).join(", ");
      const dead = row[HF.respawn_s] > 0;
      p.tr.classList.toggle("dead", dead);
      const d = rec.model && rec.model[H.heroes[slot].agent_id];
      let status = dead ? "dead, back in " + Math.ceil(row[HF.respawn_s]) + " s" : "";
      if (d) {
        status += (status ? "; " : "") + (d.win_prob === null ? "" : "win " + Math.round(100 * d.win_prob) + "% ")
          + d.action;
      }
      c.status.textContent = status;
    }
    fitLog(); // the panel's height changes with the items
  }

  function selectHero(slot) {
    state.selected = slot;
    panelRows.forEach((p, k) => p.tr.classList.toggle("selected", k === slot));
    render();
  }

  // ---- the event log -----------------------------------------------------------------------------------------------
  const events = [];
  const logItems = [];
  let currentItem = null;

  function heroName(slot) { return slot === null || slot === undefined || slot < 0 ? null : H.heroes[slot].hero; }

  function describe(e) {
    const who = heroName(e.hero);
    const lane = e.lane ? " " + e.lane : "";
    switch (e.type) {
      case "kill": return [who + " killed " + heroName(e.victim), H.heroes[e.hero].team];
      case "death": return [heroName(e.victim) + " died to a " + (e.killer_type || "?").replace("_", " "),
        SIDES[1 - SIDES.indexOf(H.heroes[e.victim].team)]];
      case "last_hit": return [who + " last hit a " + e.unit_type.replace("_", " "), H.heroes[e.hero].team];
      case "deny": return [who + " denied a " + e.unit_type.replace("_", " "), H.heroes[e.hero].team];
      case "tower": case "barracks": case "shrine": case "ancient": {
        const what = e.type === "tower" ? "T" + e.tier + lane + " tower"
          : (e.type === "barracks" ? lane.trim() + " " : "") + e.type;
        return [SIDES[e.team] + " " + what + " destroyed" + (who ? " (last hit " + who + ")" : ""), SIDES[1 - e.team]];
      }
      case "buyback": return [who + " bought back", H.heroes[e.hero].team];
      case "purchase": return [who + " bought " + e.item.replace(/_/g, " "), H.heroes[e.hero].team];
      case "cast": return [who + " cast " + e.ability.replace(/_/g, " "), H.heroes[e.hero].team];
      default: return [e.type, null];
    }
  }

  function buildLog() {
    const group = {};
    GROUPS.forEach(([cls, , types]) => types.forEach((t) => { group[t] = cls; }));
    const log = $("log");
    const frag = document.createDocumentFragment();
    for (const rec of R) {
      for (const e of rec.events) {
        const [text, side] = describe(e);
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
