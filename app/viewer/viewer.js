// The replay viewer (app/viewer/page.html): plays a replay of moba/env/replay_file.py on a canvas, with the fog of
// war per team, a timeline with the win probability and the events, a panel per hero and an event log.
//
// window.viewer is the page's state and controls, for people (the console) and for the browser tests:
// viewer.seek(t), play(), pause(), setSpeed(x), setFog("all" | "radiant" | "dire"), selectHero(slot), render();
// viewer.state {t, playing, speed, fog, record, selected}; viewer.drawn: the units drawn by the last render, each
// {id, team, type, hero, x, y, px, py} (px, py: canvas pixels); viewer.toCanvas(x, y): map units to canvas pixels;
// viewer.colors: the fill colours of heroes, creeps and buildings per team; viewer.winProbability: per team, the
// [t, P(radiant wins)] points of the chart as that team's model sees it; viewer.chartPoint(t, p): where the chart
// draws that point, in the chart canvas's pixels.
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
  };
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
  let dpr = 1;
  let background = null; // the map without units, drawn once per size
  let chartBase = null; // the chart without the cursor
  let fogLayer = null; // [canvas, context]: the fog of war's darkness, drawn again every frame
  let drawn = [];
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
  function layout() {
    const avail = Math.min(window.innerHeight - 230, window.innerWidth - 440);
    size = Math.max(420, Math.min(900, Math.floor(avail)));
    dpr = window.devicePixelRatio || 1;
    for (const [c, w, h] of [[canvas, size, size], [chart, size, CHART_H]]) {
      c.style.width = w + "px";
      c.style.height = h + "px";
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    timeline.style.width = size + "px";
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

  function bar(x, y, w, frac, color) {
    ctx.fillStyle = "rgba(0,0,0,0.7)";
    ctx.fillRect(x - w / 2 - 1, y - 1, w + 2, 5);
    ctx.fillStyle = color;
    ctx.fillRect(x - w / 2, y, w * Math.max(0, Math.min(1, frac)), 3);
  }

  function drawUnit(u, x, y, ghost) {
    const type = u[F.type], team = u[F.team];
    const px = sx(x), py = sy(y);
    const alive = u[F.alive] === 1;
    const hpFrac = u[F.max_hp] > 0 ? u[F.hp] / u[F.max_hp] : 0;
    if (IS_BUILDING.has(type)) {
      const s = type === TYPE.ancient ? 18 : type === TYPE.fountain ? 16 : type === TYPE.tower ? 11 :
        type === TYPE.shrine ? 9 : 10;
      if (!alive) {
        ctx.strokeStyle = COLORS.rubble;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.moveTo(px - s / 2, py - s / 2); ctx.lineTo(px + s / 2, py + s / 2);
        ctx.moveTo(px + s / 2, py - s / 2); ctx.lineTo(px - s / 2, py + s / 2);
        ctx.stroke();
        return;
      }
      if (ghost) {
        ctx.strokeStyle = COLORS.building[team];
        ctx.lineWidth = 1.5;
        ctx.strokeRect(px - s / 2, py - s / 2, s, s);
        return;
      }
      ctx.fillStyle = COLORS.building[team];
      if (type === TYPE.fountain || type === TYPE.ancient) {
        ctx.beginPath();
        ctx.moveTo(px, py - s / 2); ctx.lineTo(px + s / 2, py); ctx.lineTo(px, py + s / 2); ctx.lineTo(px - s / 2, py);
        ctx.closePath();
        ctx.fill();
      } else {
        ctx.fillRect(px - s / 2, py - s / 2, s, s);
      }
      ctx.strokeStyle = "rgba(0,0,0,0.8)";
      ctx.lineWidth = 1;
      ctx.strokeRect(px - s / 2, py - s / 2, s, s);
      if (type !== TYPE.fountain) bar(px, py - s / 2 - 6, Math.max(16, s + 6), hpFrac, hpFrac > 0.5 ? "#7ed957" : "#f0b03c");
      return;
    }
    if (type === TYPE.hero) {
      const r = 8;
      ctx.fillStyle = COLORS.hero[team];
      ctx.beginPath();
      ctx.arc(px, py, r, 0, 2 * Math.PI);
      ctx.fill();
      ctx.strokeStyle = u[F.hero] === state.selected ? "#f3c969" : "#ffffff";
      ctx.lineWidth = u[F.hero] === state.selected ? 3 : 1.5;
      ctx.stroke();
      bar(px, py - r - 8, 28, hpFrac, team === 0 ? "#4be08a" : "#ff5b55");
      if (u[F.max_mana] > 0) {
        ctx.fillStyle = "#3d8ef0";
        ctx.fillRect(px - 14, py - r - 4, 28 * Math.max(0, Math.min(1, u[F.mana] / u[F.max_mana])), 2);
      }
      ctx.font = "11px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.fillStyle = "#ffffff";
      ctx.strokeStyle = "rgba(0,0,0,0.85)";
      ctx.lineWidth = 3;
      const label = H.heroes[u[F.hero]].hero + " lv" + u[F.level];
      ctx.strokeText(label, px, py - r - 12);
      ctx.fillText(label, px, py - r - 12);
      return;
    }
    if (type === TYPE.ward) {
      ctx.fillStyle = COLORS.ward[team];
      ctx.strokeStyle = COLORS.hero[team];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.arc(px, py, 3.5, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
      return;
    }
    ctx.fillStyle = COLORS.creep[team]; // creeps: melee a circle, ranged a triangle
    ctx.beginPath();
    if (type === TYPE.creep_ranged) {
      ctx.moveTo(px, py - 4); ctx.lineTo(px + 4, py + 3); ctx.lineTo(px - 4, py + 3); ctx.closePath();
    } else {
      ctx.arc(px, py, 3.2, 0, 2 * Math.PI);
    }
    ctx.fill();
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
      drawUnit(u, x, y, !visible);
      where.set(u[F.id], [x, y]);
      if (visible && u[F.alive]) {
        const [px, py] = toCanvas(x, y);
        drawn.push({ id: u[F.id], team: u[F.team], type: H.unit_types[u[F.type]], hero: u[F.hero], x: x, y: y,
          px: px, py: py });
      }
    }
    drawDecision(a, where);
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
    ctx.strokeStyle = "#f3c969";
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
        const what = e.type === "tower" ? "T" + e.tier + lane + " tower" : (e.type === "barracks" ? lane.trim() + " " : "")
          + e.type;
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

  const CHART_H = 96, CHART_TOP = 16, CHART_BOTTOM = 14; // the curve's band: below the event ticks
  const chartX = (t) => t / Math.max(END, 1e-9) * size; // CSS pixels
  const chartY = (p) => CHART_TOP + (1 - p) * (CHART_H - CHART_TOP - CHART_BOTTOM);

  function drawChartBase() {
    const [off, g] = offscreen(chart);
    const w = size, h = CHART_H;
    const [cx, cy] = [chartX, chartY];
    g.fillStyle = "#1b1f25";
    g.fillRect(0, 0, w, h);
    g.font = "10px system-ui, sans-serif";
    for (const e of events) { // kills and buildings as ticks along the top, in the colour of the team that scored
      const building = BUILDING_EVENTS.includes(e.type);
      if (e.type !== "kill" && !building) continue;
      g.fillStyle = COLORS.hero[building ? 1 - e.team : SIDES.indexOf(H.heroes[e.hero].team)];
      g.fillRect(cx(e.t) - 1, building ? 1 : 4, building ? 3 : 2, building ? 11 : 6);
    }
    g.strokeStyle = "#3a414b";
    g.beginPath();
    g.moveTo(0, cy(0.5)); g.lineTo(w, cy(0.5));
    g.stroke();
    g.fillStyle = "#7d8794";
    if (!HAS_WIN) {
      g.fillText("no win probability in this replay (no model plays in it)", 6, cy(0.5) - 4);
    } else {
      g.fillText("P(radiant wins): 1", 4, cy(1) + 9);
      g.fillText("0", 4, cy(0));
      WIN.forEach((series, team) => {
        if (!series.length) return;
        g.strokeStyle = COLORS.hero[team];
        g.lineWidth = 2;
        g.beginPath();
        series.forEach(([t, p], k) => (k ? g.lineTo(cx(t), cy(p)) : g.moveTo(cx(t), cy(p))));
        g.stroke();
      });
      g.fillText("as " + WIN.map((s, k) => (s.length ? SIDES[k] + "'s model" : null)).filter(Boolean).join(" and ")
        + " sees it", w - 190, cy(0));
    }
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
    const chartSeek = (ev) => seek((ev.clientX - chart.getBoundingClientRect().left) / size * END);
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
  layout();
  setFog("all");
  window.viewer = {
    header: H, records: R, colors: COLORS, state: state, events: events,
    get drawn() { return drawn; },
    seek: seek, play: play, pause: pause, setSpeed: setSpeed, setFog: setFog, selectHero: selectHero,
    render: render, toCanvas: toCanvas, recordAt: recordAt,
    winProbability: WIN, // per team: [t, P(radiant wins)] as that team's model sees it
    chartPoint: (t, p) => [Math.round(chartX(t) * dpr), Math.round(chartY(p) * dpr)], // in the chart's pixels
  };
  document.body.dataset.ready = "1";
})();
